"""Optuna studies: Table A2 space, transfer rule, exact resume after SIGKILL, stale trials."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from privrepro.config import ConfigError
from privrepro.training.dpsgd import DPSGDHyper, plan_steps
from privrepro.training.optuna_studies import (
    SearchSpace,
    complete_trials,
    open_study,
    run_study,
    suggest_hyper,
    transfer_hyper,
)


def _objective(trial) -> float:
    hp = suggest_hyper(trial, SearchSpace(), n_tune=3500, epsilon=1.0, delta=1e-5)
    return -abs(math.log10(hp.lr) + 3) - abs(math.log(hp.clip))


def test_suggestions_lie_in_table_a2():
    study = open_study("a2", "sqlite://", sampler="random", seed=0)  # in-memory RDB
    for _ in range(15):
        t = study.ask()
        hp = suggest_hyper(t, SearchSpace(), n_tune=3500, epsilon=1.0, delta=1e-5)
        assert 1e-7 <= hp.lr <= 1e-2 and 0.2 <= hp.clip <= 10 and 10 <= hp.batch_size <= 3500
        assert hp.epochs == 40
        study.tell(t, 0.0)


def test_transfer_rule_keeps_sample_rate_and_scales_lr():
    # cl paper, App. F: batch ×factor, lr ×√factor, clip and epochs unchanged.
    hp = DPSGDHyper(epochs=40, batch_size=350, lr=1e-3, clip=2.0, epsilon=1.0)
    out = transfer_hyper(hp, 3500, 5000)
    assert out.batch_size == pytest.approx(500) and out.clip == 2.0 and out.epochs == 40
    assert out.lr == pytest.approx(1e-3 * math.sqrt(5000 / 3500), rel=1e-12)
    assert plan_steps(3500, hp) == plan_steps(5000, out)  # same q and steps, hence same σ
    with pytest.raises(ConfigError):
        transfer_hyper(hp, 0, 10)


def test_gp_sampler_study_runs_to_exact_count(tmp_path: Path):
    study = open_study("gp", tmp_path / "gp.log", sampler="gp", seed=0, n_startup_trials=3)
    run_study(study, _objective, n_complete=5)
    assert len(complete_trials(study)) == 5
    # reopening and asking for 5 again runs nothing
    again = open_study("gp", tmp_path / "gp.log", sampler="gp", seed=0, n_startup_trials=3)
    run_study(again, _objective, n_complete=5)
    assert len(again.trials) == 5


_WORKER = textwrap.dedent("""
    import os, signal, sys
    from privrepro.training.optuna_studies import open_study, run_study
    path, k = sys.argv[1], int(sys.argv[2])
    study = open_study("kill", path, sampler="random", seed=1)
    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        from privrepro.training.optuna_studies import complete_trials
        if len(complete_trials(study)) >= k:
            os.kill(os.getpid(), signal.SIGKILL)   # die inside a RUNNING trial
        return x
    run_study(study, objective, n_complete=20)
