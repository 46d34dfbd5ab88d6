"""The run store: atomic units, resumption, and two workers on the same unit."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import pandas as pd
import pytest

from privrepro.store.atomic import atomic_write_text
from privrepro.store.units import UnitStore, unit_hash


def test_unit_hash_is_stable_and_order_free() -> None:
    assert unit_hash({"a": 1, "b": [1, 2]}) == unit_hash({"b": [1, 2], "a": 1})
    assert unit_hash({"a": 1}) != unit_hash({"a": 1.5})
    assert len(unit_hash({})) == 16


def _rows() -> pd.DataFrame:
    return pd.DataFrame({"x": [1.0, 2.0], "k": [1, 2]})


def test_a_unit_exists_only_when_complete(tmp_path: Path) -> None:
    store = UnitStore(tmp_path, "p", "f")
    with store.building("u1") as tmp:
        store.write_unit(tmp, {"a": 1}, _rows(), {"wall_time_s": 0.1})
        assert not store.is_complete("u1")  # still private until the block ends
    assert store.is_complete("u1")
    pd.testing.assert_frame_equal(store.load_rows("u1"), _rows())
    assert json.loads((store.path("u1") / "config.json").read_text()) == {"a": 1}


def test_a_failing_unit_leaves_nothing(tmp_path: Path) -> None:
    store = UnitStore(tmp_path, "p", "f")
    with pytest.raises(RuntimeError), store.building("u1") as tmp:
        (tmp / "rows.csv").write_text("partial")
        raise RuntimeError("killed")
    assert not store.is_complete("u1")
    assert list(store.folder.iterdir()) == []


def _build_same_unit(root: str, barrier: mp.synchronize.Barrier, value: float) -> None:  # type: ignore[name-defined]
    store = UnitStore(Path(root), "p", "f")
    with store.building("same") as tmp:
        barrier.wait()  # both workers have a private folder before either renames
        store.write_unit(tmp, {"a": 1}, pd.DataFrame({"x": [value]}), {})


def test_two_workers_on_the_same_unit_leave_one_complete_copy(tmp_path: Path) -> None:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_build_same_unit, args=(str(tmp_path), barrier, v)) for v in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    store = UnitStore(tmp_path, "p", "f")
    assert store.is_complete("same")
    assert store.load_rows("same")["x"].iloc[0] in (1.0, 2.0)
    assert sorted(e.name for e in store.folder.iterdir()) == ["same"]  # no leftovers


def test_atomic_write_replaces_whole_files(tmp_path: Path) -> None:
    path = tmp_path / "a" / "f.txt"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["f.txt"]
