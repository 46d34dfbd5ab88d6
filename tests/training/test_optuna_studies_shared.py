"""Worker processes sharing Optuna studies through an RDB: SQLite and a real PostgreSQL server.

Every test runs against both storages: an SQLite file, and a database on the throw-away
PostgreSQL server of ``tests/components.py`` (what workers on several machines use). Workers
are separate Python processes, each opening the study itself, as on a cluster.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from privrepro.training.optuna_studies import complete_trials, open_study, run_study

N = 8

_WORKER = textwrap.dedent("""
    import json, os, signal, sys, time
    from privrepro.training.optuna_studies import complete_trials, open_study, run_study
    url, name, n, go, out, kill_after, heartbeat = sys.argv[1:8]
    n, kill_after, heartbeat = int(n), int(kill_after), int(heartbeat)
    study = open_study(name, url, sampler="random", seed=0,  # one seed: trials still differ
                       heartbeat_interval=heartbeat or None)
    mine = []
    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        if kill_after >= 0 and len(complete_trials(study)) >= kill_after:
            os.kill(os.getpid(), signal.SIGKILL)   # die inside a RUNNING trial
        time.sleep(0.1)  # long enough that the workers' trials overlap
        mine.append(trial.number)
        return x
    while not os.path.exists(go):  # all workers start together
        time.sleep(0.01)
    run_study(study, objective, n_complete=n, poll_s=0.05)
    with open(out, "w") as fh:
        json.dump({"pid": os.getpid(), "trials": mine}, fh)
""")


@pytest.fixture(params=["sqlite", "postgresql"])
def storage_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty RDB: an SQLite file, or a new database on the throw-away PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'study.db'}"
    return str(request.getfixturevalue("postgres_url"))


def _start(
    tmp: Path, url: str, name: str, n: int, tag: str, kill_after: int = -1, heartbeat: int = 0
) -> tuple[subprocess.Popen[bytes], Path]:
    script = tmp / "worker.py"
    if not script.exists():
        script.write_text(_WORKER)
    out = tmp / f"out-{tag}.json"
    args = [url, name, str(n), str(tmp / "go"), str(out), str(kill_after), str(heartbeat)]
    proc = subprocess.Popen(
        [sys.executable, str(script), *args],
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        stderr=subprocess.PIPE,
    )
    return proc, out


def _finish(procs: list[tuple[subprocess.Popen[bytes], Path]]) -> list[dict[str, Any]]:
    reports = []
    for proc, out in procs:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
        reports.append(json.loads(out.read_text()))
    return reports


def test_three_workers_reach_exactly_n_complete(storage_url: str, tmp_path: Path) -> None:
    from optuna.trial import TrialState

    open_study("shared", storage_url, sampler="random")  # the study exists before the workers
    procs = [_start(tmp_path, storage_url, "shared", N, str(i)) for i in range(3)]
    (tmp_path / "go").touch()
    reports = _finish(procs)
    study = open_study("shared", storage_url, sampler="random")
    done = sorted(t.number for t in complete_trials(study))
    assert len(done) == N  # exactly N COMPLETE in total, not N per worker, not more
    returned = [n for r in reports for n in r["trials"]]
    # every objective that returned became one COMPLETE trial, and none ran in two workers
    assert sorted(returned) == done and len(set(returned)) == len(returned)
    assert sum(bool(r["trials"]) for r in reports) >= 2  # the work was shared
    # the workers share one seed, yet no two trials tried the same point
    assert len({t.params["x"] for t in complete_trials(study)}) == N
    assert not study.get_trials(states=(TrialState.RUNNING,))
    assert not study.get_trials(states=(TrialState.FAIL,))  # no live trial reaped as stale


def test_worker_killed_mid_trial_is_reaped_and_the_study_resumes(
    storage_url: str, tmp_path: Path
) -> None:
    from optuna.trial import TrialState

    proc, _ = _start(tmp_path, storage_url, "killed", N, "k", kill_after=3)
    (tmp_path / "go").touch()
    proc.communicate(timeout=180)
    assert proc.returncode == -signal.SIGKILL
    study = open_study("killed", storage_url, sampler="random")
    assert len(complete_trials(study)) == 3
    assert len(study.get_trials(states=(TrialState.RUNNING,))) == 1  # left by the dead worker

    survivors = [_start(tmp_path, storage_url, "killed", N, f"s{i}") for i in range(2)]
    _finish(survivors)
    study = open_study("killed", storage_url, sampler="random")
    assert len(complete_trials(study)) == N
    failed = study.get_trials(states=(TrialState.FAIL,))
    assert len(failed) == 1 and "marked FAIL on resume" in failed[0].system_attrs["fail_reason"]
    assert not study.get_trials(states=(TrialState.RUNNING,))


def test_two_figures_studies_in_one_database_stay_apart(storage_url: str, tmp_path: Path) -> None:
    """Two studies (two figures' tuning) optimised at once in one database: each ends with its
    own N trials, and no trial of one is seen by the other."""
    procs = [
        _start(tmp_path, storage_url, name, n, f"{name}-{i}")
        for name, n in (("fig3", N), ("fig5", N // 2))
        for i in range(2)
    ]
    (tmp_path / "go").touch()
    reports = _finish(procs)
    from optuna.trial import TrialState

    for name, n, mine in (("fig3", N, reports[:2]), ("fig5", N // 2, reports[2:])):
        study = open_study(name, storage_url, sampler="random")
        done = sorted(t.number for t in complete_trials(study))
        assert len(done) == n
        assert sorted(k for r in mine for k in r["trials"]) == done  # its own workers' trials
        # a trial started by both workers when one was missing is PRUNED (run_study), no other
        assert {t.state for t in study.trials} <= {TrialState.COMPLETE, TrialState.PRUNED}
        assert [t.number for t in study.trials] == list(range(len(study.trials)))
    ids = [
        {t._trial_id for t in open_study(s, storage_url, sampler="random").trials}
        for s in ("fig3", "fig5")
    ]
    assert not ids[0] & ids[1]


def test_stopped_heartbeat_of_another_host_fails_its_trial(
    postgres_url: str, tmp_path: Path
) -> None:
    """A worker on another machine cannot be checked by its process id: on PostgreSQL with a
    heartbeat, its RUNNING trial is failed once the heartbeat stops (Optuna's fail_stale_trials),
    and the study resumes to exactly N."""
    from optuna.trial import TrialState

    proc, _ = _start(tmp_path, postgres_url, "remote", N, "r", kill_after=2, heartbeat=1)
    (tmp_path / "go").touch()
    proc.communicate(timeout=180)
    assert proc.returncode == -signal.SIGKILL
    study = open_study("remote", postgres_url, sampler="random", heartbeat_interval=1)
    (running,) = study.get_trials(states=(TrialState.RUNNING,))
    # as if its worker ran on another host: the process-id check cannot see it
    study._storage.set_trial_system_attr(running._trial_id, "privrepro_worker", "node-b:1")
    time.sleep(4 * 1 + 1.5)  # grace period = 4 heartbeats
    run_study(study, lambda t: t.suggest_float("x", 0, 1), n_complete=N, poll_s=0.05)
    assert len(complete_trials(study)) == N
    (failed,) = study.get_trials(states=(TrialState.FAIL,))
    assert failed.number == running.number
    assert not study.get_trials(states=(TrialState.RUNNING,))