""")


def test_study_killed_after_k_trials_resumes_to_exactly_20(tmp_path: Path):
    log = tmp_path / "studies" / "kill.log"
    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    proc = subprocess.run(
        [sys.executable, str(script), str(log), "7"],
        capture_output=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert proc.returncode == -signal.SIGKILL
    study = open_study("kill", log, sampler="random", seed=1)
    from optuna.trial import TrialState

    assert len(complete_trials(study)) == 7
    assert len(study.get_trials(states=(TrialState.RUNNING,))) == 1  # left by the killed worker
    run_study(study, lambda t: t.suggest_float("x", 0, 1), n_complete=20)
    assert len(complete_trials(study)) == 20
    failed = study.get_trials(states=(TrialState.FAIL,))
    assert len(failed) == 1 and "marked FAIL on resume" in failed[0].system_attrs["fail_reason"]
    assert not study.get_trials(states=(TrialState.RUNNING,))


def test_failing_objective_is_retried_not_counted(tmp_path: Path):
    calls = {"n": 0}

    def flaky(trial):
        calls["n"] += 1
        x = trial.suggest_float("x", 0, 1)
        if calls["n"] % 3 == 0:
            raise RuntimeError("diverged")
        return x

    study = open_study("flaky", f"sqlite:///{tmp_path / 's.db'}", sampler="random")
    run_study(study, flaky, n_complete=6)
    assert len(complete_trials(study)) == 6 and calls["n"] == 8


def test_loops_run_the_trials_and_a_capped_one_ends_the_study(tmp_path: Path):
    """The loops run the trials this call starts (total = n_complete); under the rehearsal's
    cap (2 items per loop) the study returns after 2 of its 5 trials."""
    from privrepro.loops import Loops
    from privrepro.rehearsal.cap import RehearsalCap

    cap = RehearsalCap(items=2)
    study = open_study("capped", "sqlite://", sampler="random", seed=0)
    run_study(study, _objective, n_complete=5, loops=cap)
    assert len(complete_trials(study)) == 2
    assert (cap.records[0].desc, cap.records[0].total, cap.records[0].skipped) == ("trials", 5, 3)
    # loops that cut nothing run the study to its count
    seen = []

    class Totals(Loops):
        def __call__(self, items, desc, total=None):  # type: ignore[no-untyped-def]
            seen.append(total)
            return items

    uncapped = open_study("full", "sqlite://", sampler="random", seed=0)
    run_study(uncapped, _objective, n_complete=4, loops=Totals())
    assert len(complete_trials(uncapped)) == 4 and seen == [4]


def test_a_progress_loop_over_trials_ends_at_n_of_n_whoever_ran_them() -> None:
    """A bar counts an item once the next is asked for: it once stopped at ``2/3 · done``."""
    import io

    from privrepro.loops import Loops
    from privrepro.progress import LineProgress

    bars: list[LineProgress] = []

    class Bars(Loops):
        def __call__(self, items: Any, desc: str, total: int | None = None) -> Any:
            bars.append(LineProgress(items, desc=desc, total=total, file=io.StringIO()))
            return bars[-1]

    progress = Bars()

    study = open_study("bars", "sqlite://", sampler="random", seed=0)
    other = study.ask()  # a trial another worker ran
    study.tell(other, 0.5)
    run_study(study, _objective, n_complete=3, loops=progress)
    assert len(complete_trials(study)) == 3
    run_study(study, _objective, n_complete=3, loops=progress)  # resumed: nothing to run
    assert len(study.trials) == 3
    assert [(b.n, b.total) for b in bars] == [(3, 3), (3, 3)]


def _two_workers(storage: str | Path, sampler: str, n: int) -> dict[int, float]:
    """Two workers on one study with the same seed, each asking before the other tells."""
    workers = [
        open_study("two", storage, sampler=sampler, seed=0, n_startup_trials=n) for _ in "ab"
    ]
    xs: dict[int, float] = {}
    for _ in range(n // 2):
        trials = [w.ask() for w in workers]
        for w, t in zip(workers, trials, strict=True):
            xs[t.number] = t.suggest_float("x", 0.0, 1.0)
            w.tell(t, -((xs[t.number] - 0.3) ** 2))
    return xs


@pytest.mark.parametrize("sampler", ["random", "tpe", "gp"])
@pytest.mark.parametrize("kind", ["sqlite", "journal"])
def test_two_workers_with_one_seed_propose_distinct_start_up_points(
    tmp_path: Path, sampler: str, kind: str
) -> None:
    # Two samplers seeded alike once drew the same stream: trials 0/1, 2/3, ... coincided.
    n = 6
    storage = f"sqlite:///{tmp_path / 's.db'}" if kind == "sqlite" else tmp_path / "s.log"
    xs = _two_workers(storage, sampler, n)
    assert sorted(xs) == list(range(n))
    assert len({round(x, 12) for x in xs.values()}) == n  # no start-up point proposed twice
    # reproducible from the seed: a second study, and one worker alone, draw the same points
    again = _two_workers(tmp_path / "again.log", sampler, n)
    alone = open_study("alone", "sqlite://", sampler=sampler, seed=0, n_startup_trials=n)
    for _ in range(n):
        t = alone.ask()
        assert t.suggest_float("x", 0.0, 1.0) == pytest.approx(xs[t.number], abs=1e-15)
        assert again[t.number] == pytest.approx(xs[t.number], abs=1e-15)
        alone.tell(t, 0.0)
    # the seed matters: another seed draws other points
    other = open_study("other", "sqlite://", sampler=sampler, seed=1, n_startup_trials=n)
    assert other.ask().suggest_float("x", 0.0, 1.0) != pytest.approx(xs[0], abs=1e-9)
