"""Two worker processes sharing one Optuna study through an RDB URL (``sqlite:///…``): the study
ends with exactly ``n_complete`` COMPLETE trials, none lost, none counted twice."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path
from typing import Any

import pytest

from privrepro.training.tuning import complete_trials, open_study, run_study

N = 8


def _worker(url: str, barrier: Any, out: Any) -> None:
    """Open the shared study in this process (own engine), start with the other worker, and
    report the trial numbers whose objective returned here."""
    study = open_study("shared", url, sampler="random", seed=os.getpid())
    mine: list[int] = []

    def objective(trial: Any) -> float:
        x = trial.suggest_float("x", 0, 1)
        time.sleep(0.1)  # long enough that the two workers' trials overlap
        mine.append(trial.number)
        return x

    barrier.wait(timeout=60)
    run_study(study, objective, n_complete=N, poll_s=0.05)
    out.put((os.getpid(), mine))


@pytest.mark.skipif("fork" not in mp.get_all_start_methods(), reason="needs the fork start method")
def test_two_workers_reach_exactly_n_complete(tmp_path: Path) -> None:
    from optuna.trial import TrialState

    url = f"sqlite:///{tmp_path / 'study.db'}"
    open_study("shared", url, sampler="random")  # the study exists before the workers start
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(2)
    out = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, barrier, out)) for _ in range(2)]
    for p in procs:
        p.start()
    reports = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    study = open_study("shared", url, sampler="random")
    done = sorted(t.number for t in complete_trials(study))
    assert len(done) == N  # exactly N COMPLETE in total, not N per worker, not more
    returned = [n for _, mine in reports for n in mine]
    # every objective that returned became one COMPLETE trial, and none ran in both workers
    assert sorted(returned) == done and len(set(returned)) == len(returned)
    assert all(mine for _, mine in reports)  # both workers contributed trials
    assert not study.get_trials(states=(TrialState.RUNNING,))
    assert not study.get_trials(states=(TrialState.FAIL,))  # no live trial reaped as stale
