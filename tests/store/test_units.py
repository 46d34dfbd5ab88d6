"""The run store: sealed units, verification, quarantine, ownership and the sweep of build folders;
no state of a unit folder (unreadable, malformed, a named pipe, another figure's, unsealed) is read
or stops a reader."""

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

from components import unprivileged_prefix
from privrepro.store.atomic import atomic_write_text, leftover_temporaries
from privrepro.store.build_folders import owner_record
from privrepro.store.identity import identity_problem, unit_hash
from privrepro.store.seal import MANIFEST
from privrepro.store.units import UnitStore


def test_unit_hash_is_stable_and_order_free() -> None:
    assert unit_hash({"a": 1, "b": [1, 2]}) == unit_hash({"b": [1, 2], "a": 1})
    assert unit_hash({"a": 1}) != unit_hash({"a": 1.5})
    assert len(unit_hash({})) == 16


def _rows(x: float = 1.0) -> pd.DataFrame:
    return pd.DataFrame({"x": [x, 2.0], "k": [1, 2]})


def _identity(i: int = 1, **changes: object) -> dict[str, object]:
    """A unit identity of the figure ``p/f`` (what the runner writes to ``config.json``)."""
    base = {
        "paper": "p",
        "figure": "f",
        "profile": "smoke",
        "seed": 0,
        "recipe": "m:R",
        "version": 1,
        "unit": {"i": i},
    }
    return {**base, **changes}


def _build(
    store: UnitStore, i: int = 1, rows: pd.DataFrame | None = None, **changes: object
) -> str:
    identity = _identity(i, **changes)
    uid = unit_hash(identity)
    with store.building(uid) as tmp:
        store.write_unit(tmp, identity, _rows(float(i)) if rows is None else rows, {"i": i})
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
    elif how == "manifest deleted, rows edited":
        (folder / MANIFEST).unlink()
        (folder / "rows.csv").write_text("x,k\n9.0,1\n2.0,2\n")
        (folder / "rows.parquet").unlink()
    elif how == "rows.csv a named pipe":
        (folder / "rows.csv").unlink()
        os.mkfifo(folder / "rows.csv")  # opening it for reading would block forever
    elif how == "rows.csv a symbolic link":
        (folder / "rows.csv").rename(folder / "elsewhere.csv")
        (folder / "rows.csv").symlink_to(folder / "elsewhere.csv")
    elif how == "manifest a named pipe":
        (folder / MANIFEST).unlink()
        os.mkfifo(folder / MANIFEST)
    elif how == "manifest lists a path outside the unit":
        m = json.loads((folder / MANIFEST).read_text())
        m["files"]["../../x"] = {"bytes": 1, "sha256": "0" * 64}
        (folder / MANIFEST).write_text(json.dumps(m))
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
    "manifest deleted, rows edited",
    "rows.csv a named pipe",
    "rows.csv a symbolic link",
    "manifest a named pipe",
    "manifest lists a path outside the unit",
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


def _reseal(store: UnitStore, uid: str, identity: dict[str, object]) -> str:
    """Forge a sealed unit holding ``identity``: its folder renamed to the identity's hash and
    sealed by a fresh manifest (what an adversary with write access can always do)."""
    folder = store.path(uid)
    (folder / "config.json").write_text(json.dumps(identity))
    new = unit_hash(identity)
    folder.rename(store.path(new))
    (store.path(new) / MANIFEST).unlink()
    names = [p.name for p in store.path(new).iterdir()]
    UnitStore._write_manifest(store.path(new), new, names)
    return new


@pytest.mark.parametrize(
    "change",
    [
        {"seed": "x"},
        {"seed": -1},
        {"seed": True},
        {"unit": [1, 2]},
        {"version": "1"},
        {"paper": "pac"},
        {"figure": "g"},
        {"extra": 1},
    ],
    ids=lambda c: ",".join(f"{k}={v!r}" for k, v in c.items()),
)
def test_a_sealed_unit_with_a_malformed_or_foreign_config_is_refused(
    tmp_path: Path, change: dict[str, object], caplog: pytest.LogCaptureFixture
) -> None:
    """Sealed and hashing to its name, but not a unit of this figure: moved aside, one warning."""
    store = UnitStore(tmp_path, "p", "f")
    uid = _reseal(store, _build(store), _identity(1, **change))
    fresh = UnitStore(tmp_path, "p", "f")
    result = fresh.verify(uid)
    assert not result.ok and "config.json" in result.reason
    with caplog.at_level(logging.WARNING, logger="privrepro.store"):
        assert not fresh.is_complete(uid)
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    assert not store.path(uid).exists()


def test_identity_problem_names_what_is_wrong() -> None:
    assert identity_problem(_identity(), "p", "f") is None
    assert identity_problem(_identity(), "pac", "curves_dimension") == (
        "config.json names the figure p/f, not pac/curves_dimension"
    )
    assert "seed" in str(identity_problem(_identity(seed="x"), "p", "f"))
    assert "not an object" in str(identity_problem([1], "p", "f"))


def test_the_config_must_hash_to_the_folder_name(tmp_path: Path) -> None:
    """A sealed unit renamed to another unit's name, manifest resealed for that name: the one
    check that catches it is the hash of its config."""
    store = UnitStore(tmp_path, "p", "f")
    uid = _build(store, 1)
    other = unit_hash(_identity(2))
    store.path(uid).rename(store.path(other))
    (store.path(other) / MANIFEST).unlink()
    UnitStore._write_manifest(
        store.path(other), other, sorted(p.name for p in store.path(other).iterdir())
    )
    result = UnitStore(tmp_path, "p", "f").verify(other)
    assert not result.ok and result.reason == "config.json does not hash to the unit's name"


