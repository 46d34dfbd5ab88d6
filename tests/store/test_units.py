"""The run store: sealed units, verification, quarantine, ownership and the sweep of build folders."""

from __future__ import annotations

import json
import logging
import multiprocessing as mp
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from privrepro.store.atomic import atomic_write_text, leftover_temporaries
from privrepro.store.units import MANIFEST, UnitStore, owner_record, unit_hash


def test_unit_hash_is_stable_and_order_free() -> None:
    assert unit_hash({"a": 1, "b": [1, 2]}) == unit_hash({"b": [1, 2], "a": 1})
    assert unit_hash({"a": 1}) != unit_hash({"a": 1.5})
    assert len(unit_hash({})) == 16


def _rows(x: float = 1.0) -> pd.DataFrame:
    return pd.DataFrame({"x": [x, 2.0], "k": [1, 2]})


def _identity(i: int = 1) -> dict[str, object]:
    return {"figure": "f", "unit": {"i": i}}


def _build(store: UnitStore, i: int = 1, rows: pd.DataFrame | None = None) -> str:
    uid = unit_hash(_identity(i))
    with store.building(uid) as tmp:
        store.write_unit(tmp, _identity(i), _rows(float(i)) if rows is None else rows, {"i": i})
    return uid


def test_a_unit_exists_only_when_sealed(tmp_path: Path) -> None:
    store = UnitStore(tmp_path, "p", "f")
    uid = unit_hash(_identity())
    with store.building(uid) as tmp:
        store.write_unit(tmp, _identity(), _rows(), {"wall_time_s": 0.1})
        assert not store.is_complete(uid)  # still private until the block ends
    assert store.is_complete(uid)
    pd.testing.assert_frame_equal(store.load_rows(uid), _rows())
    assert store.load_config(uid) == _identity()
    manifest = json.loads((store.path(uid) / MANIFEST).read_text())
    assert manifest["unit_id"] == uid
    assert set(manifest["files"]) == {"config.json", "rows.csv", "rows.parquet", "env.json"}
    assert not any(p.name.startswith(".") for p in store.path(uid).iterdir())  # no owner files


def test_a_failing_unit_leaves_nothing(tmp_path: Path) -> None:
    store = UnitStore(tmp_path, "p", "f")
    with pytest.raises(RuntimeError), store.building(unit_hash(_identity())) as tmp:
        (tmp / "rows.csv").write_text("partial")
        raise RuntimeError("killed")
    assert list(store.folder.iterdir()) == []


