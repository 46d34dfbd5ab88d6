"""Progress bars: shown with an ETA on a terminal, silent under CI and when switched off."""

from __future__ import annotations

import io
import time

import pytest

from privrepro.progress import progress_bar, progress_disabled


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _draw(**kwargs: object) -> str:
    out = _Terminal()
    for _ in progress_bar(range(50), desc="units", file=out, mininterval=0, **kwargs):  # type: ignore[arg-type]
        pass
    return out.getvalue()


def test_bar_on_a_terminal_shows_count_and_eta(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    text = _draw()
    assert "units" in text and "50/50" in text and "<" in text  # elapsed<remaining (ETA)
    assert progress_disabled() is None  # tqdm then tests the stream for a terminal


def test_bar_is_silent_under_ci_and_when_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert _draw() == "" and progress_disabled(True) is True
    monkeypatch.delenv("CI")
    assert _draw(enabled=False) == ""


def test_study_trials_bar_counts_complete_trials(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_study's bar reaches n_complete (drawn to a terminal-like stderr)."""
    import sys

    from privrepro.training.optuna_studies import open_study, run_study

    monkeypatch.delenv("CI", raising=False)
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    study = open_study("bar", "sqlite://", sampler="random")

    def objective(trial: object) -> float:
        time.sleep(0.15)  # longer than tqdm's refresh interval (0.1 s), so each trial is drawn
        return trial.suggest_float("x", 0, 1)  # type: ignore[attr-defined]

    run_study(study, objective, n_complete=4)
    assert "trials bar" in err.getvalue() and "4/4" in err.getvalue()
