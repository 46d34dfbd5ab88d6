"""Faults injected into runs of a figure; the final table must equal that of an uninterrupted run.

Each case runs ``test/noise`` (seeded, so a table is reproducible bit for bit) in a store that
already holds an earlier sweep, injects a fault — a worker SIGKILLed at a point of the store's
life, a file of a unit or of the results corrupted, concurrent workers, a unit computing longer
than the sweep period beside another worker — runs the figure again, and compares the table
with the table a clean sequence of the same runs gives.
"""

from __future__ import annotations

import functools
import json
import multiprocessing as mp
import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from recipes_for_tests import scratch_paths

from privrepro.runner import figure_tables as tables
from privrepro.runner import make_tables
from privrepro.runner import publish as publish_module
from privrepro.runner import run as run_module
from privrepro.runner.run import run_experiment
from privrepro.store import units as units_module
from privrepro.store.build_folders import owner_record
from privrepro.store.identity import UNIT_ID
from privrepro.store.units import UnitStore

FORK = mp.get_context("fork")
SWEEP = ["seed=1", "seed=2"]  # runs already in the store before the faulty one


def _paths(tmp: Path) -> list[str]:
    return scratch_paths(tmp, "device=cpu", "params.draws=200")


def _run(tmp: Path, conf: Path, *extra: str) -> Any:
    return run_experiment("test/noise", [*_paths(tmp), *extra], conf=conf)


def _store(tmp: Path) -> Path:
    return tmp / "exp" / "test" / "noise"


def _table(tmp: Path) -> pd.DataFrame:
    return pd.read_parquet(tmp / "res" / "test" / "noise.parquet")


def _units(tmp: Path) -> list[Path]:
    return [p for p in _store(tmp).iterdir() if UNIT_ID.match(p.name)]


def _computed(marker: Path) -> list[str]:
    return marker.read_text().split() if marker.exists() else []


@pytest.fixture(scope="module")
def clean_dir(tmp_path_factory: pytest.TempPathFactory, module_conf_root: Path) -> Path:
    """The uninterrupted sequence: the sweep, then the run of seed 0."""
    tmp = tmp_path_factory.mktemp("clean")
    for job in SWEEP:
        _run(tmp, module_conf_root, job, "plot=false")
    _run(tmp, module_conf_root, "seed=0")
    return tmp


@pytest.fixture(scope="module")
def clean(clean_dir: Path) -> pd.DataFrame:
    return _table(clean_dir)


def _same_as_clean(tmp: Path, clean_dir: Path) -> None:
    """The Parquet table equals the clean one, and so does its CSV export, byte for byte."""
    pd.testing.assert_frame_equal(_table(tmp), _table(clean_dir))
    csv = (tmp / "res" / "test" / "noise.csv").read_bytes()
    assert csv == (clean_dir / "res" / "test" / "noise.csv").read_bytes()