def test_files_and_folders_get_ordinary_permissions(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        store = UnitStore(tmp_path, "p", "f")
        uid = _build(store)
        atomic_write_text(tmp_path / "out" / "t.csv", "a\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(store.path(uid).stat().st_mode) == 0o755
    assert stat.S_IMODE((store.path(uid) / "rows.csv").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "out" / "t.csv").stat().st_mode) == 0o644


def _corrupt(store: UnitStore, uid: str, other: str, how: str) -> None:
    folder, donor = store.path(uid), store.path(other)
    if how == "rows.csv truncated":
        data = (folder / "rows.csv").read_bytes()
        (folder / "rows.csv").write_bytes(data[: len(data) // 2])
    elif how == "rows.parquet truncated":
        data = (folder / "rows.parquet").read_bytes()
        (folder / "rows.parquet").write_bytes(data[:100])
    elif how in ("rows.csv", "rows.parquet", "config.json"):
        (folder / how).write_bytes((donor / how).read_bytes())
    elif how == "env.json deleted":
        (folder / "env.json").unlink()
    elif how == "manifest edited":
        m = json.loads((folder / MANIFEST).read_text())
        m["files"]["rows.csv"]["sha256"] = "0" * 64
        (folder / MANIFEST).write_text(json.dumps(m))
    elif how == "manifest unreadable":
        (folder / MANIFEST).write_text("{not json")
    elif how == "another unit's folder":
        for p in folder.iterdir():
            p.unlink()
        for p in donor.iterdir():
            (folder / p.name).write_bytes(p.read_bytes())
    elif how == "emptied":
        for p in folder.iterdir():
            p.unlink()
    elif how == "a file":
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()
        folder.write_text("not a unit")
    elif how == "manifest deleted and rows.csv cut":
        (folder / MANIFEST).unlink()
        data = (folder / "rows.csv").read_bytes()
        (folder / "rows.csv").write_bytes(data[:-5])
    else:  # pragma: no cover
        raise ValueError(how)


CORRUPTIONS = [
    "rows.csv truncated",
    "rows.parquet truncated",
    "rows.csv",
    "rows.parquet",
    "config.json",
    "env.json deleted",
    "manifest edited",
    "manifest unreadable",
    "another unit's folder",
    "emptied",
    "a file",
    "manifest deleted and rows.csv cut",
]


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_a_corrupt_unit_is_reported_moved_aside_and_rebuilt(
    tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = UnitStore(tmp_path, "p", "f")
    uid, other = _build(store, 1), _build(store, 2)
    _corrupt(store, uid, other, how)
    fresh = UnitStore(tmp_path, "p", "f")  # a later process: nothing cached
    assert not fresh.verify(uid).ok
    with caplog.at_level(logging.WARNING, logger="privrepro.store"):
        assert not fresh.is_complete(uid)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(store.path(uid)) in warnings[0].getMessage()
    assert not store.path(uid).exists()
    aside = [p for p in store.folder.iterdir() if p.name.startswith(f".corrupt-{uid}")]
    assert len(aside) == 1
    assert _build(fresh, 1) == uid  # the same unit builds again: nothing wedges
    assert fresh.is_complete(uid) and fresh.is_complete(other)
    pd.testing.assert_frame_equal(fresh.load_rows(uid), _rows(1.0))


def test_a_legacy_unit_is_verified_and_sealed_once(tmp_path: Path) -> None:
    """Units written before manifests (env.json last, no manifest) stay usable."""
    store = UnitStore(tmp_path, "p", "f")
    uid = _build(store)
    (store.path(uid) / MANIFEST).unlink()  # what the earlier code wrote
    result = UnitStore(tmp_path, "p", "f").verify(uid)
    assert result.ok and result.legacy
    assert store.is_complete(uid)
    assert (store.path(uid) / MANIFEST).is_file()  # sealed in place
    assert not UnitStore(tmp_path, "p", "f").verify(uid).legacy


def test_a_legacy_unit_whose_tables_disagree_is_refused(tmp_path: Path) -> None:
    store = UnitStore(tmp_path, "p", "f")
    uid = _build(store)
    (store.path(uid) / MANIFEST).unlink()
    (store.path(uid) / "rows.csv").write_text("x,k\n1.0,1\n")  # a whole row lost, still parses
    assert UnitStore(tmp_path, "p", "f").verify(uid).reason == "rows.csv and rows.parquet differ"


def test_force_discards_through_the_trash(tmp_path: Path) -> None:
    store = UnitStore(tmp_path, "p", "f")
    uid = _build(store)
    store.discard(uid)
    assert not store.path(uid).exists() and list(store.folder.iterdir()) == []


def _same_unit(root: str, barrier: mp.synchronize.Barrier, value: float) -> None:  # type: ignore[name-defined]
    store = UnitStore(Path(root), "p", "f")
    uid = unit_hash(_identity())
    with store.building(uid) as tmp:
        barrier.wait()  # both workers have a private folder before either renames
        store.write_unit(tmp, _identity(), pd.DataFrame({"x": [value]}), {})


def test_two_workers_on_the_same_unit_leave_one_complete_copy(tmp_path: Path) -> None:
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_same_unit, args=(str(tmp_path), barrier, v)) for v in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    store = UnitStore(tmp_path, "p", "f")
    uid = unit_hash(_identity())
    assert store.is_complete(uid)
    assert store.load_rows(uid)["x"].iloc[0] in (1.0, 2.0)
    assert [e.name for e in store.folder.iterdir()] == [uid]  # no leftovers


def _build_folder(store: UnitStore, name: str, owner: dict[str, object] | None) -> Path:
    folder = store.folder / f".tmp-{name}-x"
    folder.mkdir(parents=True)
    if owner is not None:
        (folder / ".owner.json").write_text(json.dumps(owner))
        (folder / ".heartbeat").touch()
    return folder


def _age(path: Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_sweep_removes_only_build_folders_whose_owner_is_gone(tmp_path: Path) -> None:
    store = UnitStore(tmp_path, "p", "f", heartbeat_s=1.0, stale_after_s=20.0)
    me = owner_record()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    live_here = _build_folder(store, "live", me)
    _age(live_here / ".heartbeat", 3600)  # a stale heartbeat does not matter: the pid is alive
    _age(live_here, 3600)
    dead_here = _build_folder(store, "dead", {**me, "pid": int(dead.stdout), "process_start": 1})
    reused_pid = _build_folder(store, "reused", {**me, "process_start": -5})  # pid now another's
    elsewhere = {**me, "host": "another-host", "boot_id": "other"}
    live_there = _build_folder(store, "beating", elsewhere)
    stale_there = _build_folder(store, "silent", elsewhere)
    _age(stale_there / ".heartbeat", 60)
    ownerless_new = _build_folder(store, "young", None)
    ownerless_old = _build_folder(store, "old", None)
    _age(ownerless_old, 60)
    trash = store.folder / ".trash-abc-1-2"
    trash.mkdir()
    removed = set(store.sweep_abandoned())
    assert removed == {dead_here, reused_pid, stale_there, ownerless_old, trash}
    for kept in (live_here, live_there, ownerless_new):
        assert kept.is_dir()


def test_the_heartbeat_is_touched_while_a_unit_builds(tmp_path: Path) -> None:
    store = UnitStore(tmp_path, "p", "f", heartbeat_s=0.05)
    with store.building(unit_hash(_identity())) as tmp:
        beat = tmp / ".heartbeat"
        first = beat.stat().st_mtime_ns
        time.sleep(0.3)
        assert beat.stat().st_mtime_ns > first
        assert json.loads((tmp / ".owner.json").read_text())["pid"] == os.getpid()
        store.write_unit(tmp, _identity(), _rows(), {})


def test_atomic_write_replaces_whole_files_and_names_its_temporaries(tmp_path: Path) -> None:
    path = tmp_path / "a" / "f.txt"
    atomic_write_text(path, "one")
    atomic_write_text(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["f.txt"]
    left = path.parent / ".tmp-f.txt-abc123"  # what a killed writer leaves
    left.write_text("partial")
    other = path.parent / ".tmp-g.txt-abc123"
    other.write_text("partial")
    assert leftover_temporaries(path.parent, ("f.txt",)) == [left]
    assert leftover_temporaries(path.parent, older_than_s=3600) == []