def test_an_unsealed_unit_is_refused_whatever_its_rows(tmp_path: Path) -> None:
    """Missing seals are not a lesser seal: a unit without a manifest is never read, even with
    rows that would pass the rule of units written before manifests."""
    store = UnitStore(tmp_path, "p", "f")
    uid = _build(store)
    (store.path(uid) / MANIFEST).unlink()  # what the code before manifests wrote
    result = UnitStore(tmp_path, "p", "f").verify(uid)
    assert not result.ok and "not sealed" in result.reason
    assert not store.is_complete(uid) and not store.path(uid).exists()  # moved aside


def _legacy(store: UnitStore, i: int) -> str:
    uid = _build(store, i)
    (store.path(uid) / MANIFEST).unlink()
    return uid


def test_the_explicit_migration_seals_only_what_passes_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from privrepro.store.migrate import main

    store = UnitStore(tmp_path, "p", "f")
    good, edited, sealed = _legacy(store, 1), _legacy(store, 2), _build(store, 3)
    (store.path(edited) / "rows.csv").write_text("x,k\n1.0,1\n")  # a row lost, still parses
    assert main(["--experiments", str(tmp_path), "--dry-run"]) == 1
    out = capsys.readouterr().out
    assert f"would seal {store.path(good)}" in out and not (store.path(good) / MANIFEST).exists()
    assert main(["--experiments", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"sealed config.json, env.json, rows.csv, rows.parquet of {store.path(good)}" in out
    assert f"refused {store.path(edited)}: rows.csv and rows.parquet differ" in out
    assert "1 unit(s) written before manifests sealed, 1 refused" in out
    assert str(store.path(sealed)) not in out  # a sealed unit is not touched
    fresh = UnitStore(tmp_path, "p", "f")
    assert fresh.verify(good).ok and not fresh.verify(edited).ok


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
    assert sorted(e.name for e in store.folder.iterdir()) == [uid]  # no leftovers


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


def _verify_in_child(root: Path, uid: str) -> subprocess.CompletedProcess[str]:
    """``UnitStore.is_complete`` in a process without root's permission bypass."""
    code = (
        "import sys; from pathlib import Path; from privrepro.store.units import UnitStore;"
        f"s = UnitStore(Path({str(root)!r}), 'p', 'f'); r = s.verify({uid!r});"
        f"print(r.ok, r.reason); print(s.is_complete({uid!r}))"
    )
    return subprocess.run(
        [*unprivileged_prefix(), sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("what", ["folder", "rows.csv"])
def test_an_unreadable_unit_is_a_verification_failure(tmp_path: Path, what: str) -> None:
    """``chmod 000`` on a unit (or one of its files): reported and moved aside, no traceback."""
    store = UnitStore(tmp_path, "p", "f")
    uid = _build(store)
    target = store.path(uid) if what == "folder" else store.path(uid) / "rows.csv"
    os.chmod(target, 0)
    try:
        done = _verify_in_child(tmp_path, uid)
    finally:  # readable again, wherever it went, so the temporary folder can be removed
        for folder in [store.path(uid), *store.folder.glob(f".corrupt-{uid}-*")]:
            if folder.is_dir():
                os.chmod(folder, 0o755)
                for p in folder.iterdir():
                    os.chmod(p, 0o644)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.startswith("False unreadable") and "Permission denied" in first
    assert second == "False"
    assert "moved aside" in done.stderr and done.stderr.count("\n") == 1  # one warning line
    assert not store.path(uid).exists()


def test_a_lock_file_of_another_user_still_locks(tmp_path: Path) -> None:
    """A lock file this process may not write (another user's ``0644``): locked through a
    read-only descriptor; one it may not read at all: moved aside with one warning."""
    store = UnitStore(tmp_path, "p", "f")
    _build(store)
    lock = store.lock_path()
    code = (
        "from pathlib import Path; from privrepro.store.units import UnitStore;"
        f"s = UnitStore(Path({str(tmp_path)!r}), 'p', 'f')\n"
        "with s.table_lock(): print('locked')"
    )
    for mode, moved in ((0o444, False), (0o000, True)):
        lock.unlink(missing_ok=True)
        for p in store.folder.glob(".corrupt-table.lock-*"):
            p.unlink()
        lock.write_text("")
        os.chmod(lock, mode)
        done = subprocess.run(
            [*unprivileged_prefix(), sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and done.stdout == "locked\n", done.stderr
        aside = list(store.folder.glob(".corrupt-table.lock-*"))
        assert bool(aside) is moved
        assert ("cannot be used" in done.stderr) is moved


def test_the_lock_excludes_a_second_holder(tmp_path: Path) -> None:
    store = UnitStore(tmp_path, "p", "f")
    store.folder.mkdir(parents=True)
    code = (
        "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY);"
        "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)"
    )
    with store.table_lock():
        held = subprocess.run([sys.executable, "-c", code, str(store.lock_path())], timeout=60)
    assert held.returncode != 0  # BlockingIOError: the lock is held
    free = subprocess.run([sys.executable, "-c", code, str(store.lock_path())], timeout=60)
    assert free.returncode == 0
