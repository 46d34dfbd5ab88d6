"""The runner end to end: resume after SIGKILL, concurrent sweep workers, determinism, replot."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from recipes_for_tests import scratch_paths

from privrepro.runner.plan import compose
from privrepro.runner.run import run_config, run_experiment
from privrepro.store.identity import UNIT_ID

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _units(folder: Path) -> list[Path]:
    """The unit folders of a figure's store (named by their 16-hex-digit hash)."""
    return sorted(p for p in folder.glob("*") if UNIT_ID.match(p.name)) if folder.exists() else []


def _paths(tmp: Path) -> list[str]:
    return scratch_paths(tmp)


def test_figure_produces_table_meta_summary_and_plot(tmp_path: Path, conf_root: Path) -> None:
    run = run_experiment("test/noise", _paths(tmp_path), conf=conf_root)
    assert run.computed == 4 and run.reused == 0
    table = pd.read_csv(tmp_path / "res" / "test" / "noise.csv")
    assert list(table.columns[:5]) == ["paper", "figure", "profile", "seed", "unit_id"]
    assert len(table) == 4 * 1000 and set(table["profile"]) == {"smoke"}
    assert (tmp_path / "res" / "test" / "noise.parquet").is_file()
    assert (tmp_path / "plots" / "test" / "noise.png").stat().st_size > 1000
    assert (tmp_path / "plots" / "test" / "noise.pdf").is_file()
    meta = (tmp_path / "res" / "test" / "noise.meta.json").read_text()
    for key in ("git_sha", "wall_time_s", "device", "versions", "params", "profile"):
        assert f'"{key}"' in meta
    units = _units(tmp_path / "exp" / "test" / "noise")
    assert len(units) == 4
    assert {p.name for p in units[0].iterdir()} >= {
        "config.json",
        "rows.csv",
        "log.txt",
        "env.json",
        "manifest.json",
    }


def test_rerun_reuses_units_and_force_recomputes(tmp_path: Path, conf_root: Path) -> None:
    first = run_experiment("test/noise", _paths(tmp_path), conf=conf_root)
    again = run_experiment("test/noise", _paths(tmp_path), conf=conf_root)
    assert (again.computed, again.reused) == (0, 4)
    pd.testing.assert_frame_equal(first.table, again.table)
    forced = run_experiment("test/noise", [*_paths(tmp_path), "force=true"], conf=conf_root)
    assert (forced.computed, forced.reused) == (4, 0)


def test_same_seed_is_bit_identical_and_seeds_differ(tmp_path: Path, conf_root: Path) -> None:
    a = run_experiment("test/noise", [*_paths(tmp_path / "a"), "seed=0"], conf=conf_root).table
    b = run_experiment("test/noise", [*_paths(tmp_path / "b"), "seed=0"], conf=conf_root).table
    c = run_experiment("test/noise", [*_paths(tmp_path / "c"), "seed=1"], conf=conf_root).table
    assert np.array_equal(a["x"].to_numpy(), b["x"].to_numpy())
    assert not np.allclose(a["x"].to_numpy(), c["x"].to_numpy())
    # units draw from their own streams: no two units share noise
    per_unit = [g["x"].to_numpy() for _, g in a.groupby("i")]
    assert not np.allclose(per_unit[0], per_unit[1])


def test_profile_block_and_command_line_override(tmp_path: Path, conf_root: Path) -> None:
    tiny = run_experiment("test/noise", [*_paths(tmp_path), "profile=tiny"], conf=conf_root)
    assert len(tiny.table) == 4 * 100  # profiles.tiny sets draws=100
    cli = run_experiment(
        "test/noise", [*_paths(tmp_path), "profile=tiny", "params.draws=7"], conf=conf_root
    )
    assert len(cli.table) == 4 * 7  # the command line wins over the profile block


