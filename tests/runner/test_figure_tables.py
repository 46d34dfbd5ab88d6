"""The figure's table is derived from the verified store: every unit, whatever the last run did."""

from __future__ import annotations

import json
import logging
import os
import shutil
import stat
from pathlib import Path

import pandas as pd
import pytest
from recipes_for_tests import scratch_paths

from privrepro.runner import figure_tables as tables
from privrepro.runner import make_tables
from privrepro.runner.figure_tables import StoredUnit, param_columns, read_table
from privrepro.runner.run import run_experiment
from privrepro.store.identity import unit_hash
from privrepro.store.units import UnitStore

FIG = ("test", "noise")


def _paths(tmp: Path) -> list[str]:
    return scratch_paths(tmp, "device=cpu", "plot=false")


def _run(tmp: Path, conf: Path, *extra: str) -> object:
    return run_experiment("test/noise", [*_paths(tmp), *extra], conf=conf)


def _table(tmp: Path) -> pd.DataFrame:
    return pd.read_parquet(tmp / "res" / "test" / "noise.parquet")


def _computed(marker: Path) -> int:
    return len(marker.read_text().split()) if marker.exists() else 0


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "computed.txt"
    monkeypatch.setenv("PRIVREPRO_TEST_MARKER", str(path))
    return path


SWEEP = [("seed=0",), ("seed=1",), ("seed=2",), ("seed=0", "profile=tiny")]


def test_a_single_run_after_a_sweep_keeps_every_unit(
    tmp_path: Path, conf_root: Path, marker: Path
) -> None:
    for job in SWEEP:
        _run(tmp_path / "a", conf_root, *job)
    single = _run(tmp_path / "a", conf_root, "seed=1")
    assert (single.computed, single.reused) == (0, 4)  # type: ignore[attr-defined]
    table = _table(tmp_path / "a")
    assert len(table) == 3 * 4 * 1000 + 4 * 100 and table["unit_id"].nunique() == 16
    assert set(table.groupby("profile")["seed"].unique().map(tuple)) == {(0, 1, 2), (0,)}
    # the run's own rows are what it plotted and returned
    assert set(single.table["seed"]) == {1} and len(single.table) == 4000  # type: ignore[attr-defined]
    # the same units in another order give the same table: a pure function of the store
    for job in reversed(SWEEP):
        _run(tmp_path / "b", conf_root, *job)
    pd.testing.assert_frame_equal(table, _table(tmp_path / "b"))
    csv = pd.read_csv(tmp_path / "a" / "res" / "test" / "noise.csv")
    assert len(csv) == len(table) and list(csv.columns) == list(table.columns)


def test_make_tables_rebuilds_results_without_computing(
    tmp_path: Path, conf_root: Path, marker: Path
) -> None:
    for job in SWEEP:
        _run(tmp_path, conf_root, *job)
    before = _table(tmp_path)
    meta_before = json.loads((tmp_path / "res" / "test" / "noise.meta.json").read_text())
    computed = _computed(marker)
    shutil.rmtree(tmp_path / "res")
    args = ["--experiments", str(tmp_path / "exp"), "--results", str(tmp_path / "res")]
    assert make_tables.main([*args, "--conf", str(conf_root)]) == 0
    assert _computed(marker) == computed
    pd.testing.assert_frame_equal(before, _table(tmp_path))
    meta = json.loads((tmp_path / "res" / "test" / "noise.meta.json").read_text())
    for key in ("selection", "params", "profile", "seed", "git_sha", "units", "table"):
        assert meta[key] == meta_before[key], key
    assert len(meta["units"]) == 16 and {"unit_id", "profile", "seed", "params"} <= set(
        meta["units"][0]
    )
    # and the plot of the last run is drawn again from the rebuilt results
    from privrepro.runner.replot import replot

    made, failed = replot(tmp_path / "res", tmp_path / "plots2", conf_root)
    assert tmp_path / "plots2" / "test" / "noise.png" in made and failed == []


def test_parameters_that_differ_between_units_become_columns(
    tmp_path: Path, conf_root: Path
) -> None:
    _run(tmp_path, conf_root)
    other = _run(tmp_path, conf_root, "params.draws=50")
    table = _table(tmp_path)
    assert "draws" in table.columns  # the rows alone cannot tell the two configurations apart
    assert table.groupby("draws")["unit_id"].nunique().to_dict() == {50: 4, 1000: 4}
    assert table.columns[6] == "draws"  # right after paper, figure, profile, seed, unit_id, data
    assert "tag" not in table.columns[:7]  # the same everywhere: no column added
    meta = json.loads((tmp_path / "res" / "test" / "noise.meta.json").read_text())
    assert {u["params"]["draws"] for u in meta["units"]} == {50, 1000}
    assert meta["params"]["draws"] == 50 and len(meta["selection"]) == 4
    assert meta["table"]["param_columns"] == ["draws"]
    assert len(other.table) == 4 * 50  # type: ignore[attr-defined]


