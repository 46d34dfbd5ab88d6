"""Hydra's habits: one folder per sweep holding the multirun config and the overrides as typed,
the command recorded by every unit and table, and every study storage opened before any job."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from privrepro.runner.sweeps import sweep_label


def _privrepro(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIVREPRO_")}
    return subprocess.run(
        [sys.executable, "-m", "privrepro.runner.cli", *args],
        cwd=tmp,
        env={**env, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=600,
    )


def _paths(tmp: Path) -> list[str]:
    return [
        f"paths.experiments_dir={tmp / 'exp'}",
        f"paths.results_dir={tmp / 'res'}",
        f"paths.plots_dir={tmp / 'plots'}",
        "progress=false",
    ]


def test_sweep_label_names_the_experiments_typed() -> None:
    assert sweep_label(["-m", "experiment=cl/fig2", "seed=0,1"]) == "cl-fig2"
    assert sweep_label(["experiment=cl/fig2,pb/fig6"]) == "cl-fig2+pb-fig6"
    assert sweep_label(["seed=0,1"]) == "sweep"


@pytest.mark.slow
def test_each_sweep_gets_its_own_folder_with_the_overrides_as_typed(tmp_path: Path) -> None:
    """Two sweeps of one figure, one second apart or in the same second: two folders, neither
    rewritten by the other; the units and the table record the command that made them."""
    typed = [["-m", "experiment=pb/fig2", "profile=tiny", f"seed={s}"] for s in ("0,1", "2")]
    for args in typed:
        out = _privrepro([*args, *_paths(tmp_path)], tmp_path)
        assert out.returncode == 0, out.stderr[-3000:]
    sweeps = sorted((tmp_path / "exp" / "_sweeps").iterdir())
    assert len(sweeps) == 2, sweeps  # a later sweep does not write into the earlier one's folder
    assert all(s.name.endswith(("_pb-fig2", "_pb-fig2-2")) for s in sweeps)
    by_jobs = {len([p for p in s.iterdir() if p.is_dir()]): s for s in sweeps}
    first, second = by_jobs[2], by_jobs[1]  # seed=0,1 made two jobs, seed=2 one
    for sweep, args in ((first, typed[0]), (second, typed[1])):
        assert (sweep / "multirun.yaml").is_file()  # Hydra's multirun config
        recorded = yaml.safe_load((sweep / "overrides.yaml").read_text())
        assert recorded[:3] == args[1:]  # as typed: seed=0,1 stays a sweep
        assert (
            (sweep / "command.txt")
            .read_text()
            .strip()
            .startswith("privrepro -m experiment=pb/fig2 profile=tiny seed=")
        )
    job1 = yaml.safe_load((first / "1" / "overrides.yaml").read_text())
    assert "seed=1" in job1 and "seed=0,1" not in job1  # the job's own overrides
    assert (first / "1" / "result.txt").read_text().startswith("pb/fig2: ")

    meta = json.loads((tmp_path / "res" / "pb" / "fig2.meta.json").read_text())
    assert meta["command"].startswith("privrepro -m experiment=pb/fig2 profile=tiny seed=")
    assert meta["sweep"]["dir"] in {str(s) for s in sweeps}
    envs = [
        json.loads(p.read_text()) for p in (tmp_path / "exp" / "pb" / "fig2").glob("*/env.json")
    ]
    assert envs and all(e["command"].startswith("privrepro -m experiment=pb/fig2") for e in envs)
    seeds = {o for e in envs for o in e["overrides"] if o.startswith("seed=")}
    assert seeds == {"seed=0", "seed=1", "seed=2"}  # each unit knows the job that made it


def test_a_study_storage_that_cannot_be_opened_stops_the_sweep_before_any_job(
    tmp_path: Path,
) -> None:
    """One line, exit status 2, no job folder and no unit: the URL is opened in the launching
    process (port 1 refuses every connection)."""
    url = "postgresql://nobody@127.0.0.1:1/none"
    args = [
        "-m",
        "experiment=cl/fig3_peft",
        "profile=tiny",
        "params.tuning.enabled=true",
        f"params.tuning.storage={url}",
        "seed=0,1",
    ]
    out = _privrepro([*args, *_paths(tmp_path)], tmp_path)
    assert out.returncode == 2, out.stderr[-3000:]
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"privrepro: configuration error: params.tuning.storage = '{url}'")
    assert "cannot be opened" in lines[0] and "before any job started" in lines[0]
    sweeps = tmp_path / "exp" / "_sweeps"
    assert not sweeps.exists() or not any(sweeps.iterdir())
    assert not (tmp_path / "exp" / "cl").exists()


def test_a_single_run_checks_its_storage_and_records_its_command(tmp_path: Path) -> None:
    from privrepro.config import ConfigError
    from privrepro.runner.run import run_experiment

    paths = _paths(tmp_path)
    bad = "sqlite:////nonexistent-folder/deeper/studies.db"
    with pytest.raises(ConfigError, match=r"params\.tuning\.storage.*cannot be opened"):
        run_experiment("cl/fig3_peft", ["profile=tiny", f"params.tuning.storage={bad}", *paths])
    assert not (tmp_path / "exp" / "cl").exists()  # nothing computed

    run_experiment("pb/fig2", ["profile=tiny", "seed=4", *paths])
    meta = json.loads((tmp_path / "res" / "pb" / "fig2.meta.json").read_text())
    assert "experiment=pb/fig2" in meta["overrides"] and "seed=4" in meta["overrides"]
    assert meta["command"] and "sweep" not in meta


def test_one_multirun_runs_several_experiments(tmp_path: Path) -> None:
    """``-m experiment=a,b``: the params file is chosen per job (it once failed to interpolate
    ``${experiment}`` in the launching process, where no experiment is chosen yet)."""
    args = ["-m", "experiment=pb/fig1,pb/fig2", "profile=tiny", "plot=false", "threads=1"]
    out = _privrepro([*args, *_paths(tmp_path)], tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    (sweep,) = (tmp_path / "exp" / "_sweeps").iterdir()
    assert sweep.name.endswith("_pb-fig1+pb-fig2")
    # each job's result line names its job (a parallel launcher interleaves them)
    assert "job 0: pb/fig1: " in out.stdout and "job 1: pb/fig2: " in out.stdout
    for job, figure in enumerate(("fig1", "fig2")):
        assert (sweep / str(job) / "result.txt").read_text().startswith(f"pb/{figure}: ")
        meta = json.loads((tmp_path / "res" / "pb" / f"{figure}.meta.json").read_text())
        assert meta["profile"] == "tiny"  # each job composed its own experiment and profile