def _sweep_cmd(tmp: Path, conf_root: Path, n_units: int, sleep_s: float) -> list[str]:
    return [
        sys.executable,
        "-m",
        "privrepro.runner.all",
        "--target",
        "test/noise",
        "--",
        *_paths(tmp),
        f"params.n_units={n_units}",
        f"params.sleep_s={sleep_s}",
    ]


def _env(conf_root: Path, marker: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PRIVREPRO_CONF": str(conf_root),
        "PRIVREPRO_TEST_MARKER": str(marker),
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }


def test_sweep_killed_with_sigkill_resumes_without_redoing_units(
    tmp_path: Path, conf_root: Path
) -> None:
    marker = tmp_path / "computed.txt"
    store = tmp_path / "exp" / "test" / "noise"
    env = _env(conf_root, marker)
    proc = subprocess.Popen(
        _sweep_cmd(tmp_path, conf_root, 8, 0.4),
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 90
    while time.time() < deadline and proc.poll() is None:  # until some, not all, units are done
        if len(_units(store)) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    finished_before = {p.name for p in _units(store)}
    assert 3 <= len(finished_before) < 8
    for unit in finished_before:  # every unit folder present is complete and sealed
        assert (store / unit / "manifest.json").is_file() and (store / unit / "rows.csv").is_file()
    computed_before = marker.read_text().split()

    rerun = _sweep_cmd(tmp_path, conf_root, 8, 0.4)  # the same sweep, started again
    out = subprocess.run(rerun, env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    computed_after = marker.read_text().split()[len(computed_before) :]
    assert len(computed_after) == 8 - len(finished_before)  # finished units were not redone
    assert not set(computed_after) & {u for u in computed_before[: len(finished_before)]}
    visible = _units(store)
    assert len(visible) == 8 and all((p / "manifest.json").is_file() for p in visible)
    table = pd.read_csv(tmp_path / "res" / "test" / "noise.csv")
    assert sorted(table["i"].unique()) == list(range(8)) and len(table) == 8 * 1000

    out = subprocess.run(rerun, env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    assert len(marker.read_text().split()) == len(computed_before) + len(computed_after)


def _multirun_worker(conf_root: str, tmp: str, tag: str) -> None:
    sys.path.insert(0, str(HERE))
    cfg = compose(
        "test/noise", [*_paths(Path(tmp)), f"params.tag={tag}", "plot=false"], conf=Path(conf_root)
    )
    run_config(cfg, multirun=True)


def test_two_sweep_workers_writing_one_figure_lose_nothing(tmp_path: Path, conf_root: Path) -> None:
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    procs = [
        ctx.Process(target=_multirun_worker, args=(str(conf_root), str(tmp_path), tag))
        for tag in ("a", "b", "c")
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    table = pd.read_csv(tmp_path / "res" / "test" / "noise.csv")
    assert sorted(table["tag"].unique()) == ["a", "b", "c"]
    assert len(table) == 3 * 4 * 1000
    assert table["unit_id"].nunique() == 12


def test_replot_needs_only_the_results(tmp_path: Path) -> None:
    run_experiment("cl/fig2", _paths(tmp_path))
    import shutil

    from privrepro.runner.replot import replot

    shutil.rmtree(tmp_path / "exp")  # the store is gone: replotting must not recompute
    (tmp_path / "plots" / "cl" / "fig2.png").unlink()
    made, failed = replot(tmp_path / "res", tmp_path / "plots")
    assert tmp_path / "plots" / "cl" / "fig2.png" in made and failed == []
    assert not (tmp_path / "exp").exists()


def test_unknown_experiment_target_lists_the_known_ones() -> None:
    from privrepro.runner.catalog import resolve_target

    assert [e.name for e in resolve_target("cl-2")] == ["cl/fig2"]
    with pytest.raises(SystemExit, match="fig-cl-2"):
        resolve_target("cl-99")


def test_cuda_request_without_cuda_is_a_config_error(tmp_path: Path) -> None:
    from privrepro.config.validation import ConfigError
    from privrepro.runner.environment import resolve_device

    with pytest.raises(ConfigError, match="device"):
        resolve_device("tpu")
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:  # pragma: no cover
        has_cuda = False
    if not has_cuda:
        with pytest.raises(ConfigError, match="CUDA is not available"):
            resolve_device("cuda")
        assert resolve_device("auto") == "cpu"


def test_grid_units_order_matches_nested_comprehension() -> None:
    """grid_units enumerates the product with the first axis outermost (itertools.product)."""
    from privrepro.figures.api import grid_units

    datasets, epsilons, repeats = ["a", "b"], [1.0, 8.0], 3
    expected = [
        {"delta": 1e-5, "dataset": d, "epsilon": e, "repeat": r}
        for d in datasets
        for e in epsilons
        for r in range(repeats)
    ]
    got = grid_units({"delta": 1e-5}, dataset=datasets, epsilon=epsilons, repeat=range(repeats))
    assert got == expected
    assert grid_units({"x": 1}) == [{"x": 1}]


def test_data_column_meta_and_stand_in_title(tmp_path: Path, conf_root: Path) -> None:
    """Each unit's DataSource label reaches the table, meta.json and (for stand-ins) the plot."""
    import json

    import matplotlib.pyplot as plt

    from privrepro.runner.run_views import mark_stand_in

    real = run_experiment("test/noise", _paths(tmp_path / "real"), conf=conf_root)
    assert list(real.table.columns[:6]) == ["paper", "figure", "profile", "seed", "unit_id", "data"]
    assert set(real.table["data"]) == {"seeded normal draws"}

    mixed = run_experiment(
        "test/noise", [*_paths(tmp_path / "mixed"), "params.stand_in_from=2"], conf=conf_root
    )
    stand_in = "seeded normal draws (stand-in for the test's dataset)"
    by_unit = mixed.table.groupby("i")["data"].unique()
    assert [list(v) for v in by_unit] == [["seeded normal draws"]] * 2 + [[stand_in]] * 2
    meta = json.loads((tmp_path / "mixed" / "res" / "test" / "noise.meta.json").read_text())
    labels = {d["label"]: d for d in meta["data_sources"]}
    assert labels[stand_in]["stand_in_for"] == "the test's dataset"
    assert labels["seeded normal draws"]["stand_in_for"] is None
    # the label lives with each unit in the store: a table derived again from the store alone
    # (make tables) has the same data column, and a unit without one is never taken for real data
    from privrepro.data.provenance import UNDECLARED
    from privrepro.runner.figure_tables import StoredUnit, derive_table
    from privrepro.store.units import UnitStore

    store = UnitStore(tmp_path / "mixed" / "exp", "test", "noise")
    rebuilt = derive_table(store, conf=conf_root).table.set_index("unit_id")["data"]
    assert rebuilt.groupby(level=0).first().to_dict() == dict(
        zip(mixed.table["unit_id"], mixed.table["data"], strict=True)
    )
    uid = mixed.table["unit_id"].iloc[0]
    assert store.load_env(uid)["data"] == "seeded normal draws"
    assert StoredUnit("older", {"unit": {}}, {}).data == UNDECLARED.label
    # a unit stored before units recorded their data takes the label its own job knows for it;
    # a recorded label is never overwritten
    from privrepro.data.provenance import DataSource
    from privrepro.runner.figure_tables import _labelled

    now = DataSource("what this job reads")
    assert _labelled(StoredUnit("older", {}, {}), {"older": now}).data == now.label
    assert _labelled(StoredUnit("u", {}, {"data": "recorded"}), {"u": now}).data == "recorded"

    fig, _ = plt.subplots()
    mark_stand_in(fig, real.table)
    assert not fig.texts, "real data is not flagged"
    mark_stand_in(fig, mixed.table)
    (text,) = [t.get_text() for t in fig.texts]
    assert "stand-in data" in text and "the test's dataset" in text.replace("\n", " ")
    plt.close(fig)