def test_the_cl_fig2_k_max_runs_are_told_apart(tmp_path: Path) -> None:
    """The issue's case: a k_max = 200 run beside the default one."""
    paths = [
        f"paths.experiments_dir={tmp_path / 'exp'}",
        f"paths.results_dir={tmp_path / 'res'}",
        f"paths.plots_dir={tmp_path / 'plots'}",
        "profile=tiny",
        "progress=false",
    ]
    run_experiment("cl/fig2", paths)
    run = run_experiment("cl/fig2", [*paths, "params.k_max=200"])
    table = pd.read_parquet(tmp_path / "res" / "cl" / "fig2.parquet")
    assert sorted(table["k_max"].unique()) == [20, 200]
    assert len(table) == 20 + 200 and len(run.table) == 200
    from privrepro.runner.publish import footer

    meta = json.loads((tmp_path / "res" / "cl" / "fig2.meta.json").read_text())
    assert "1 of the table's 2 units" in footer(meta)


def _unit(uid: str, params: dict[str, object]) -> StoredUnit:
    return StoredUnit(uid, {"profile": "smoke", "seed": 0, "unit": params}, {})


def test_param_columns_rules() -> None:
    units = [
        _unit("a", {"eps": 1.0, "k": 10, "grid": [1, 2], "opt": {"x": 1}, "order": [0, 1]}),
        _unit("b", {"eps": 8.0, "k": 20, "grid": [1, 2], "opt": {"x": 2}, "order": [1, 0]}),
    ]
    frames = {
        "a": pd.DataFrame({"eps": [1.0, 1.0], "order": ["0-1", "0-1"]}),
        "b": pd.DataFrame({"eps": [8.0], "order": ["1-0"]}),
    }
    cols = param_columns(units, frames)
    # eps: the rows already show it; grid: the same everywhere
    assert cols == {"k": [10, 20], "opt.x": [1, 2], "unit.order": ["[0,1]", "[1,0]"]}


def test_an_edited_csv_or_parquet_is_reported_and_rebuilt(
    tmp_path: Path, conf_root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _run(tmp_path, conf_root)
    clean = _table(tmp_path)
    res = tmp_path / "res" / "test"
    meta = json.loads((res / "noise.meta.json").read_text())
    csv = pd.read_csv(res / "noise.csv")
    csv.loc[0, "x"] = 99.0
    csv.to_csv(res / "noise.csv", index=False)
    with caplog.at_level(logging.WARNING, logger="privrepro.tables"):
        table = read_table(tmp_path / "res", *FIG, meta)
    assert "noise.csv no longer matches noise.parquet" in caplog.text
    pd.testing.assert_frame_equal(table, clean)  # the Parquet is read, the edit is not
    edited = clean.copy()
    edited.loc[0, "x"] = 99.0
    edited.to_parquet(res / "noise.parquet", index=False)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="privrepro.tables"):
        read_table(tmp_path / "res", *FIG, meta)
    assert "noise.parquet differs from the table derived from the store" in caplog.text
    _run(tmp_path, conf_root)  # the next run derives both again
    pd.testing.assert_frame_equal(_table(tmp_path), clean)
    pd.testing.assert_frame_equal(pd.read_csv(res / "noise.csv"), pd.read_csv(res / "noise.csv"))
    assert pd.read_csv(res / "noise.csv")["x"].iloc[0] != 99.0


def test_results_have_ordinary_permissions_and_no_lock_files(
    tmp_path: Path, conf_root: Path
) -> None:
    old = os.umask(0o022)
    try:
        _run(tmp_path, conf_root)
    finally:
        os.umask(old)
    files = list((tmp_path / "res").rglob("*")) + list((tmp_path / "plots").rglob("*"))
    assert not [p for p in files if p.name.endswith(".lock") or p.name.startswith(".tmp-")]
    for p in files:
        if p.is_file():
            assert stat.S_IMODE(p.stat().st_mode) == 0o644, p


def test_units_of_another_recipe_version_are_left_out(tmp_path: Path, conf_root: Path) -> None:
    _run(tmp_path, conf_root)
    store = UnitStore(tmp_path / "exp", *FIG)
    old = {
        "paper": "test",
        "figure": "noise",
        "profile": "smoke",
        "seed": 0,
        "recipe": "recipes_for_tests:NoiseFigure",
        "version": 0,
        "unit": {"i": 0, "draws": 3, "sleep_s": 0.0, "tag": "old"},
    }
    with store.building(unit_hash(old)) as tmp:
        store.write_unit(tmp, old, pd.DataFrame({"x": [1.0]}), {})
    derived = tables.derive_table(store, conf=conf_root)
    assert len(derived.units) == 4 and len(derived.superseded) == 1
    assert "old" not in set(derived.table["tag"])
