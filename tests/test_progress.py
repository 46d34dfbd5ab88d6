"""Progress: a bar with an ETA on a terminal, lines at an interval elsewhere, silent under CI and
when switched off."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

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


class _Log(io.StringIO):
    """A file, not a terminal: what stderr is under ``make figures > log 2>&1`` or SLURM."""

    def isatty(self) -> bool:
        return False


def test_off_a_terminal_a_loop_writes_lines_at_the_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What, how far, rate and ETA, one line per interval; a last ``done`` line."""
    from privrepro.progress import LineProgress

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("PRIVREPRO_PROGRESS_INTERVAL", "0.05")
    out = _Log()
    bar = progress_bar(range(6), desc="trials", file=out, unit="trial")
    assert isinstance(bar, LineProgress)
    for _ in bar:
        time.sleep(0.06)  # each item longer than the interval: one line per item
    lines = out.getvalue().splitlines()
    assert len(lines) == 6  # items 1..5, then the closing line (item 6 ends the loop)
    assert lines[0].startswith("progress: trials: 1/6 trials (17%) · ")
    import re

    # rate (about 16 trials/s: 60 ms an item), elapsed, ETA of the 5 items left
    assert re.search(r"· [\d.]+ (trial/s|s/trial) · 0:00 elapsed · ETA 0:\d\d$", lines[0]), lines[0]
    assert lines[-1].startswith("progress: trials: 6/6 trials (100%)") and lines[-1].endswith(
        "done"
    )


def test_lines_name_the_enclosing_loops_and_respect_the_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("PRIVREPRO_PROGRESS_INTERVAL", "3600")
    out = _Log()
    for _ in progress_bar(range(1000), desc="fast", file=out):
        pass
    assert out.getvalue() == ""  # a loop shorter than the interval says nothing
    monkeypatch.setenv("PRIVREPRO_PROGRESS_INTERVAL", "0")
    for _ in progress_bar(range(2), desc="units", file=out, unit="unit"):
        for _ in progress_bar(range(3), desc="dp-sgd steps", file=out):
            pass
    text = out.getvalue()
    assert "progress: units › dp-sgd steps: 1/3 (33%)" in text
    assert "progress: units: 1/2 units (50%)" in text
    import numpy as np

    grid = np.linspace(0.0, 1.0, 4)  # any iterable: an array has no truth value
    assert [float(x) for x in progress_bar(grid, desc="grid", file=out)] == list(grid)
    monkeypatch.setenv("CI", "true")
    out = _Log()
    for _ in progress_bar(range(3), desc="ci", file=out):
        pass
    assert out.getvalue() == ""  # silent under CI


@pytest.mark.slow
def test_a_run_off_a_terminal_prints_progress_lines_and_logs_library_warnings(
    tmp_path: Path,
) -> None:
    """``privrepro`` with its output in files: progress lines on the console and in the unit's
    log; Optuna's ExperimentalWarning (the GP sampler) in the unit's log, not on the console."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("CI",) and not k.startswith("PRIVREPRO_")
    }
    env.update(PRIVREPRO_PROGRESS_INTERVAL="0", OMP_NUM_THREADS="1", MPLBACKEND="Agg")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "privrepro.runner.cli",
            "experiment=cl/fig3_peft",
            "profile=tiny",
            "params.tuning.enabled=true",
            "params.tuning.n_trials=2",
            f"paths.experiments_dir={tmp_path / 'exp'}",
            f"paths.results_dir={tmp_path / 'res'}",
            f"paths.plots_dir={tmp_path / 'plots'}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [line for line in out.stderr.splitlines() if line.startswith("progress: ")]
    assert any(line.startswith("progress: cl/fig3_peft: 1/3 units (33%)") for line in lines)
    assert any("› trials › dp-sgd steps: " in line and "ETA" in line for line in lines)
    assert "Warning" not in out.stderr, out.stderr[-2000:]  # nothing but progress lines
    logs = "".join(p.read_text() for p in (tmp_path / "exp" / "cl").rglob("log.txt"))
    assert "privrepro.progress: cl/fig3_peft › trials › dp-sgd steps:" in logs
    assert "ExperimentalWarning: GPSampler is experimental" in logs