@pytest.fixture
def swept(tmp_path: Path, module_conf_root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store holding the earlier sweep; computations are counted in ``computed.txt``."""
    monkeypatch.setenv("PRIVREPRO_TEST_MARKER", str(tmp_path / "computed.txt"))
    for job in SWEEP:
        _run(tmp_path, module_conf_root, job, "plot=false")
    return tmp_path


# -- SIGKILL at the store's trigger points -------------------------------------------------------


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _kill_before(owner: Any, name: str, nth: int = 1, static: bool = False) -> None:
    """SIGKILL this process when ``owner.name`` is called for the ``nth`` time, before it runs."""
    original = getattr(owner, name)
    calls = [0]

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] >= nth:
            _die()
        return original(*args, **kwargs)

    setattr(owner, name, staticmethod(wrapper) if static else wrapper)


def _kill_after(owner: Any, name: str) -> None:
    original = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        original(*args, **kwargs)
        _die()

    setattr(owner, name, wrapper)


def _csv_temporary_then_die() -> None:
    """The table's Parquet is written; the CSV's temporary is half written when the kill comes."""
    original = tables.atomic_write_bytes

    def wrapper(path: Path, data: bytes) -> Path:
        if Path(path).suffix == ".csv":
            Path(path).parent.joinpath(f".tmp-{Path(path).name}-killed").write_bytes(data[:99])
            _die()
        return original(path, data)

    tables.atomic_write_bytes = wrapper  # type: ignore[assignment]


def _trash_then_die() -> None:
    """``force=true``: the unit is renamed to the trash; the kill comes before its removal."""
    original = units_module.remove_path

    def wrapper(path: Path) -> None:
        if path.name.startswith(".trash-"):
            _die()
        original(path)

    units_module.remove_path = wrapper  # type: ignore[assignment]


def _compute_then_die(nth: int) -> None:
    import recipes_for_tests

    _kill_before(recipes_for_tests.NoiseFigure, "compute", nth)


TRIGGERS: dict[str, tuple[Callable[[], None], list[str]]] = {
    "while a unit computes (2 of 4 done)": (lambda: _compute_then_die(3), []),
    "before a unit's files are written": (
        lambda: _kill_before(UnitStore, "write_unit", 2, static=True),
        [],
    ),
    "rows written, manifest not (unsealed)": (
        lambda: _kill_before(UnitStore, "_write_manifest", 2, static=True),
        [],
    ),
    "sealed, not yet renamed into place": (lambda: _kill_before(UnitStore, "_publish", 2), []),
    "every unit done, table not derived": (
        lambda: _kill_before(publish_module, "derive_table"),
        [],
    ),
    "table's Parquet written, CSV half written": (_csv_temporary_then_die, []),
    "table written, meta not": (lambda: _kill_before(publish_module, "write_meta"), []),
    "meta written, plot not drawn": (lambda: _kill_before(publish_module, "draw"), []),
    "force=true: unit in the trash": (_trash_then_die, ["force=true"]),
    "a corrupt unit moved aside": (lambda: _kill_after(UnitStore, "quarantine"), ["corrupt"]),
    "while the last run record is written": (
        lambda: _kill_before(publish_module, "write_last_run"),
        [],
    ),
}


def _faulty_worker(install: Callable[[], None], tmp: str, conf: str, extra: list[str]) -> None:
    install()
    _run(Path(tmp), Path(conf), "seed=0", *extra)


def _corrupt_one_unit(tmp: Path) -> None:
    """A unit of seed 0 that fails verification (its env.json deleted)."""
    store = UnitStore(tmp / "exp", "test", "noise")
    victim = sorted(u for u in store.unit_ids() if store.load_config(u)["seed"] == 0)[0]
    (store.path(victim) / "env.json").unlink()


@pytest.mark.parametrize("trigger", list(TRIGGERS))
def test_sigkill_at_a_trigger_point_loses_nothing(
    trigger: str, swept: Path, module_conf_root: Path, clean_dir: Path
) -> None:
    install, extra = TRIGGERS[trigger]
    if extra in (["force=true"], ["corrupt"]):  # these faults need seed 0 in the store first
        _run(swept, module_conf_root, "seed=0", "plot=false")
    if extra == ["corrupt"]:
        _corrupt_one_unit(swept)
        extra = []
    proc = FORK.Process(
        target=_faulty_worker, args=(install, str(swept), str(module_conf_root), extra)
    )
    proc.start()
    proc.join(120)
    assert proc.exitcode == -signal.SIGKILL, "the trigger point was not reached"
    store = UnitStore(swept / "exp", "test", "noise")
    complete = sum(store.verify(u.name).ok for u in _units(swept))  # what the kill left whole
    before = len(_computed(swept / "computed.txt"))

    rerun = _run(swept, module_conf_root, "seed=0")  # the same run, started again
    _same_as_clean(swept, clean_dir)
    assert rerun.computed == 12 - complete  # only what was not whole is computed again
    assert len(_computed(swept / "computed.txt")) - before == rerun.computed
    assert len(_units(swept)) == 12 and all(store.verify(u.name).ok for u in _units(swept))
    # nothing left behind: no build folder of the dead worker, no table temporary, no lock file
    assert not [p for p in _store(swept).iterdir() if p.name.startswith((".tmp-", ".trash-"))]
    assert [p.name for p in (swept / "res" / "test").iterdir() if p.name.startswith(".")] == []
    meta = json.loads((swept / "res" / "test" / "noise.meta.json").read_text())
    assert meta["seed"] == 0 and len(meta["units"]) == 12


# -- corruptions of units and of results ---------------------------------------------------------


def _seed0_units(tmp: Path) -> list[Path]:
    store = UnitStore(tmp / "exp", "test", "noise")
    return [store.path(u) for u in store.unit_ids() if store.load_config(u)["seed"] == 0]


def _unit_fault(kind: str) -> Callable[[Path], int]:
    """Corrupt a unit of seed 0; return how many units must be computed again."""

    def apply(tmp: Path) -> int:
        a, b = _seed0_units(tmp)[:2]
        if kind == "rows.csv truncated":
            data = (a / "rows.csv").read_bytes()
            (a / "rows.csv").write_bytes(data[: len(data) // 2])
        elif kind == "rows.parquet truncated":
            (a / "rows.parquet").write_bytes((a / "rows.parquet").read_bytes()[:200])
        elif kind.startswith("replaced by another unit's "):
            name = kind.rsplit(" ", 1)[1]
            (a / name).write_bytes((b / name).read_bytes())
        elif kind == "env.json deleted":
            (a / "env.json").unlink()
        elif kind == "manifest.json deleted, rows intact":
            (a / "manifest.json").unlink()  # not sealed: moved aside and computed again
        elif kind == "manifest.json deleted, rows edited in both files":
            (a / "manifest.json").unlink()
            rows = pd.read_parquet(a / "rows.parquet")
            rows["x"] = 99.0
            rows.to_parquet(a / "rows.parquet", index=False)
            (a / "rows.csv").write_text(rows.to_csv(index=False))
        elif kind == "rows.csv replaced by a named pipe":
            (a / "rows.csv").unlink()
            os.mkfifo(a / "rows.csv")
        elif kind == "config.json forged to another figure, resealed":
            config = {**json.loads((a / "config.json").read_text()), "figure": "other"}
            (a / "config.json").write_text(json.dumps(config))
            (a / "manifest.json").unlink()
            names = sorted(p.name for p in a.iterdir())
            units_module.UnitStore._write_manifest(a, a.name, names)
        elif kind == "whole folder replaced by another unit's":
            shutil.rmtree(a)
            shutil.copytree(b, a)
        elif kind == "unit folder replaced by a file":
            shutil.rmtree(a)
            a.write_text("x")
        elif kind == "every file of two units truncated to zero":
            for p in [*a.iterdir(), *b.iterdir()]:
                p.write_bytes(b"")
            return 2
        return 1

    return apply


def _results_fault(kind: str) -> Callable[[Path], int]:
    def apply(tmp: Path) -> int:
        res = tmp / "res" / "test"
        if kind == "table Parquet edited":
            t = pd.read_parquet(res / "noise.parquet")
            t.loc[0, "x"] = 99.0
            t.to_parquet(res / "noise.parquet", index=False)
        elif kind == "table Parquet deleted, CSV cut":
            (res / "noise.parquet").unlink()
            data = (res / "noise.csv").read_bytes()
            (res / "noise.csv").write_bytes(data[: len(data) // 3])
        elif kind == "table Parquet truncated":
            (res / "noise.parquet").write_bytes((res / "noise.parquet").read_bytes()[:50])
        elif kind == "table CSV edited":
            (res / "noise.csv").write_text("paper,figure\nedited,by hand\n")
        elif kind == "meta.json deleted":
            (res / "noise.meta.json").unlink()
        elif kind == "results/ deleted":
            shutil.rmtree(tmp / "res")
        elif kind == "table lock file deleted":
            (_store(tmp) / ".table.lock").unlink(missing_ok=True)
        elif kind == "leftover table temporaries":
            (res / ".tmp-noise.csv-abcd").write_text("partial")
            old = res / ".tmp-x1y2z3.csv"  # the earlier naming, older than an hour
            old.write_text("partial")
            os.utime(old, (time.time() - 7200, time.time() - 7200))
        elif kind == "build folder of a dead worker":
            folder = _store(tmp) / ".tmp-0123456789abcdef-dead"
            folder.mkdir()
            owner = {**owner_record(), "pid": 2**22 + 7, "process_start": 1}
            (folder / ".owner.json").write_text(json.dumps(owner))
        return 0

    return apply


CORRUPTIONS: dict[str, Callable[[Path], int]] = {
    **{
        k: _unit_fault(k)
        for k in (
            "rows.csv truncated",
            "rows.parquet truncated",
            "replaced by another unit's rows.csv",
            "replaced by another unit's rows.parquet",
            "replaced by another unit's config.json",
            "replaced by another unit's manifest.json",
            "env.json deleted",
            "manifest.json deleted, rows intact",
            "manifest.json deleted, rows edited in both files",
            "rows.csv replaced by a named pipe",
            "config.json forged to another figure, resealed",
            "whole folder replaced by another unit's",
            "unit folder replaced by a file",
            "every file of two units truncated to zero",
        )
    },
    **{
        k: _results_fault(k)
        for k in (
            "table Parquet edited",
            "table Parquet deleted, CSV cut",
            "table Parquet truncated",
            "table CSV edited",
            "meta.json deleted",
            "results/ deleted",
            "table lock file deleted",
            "leftover table temporaries",
            "build folder of a dead worker",
        )
    },
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_corruption_is_repaired_by_the_next_run(
    corruption: str,
    swept: Path,
    module_conf_root: Path,
    clean_dir: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _run(swept, module_conf_root, "seed=0", "plot=false")
    expected_recomputed = CORRUPTIONS[corruption](swept)
    before = len(_computed(swept / "computed.txt"))
    with caplog.at_level("WARNING", logger="privrepro.store"):
        rerun = _run(swept, module_conf_root, "seed=0")
    assert rerun.computed == expected_recomputed
    assert len(_computed(swept / "computed.txt")) - before == expected_recomputed
    warned = [r for r in caplog.records if "failed verification" in r.getMessage()]
    assert len(warned) == expected_recomputed  # one line per unit moved aside
    _same_as_clean(swept, clean_dir)
    assert [p.name for p in (swept / "res" / "test").iterdir() if p.name.startswith(".")] == []
    assert not [p for p in _store(swept).iterdir() if p.name.startswith((".tmp-", ".trash-"))]


@pytest.mark.parametrize("corruption", ["rows.csv truncated", "table Parquet deleted, CSV cut"])
def test_make_tables_alone_gives_the_clean_table(
    corruption: str, swept: Path, module_conf_root: Path, clean: pd.DataFrame
) -> None:
    """``make tables`` (no compute) after a corruption: the damaged unit is moved aside and left
    out, never read; the results' damage is simply derived over."""
    _run(swept, module_conf_root, "seed=0", "plot=false")
    CORRUPTIONS[corruption](swept)
    args = ["--experiments", str(swept / "exp"), "--results", str(swept / "res")]
    assert make_tables.main([*args, "--conf", str(module_conf_root)]) == 0
    table = _table(swept)
    if corruption == "table Parquet deleted, CSV cut":
        pd.testing.assert_frame_equal(table, clean)
    else:
        assert table["unit_id"].nunique() == 11  # the damaged unit is not in the table
        kept = clean[clean["unit_id"].isin(table["unit_id"])].reset_index(drop=True)
        pd.testing.assert_frame_equal(table, kept)


# -- concurrent workers --------------------------------------------------------------------------


def _worker(tmp: str, conf: str, extra: list[str]) -> None:
    _run(Path(tmp), Path(conf), "plot=false", *extra)


def _together(tmp: Path, conf: Path, jobs: list[list[str]]) -> None:
    procs = [FORK.Process(target=_worker, args=(str(tmp), str(conf), j)) for j in jobs]
    for p in procs:
        p.start()
    for p in procs:
        p.join(180)
    assert [p.exitcode for p in procs] == [0] * len(jobs)


def test_two_workers_on_the_same_units(
    swept: Path, module_conf_root: Path, clean: pd.DataFrame
) -> None:
    _together(swept, module_conf_root, [["seed=0"]] * 2)
    pd.testing.assert_frame_equal(_table(swept), clean)
    assert len(_units(swept)) == 12


def test_three_workers_on_different_seeds(
    tmp_path: Path, module_conf_root: Path, clean: pd.DataFrame
) -> None:
    _together(tmp_path, module_conf_root, [[s] for s in ("seed=0", *SWEEP)])
    pd.testing.assert_frame_equal(_table(tmp_path), clean)


# -- a long unit beside a second worker ----------------------------------------------------------


def _long_worker(tmp: str, conf: str, host: str | None, sleep_s: float) -> None:
    """Compute one unit for ``sleep_s``. Seen from another host it keeps a fast heartbeat; on
    this host its heartbeat is never touched during the test: its live pid alone must save it."""
    if host is not None:  # the owner looks like another machine sharing the store
        import platform

        platform.node = lambda: host  # type: ignore[assignment]
    beat = 0.1 if host is not None else 1000.0
    run_module.UnitStore = functools.partial(UnitStore, heartbeat_s=beat)  # type: ignore[misc]
    _run(
        Path(tmp),
        Path(conf),
        "seed=0",
        "params.n_units=1",
        f"params.sleep_s={sleep_s}",
        "params.tag=long",
        "plot=false",
    )


def _build_folders(tmp: Path) -> list[Path]:
    store = _store(tmp)
    return [p for p in store.iterdir() if p.name.startswith(".tmp-")] if store.exists() else []


@pytest.mark.parametrize("host", [None, "another-host"], ids=["same host", "another host"])
def test_a_long_unit_survives_the_sweeps_of_a_second_worker(
    host: str | None, swept: Path, module_conf_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the second worker sweeps with a stale period far below the long unit's compute time (and
    # 20 heartbeats long, so a loaded machine that delays a beat does not make it look stale)
    monkeypatch.setattr(run_module, "UnitStore", functools.partial(UnitStore, stale_after_s=2.0))
    long = FORK.Process(target=_long_worker, args=(str(swept), str(module_conf_root), host, 8.0))
    long.start()
    deadline = time.time() + 60
    while not _build_folders(swept) and time.time() < deadline:
        time.sleep(0.02)
    building = _build_folders(swept)
    assert len(building) == 1
    # the unit is safe while its build folder exists, and once it is renamed into place (the
    # worker then lives on a little while, deriving the table)
    published = _store(swept) / building[0].name.removeprefix(".tmp-").split("-", 1)[0]
    sweeps = 0
    while long.is_alive():
        _run(swept, module_conf_root, "seed=1", "plot=false")  # each run sweeps first
        sweeps += 1
        if long.is_alive():
            assert building[0].exists() or published.is_dir(), "a live unit's folder was swept"
        time.sleep(0.3)
    long.join(30)
    assert long.exitcode == 0 and sweeps >= 2
    table = _table(swept)
    assert (table["tag"] == "long").sum() == 200


@pytest.mark.parametrize("host", [None, "another-host"], ids=["same host", "another host"])
def test_a_killed_long_unit_is_swept(
    host: str | None, swept: Path, module_conf_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    long = FORK.Process(target=_long_worker, args=(str(swept), str(module_conf_root), host, 30.0))
    long.start()
    deadline = time.time() + 60
    while not _build_folders(swept) and time.time() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    os.kill(long.pid or 0, signal.SIGKILL)
    long.join(10)
    store = UnitStore(swept / "exp", "test", "noise", stale_after_s=3.0)
    if host is None:
        assert store.sweep_abandoned()  # same host: the owner's pid is gone, removed at once
    else:
        assert store.sweep_abandoned() == []  # another host: wait for the heartbeat to go stale
        time.sleep(3.3)
        assert store.sweep_abandoned()
    assert _build_folders(swept) == []
