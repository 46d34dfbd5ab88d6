"""Hydra's launchers for real: the submitit launcher (the SLURM code path, with local processes)
running a multirun into one shared store, killed and resubmitted; and ``conf/hydra/launcher/
slurm.yaml`` checked against the plugin's schema and submitit's sbatch parameters."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TAGS = ("a", "b", "c")


def _env(conf_root: Path, marker: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PRIVREPRO_CONF": str(conf_root),
        "PRIVREPRO_TEST_MARKER": str(marker),
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "OMP_NUM_THREADS": "1",
    }


def _multirun(tmp: Path, n_units: int, sleep_s: float) -> list[str]:
    """One job per tag through ``hydra/launcher=submitit_local``, all into one store."""
    return [
        sys.executable,
        "-m",
        "privrepro.runner.cli",
        "-m",
        "hydra/launcher=submitit_local",
        "hydra.launcher.timeout_min=10",
        "experiment=test/noise",
        f"params.tag={','.join(TAGS)}",
        f"params.n_units={n_units}",
        f"params.sleep_s={sleep_s}",
        f"paths.experiments_dir={tmp / 'exp'}",
        f"paths.results_dir={tmp / 'res'}",
        f"paths.plots_dir={tmp / 'plots'}",
        "progress=false",
        "plot=false",
    ]


def _units(store: Path) -> list[Path]:
    if not store.is_dir():
        return []
    # unit folders: not the store's own files (last_run.json) nor hidden build folders and locks
    return [p for p in store.iterdir() if p.is_dir() and not p.name.startswith(".")]


@pytest.mark.slow
def test_submitit_multirun_fills_one_store_and_resumes_after_kill(
    tmp_path: Path, conf_root: Path
) -> None:
    n_units, total = 4, 4 * len(TAGS)
    marker = tmp_path / "computed.txt"
    store = tmp_path / "exp" / "test" / "noise"
    env = _env(conf_root, marker)
    proc = subprocess.Popen(
        _multirun(tmp_path, n_units, 0.5),
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # the launcher and its job processes: one group to kill
    )
    try:
        deadline = time.time() + 180
        while time.time() < deadline and proc.poll() is None and len(_units(store)) < 3:
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
    time.sleep(0.5)  # the killed group's processes are gone
    before = {p.name for p in _units(store)}
    assert 3 <= len(before) < total, "the kill must land mid-sweep"
    for unit in before:  # every unit folder present is complete
        assert (store / unit / "env.json").is_file() and (store / unit / "rows.csv").is_file()
    computed_before = marker.read_text().split()
    # the jobs' folders hold submitit's pickles and logs: the jobs really ran through submitit
    assert list((tmp_path / "exp" / "_sweeps").rglob("*_submitted.pkl"))

    out = subprocess.run(
        _multirun(tmp_path, n_units, 0.5), env=env, cwd=REPO, capture_output=True, timeout=300
    )
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-3000:]
    after = marker.read_text().split()[len(computed_before) :]
    assert len(after) == total - len(before)  # complete units were not recomputed
    assert len(_units(store)) == total
    table = pd.read_csv(tmp_path / "res" / "test" / "noise.csv")
    assert sorted(table["tag"].unique()) == list(TAGS)
    assert table["unit_id"].nunique() == total and len(table) == total * 1000
    assert table.groupby("tag")["i"].nunique().tolist() == [n_units] * len(TAGS)


def test_slurm_launcher_config_is_valid_for_the_plugin_and_submitit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hydra/launcher=slurm`` composes against the plugin's SlurmQueueConf, instantiates the
    plugin's SlurmLauncher, and every parameter is one submitit's SLURM executor accepts (an
    unknown one raises there); the sbatch script it would submit carries them."""
    import submitit
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.utils import instantiate
    from hydra_plugins.hydra_submitit_launcher.config import BaseQueueConf, SlurmQueueConf
    from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher
    from omegaconf import DictConfig, OmegaConf

    def launcher_config(*extra: str) -> DictConfig:
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
            cfg = hydra_compose(
                "config",
                overrides=["experiment=cl/fig2", "hydra/launcher=slurm", *extra],
                return_hydra_config=True,
            )
        return cfg.hydra.launcher

    launcher_cfg = launcher_config("hydra.launcher.partition=gpu")
    # slurm.yaml was merged into the plugin's structured schema, which checks keys and types
    assert OmegaConf.get_type(launcher_cfg).__name__ == SlurmQueueConf.__name__
    assert set(launcher_cfg.keys()) == set(OmegaConf.structured(SlurmQueueConf).keys())
    with pytest.raises(Exception, match="cpus_per_task"):
        launcher_config("hydra.launcher.cpus_per_task=eight")  # wrong type: refused
    with pytest.raises(Exception, match="cpus_per_taks"):
        launcher_config("hydra.launcher.cpus_per_taks=8")  # unknown key: refused
    launcher = instantiate(launcher_cfg, submitit_folder=str(tmp_path / "%j"), name="privrepro")
    # (Hydra's plugin discovery imports the plugin module a second time: compare by name)
    assert type(launcher).__qualname__ == SlurmLauncher.__qualname__
    assert type(launcher).__module__ == SlurmLauncher.__module__

    # submitit's SLURM executor looks for srun on PATH; nothing is submitted here, so a stub
    # that refuses to run stands in for it
    stub = tmp_path / "bin" / "srun"
    stub.parent.mkdir()
    stub.write_text("#!/bin/sh\necho 'not a SLURM cluster' >&2\nexit 1\n")
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{stub.parent}{os.pathsep}{os.environ['PATH']}")
    # the mapping SlurmLauncher.launch applies before submitting
    params = dict(launcher.params)
    executor = submitit.AutoExecutor(
        cluster="slurm",
        folder=params.pop("submitit_folder"),
        slurm_max_num_timeout=params.pop("max_num_timeout"),
    )
    base = set(OmegaConf.structured(BaseQueueConf).keys())
    executor.update_parameters(**{k if k in base else f"slurm_{k}": v for k, v in params.items()})
    script = executor._executor._make_submission_file_text("python -c pass", "0")
    for line in (
        "#SBATCH --partition=gpu",
        "#SBATCH --gpus-per-node=1",
        "#SBATCH --cpus-per-task=8",
        "#SBATCH --mem=64GB",
        "#SBATCH --time=240",
    ):
        assert line in script
