"""Bounded reads: no file the store, the caches or a stand-in marker reads can hang a reader, fill
its memory or exhaust its parser (:mod:`privrepro.bounded_read`).

Each hanging or unbounded case is built so that, were the check missing, the test would fail
rather than hang: every read runs under an alarm (``tests/alarm.py``), oversized files are sparse
(no disk is used), and ``/dev/zero`` is only ever reached through a link the reader must refuse.
"""

from __future__ import annotations

import json
import logging
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alarm import bounded
from privrepro.bounded_read import (
    MAX_JSON_DEPTH,
    JSONTooDeep,
    UnsafeFile,
    json_depth,
    parse_json,
    read_bytes,
    read_json,
    regular_file,
)
from privrepro.store.build_folders import owner_record, sweep_build_folders
from privrepro.store.identity import unit_hash
from privrepro.store.seal import MANIFEST
from privrepro.store.units import UnitStore


def _specials(folder: Path) -> dict[str, Path]:
    """A named pipe, a link to ``/dev/zero``, a link out of ``folder``, a sparse 8 GiB file, a
    folder: each where a small regular file is expected."""
    folder.mkdir(parents=True, exist_ok=True)
    outside = folder.parent / "outside.json"
    outside.write_text("{}")
    out = {
        "pipe": folder / "pipe.json",
        "device": folder / "zero.json",
        "link out": folder / "out.json",
        "oversized": folder / "big.json",
        "folder": folder / "dir.json",
    }
    os.mkfifo(out["pipe"])
    out["device"].symlink_to("/dev/zero")
    out["link out"].symlink_to(outside)
    with open(out["oversized"], "wb") as fh:
        fh.truncate(8 << 30)  # sparse: st_size says 8 GiB, nothing is written
    out["folder"].mkdir()
    return out


@pytest.mark.parametrize("kind", ["pipe", "device", "link out", "oversized", "folder"])
def test_a_special_or_oversized_file_is_refused_in_one_line_naming_it(
    tmp_path: Path, kind: str
) -> None:
    path = _specials(tmp_path / "tree")[kind]
    with bounded(20), pytest.raises(UnsafeFile) as info:
        read_bytes(path, 1 << 20)
    line = str(info.value)
    assert line.startswith(str(path)) and "\n" not in line
    assert isinstance(info.value, OSError) and info.value.filename == str(path)
    expected = {
        "pipe": "a named pipe",
        "device": "a symbolic link out of",  # refused before the device is opened
        "link out": "a symbolic link out of",
        "oversized": f"{8 << 30} bytes",
        "folder": "a folder",
    }[kind]
    assert expected in line
    with bounded(20), pytest.raises(UnsafeFile):
        regular_file(path, 1 << 20)


def test_a_device_reached_through_a_link_inside_the_tree_is_still_refused(tmp_path: Path) -> None:
    """The type is checked on the open descriptor, whatever path led there."""
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    with bounded(20), pytest.raises(UnsafeFile, match="a device"):
        read_bytes(link, 10, tree="/")


def test_regular_files_and_links_inside_the_tree_are_read(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    target = tmp_path / "a" / "x.json"
    target.write_text('{"k": [1, 2]}')
    link = tmp_path / "a" / "y.json"
    link.symlink_to(target)
    assert read_json(target) == {"k": [1, 2]}
    assert read_json(link) == {"k": [1, 2]}  # its own folder is the default tree
    deep_link = tmp_path / "a" / "b"
    deep_link.mkdir()
    (deep_link / "z.json").symlink_to(target)
    with pytest.raises(UnsafeFile):
        read_json(deep_link / "z.json")  # out of a/b
    assert read_json(deep_link / "z.json", tree=tmp_path) == {"k": [1, 2]}
    # the bound is inclusive: exactly max_bytes is read, one more is refused
    assert read_bytes(target, target.stat().st_size) == target.read_bytes()
    with pytest.raises(UnsafeFile):
        read_bytes(target, target.stat().st_size - 1)
    with pytest.raises(FileNotFoundError):
        read_bytes(tmp_path / "absent", 10)


def _depth(obj: Any) -> int:
    """Brute force: the nesting depth of a parsed JSON value."""
    if isinstance(obj, dict):
        return 1 + max((_depth(v) for v in obj.values()), default=0)
    if isinstance(obj, list):
        return 1 + max((_depth(v) for v in obj), default=0)
    return 0


def _random_json(rng: random.Random, depth: int) -> Any:
    tricky = ['"', "\\", "[", "]", "{", "}", '\\"[', "\\\\", "a"]
    if depth == 0 or rng.random() < 0.25:
        return rng.choice([1, 2.5, None, True, "".join(rng.choices(tricky, k=rng.randint(0, 6)))])
    if rng.random() < 0.5:
        return [_random_json(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {
        "".join(rng.choices(tricky, k=rng.randint(0, 4))) + str(i): _random_json(rng, depth - 1)
        for i in range(rng.randint(0, 3))
    }


def test_json_depth_agrees_with_a_brute_force_count() -> None:
    """Brackets inside strings (escaped quotes and backslashes among them) never count."""
    rng = random.Random(7)
    for _ in range(300):
        obj = _random_json(rng, rng.randint(0, 9))
        text = json.dumps(obj, ensure_ascii=rng.random() < 0.5)
        assert json_depth(text) == _depth(obj), text
        assert json_depth(text.encode()) == _depth(obj)


def test_parse_json_refuses_depth_beyond_the_bound_and_keeps_it() -> None:
    at_bound = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert _depth(parse_json(at_bound)) == MAX_JSON_DEPTH
    with pytest.raises(JSONTooDeep, match=f"{MAX_JSON_DEPTH + 1} levels"):
        parse_json("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    deep = '{"a":' * 100_000 + "1" + "}" * 100_000  # json.loads raises RecursionError here
    with pytest.raises(ValueError):
        parse_json(deep)


# -- the store: a deep config.json or env.json in a sealed unit ----------------------------------


def _identity(i: int = 1) -> dict[str, object]:
    return {
        "paper": "p",
        "figure": "f",
        "profile": "smoke",
        "seed": 0,
        "recipe": "m:R",
        "version": 1,
        "unit": {"i": i},
    }


def _sealed(store: UnitStore) -> str:
    import pandas as pd

    uid = unit_hash(_identity())
    with store.building(uid) as tmp:
        store.write_unit(tmp, _identity(), pd.DataFrame({"x": [1.0]}), {"i": 1})
    return uid


@pytest.mark.parametrize("name", ["config.json", "env.json", MANIFEST])
def test_a_deeply_nested_json_in_a_sealed_unit_is_moved_aside(
    tmp_path: Path, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Was an uncaught RecursionError from UnitStore.verify on every later run."""
    store = UnitStore(tmp_path, "p", "f")
    uid = _sealed(store)
    folder = store.path(uid)
    deep = '{"a":' * 50_000 + "1" + "}" * 50_000
    (folder / name).write_text(deep)
    if name != MANIFEST:  # sealed again: only the parse can tell
        (folder / MANIFEST).unlink()
        UnitStore._write_manifest(folder, uid, [p.name for p in folder.iterdir()])
    fresh = UnitStore(tmp_path, "p", "f")
    result = fresh.verify(uid)
    assert not result.ok
    with caplog.at_level(logging.WARNING, logger="privrepro.store"):
        assert not fresh.is_complete(uid)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "moved aside" in warnings[0] and "\n" not in warnings[0]
    assert not folder.exists()
    assert _sealed(fresh) == uid and fresh.is_complete(uid)  # computed again


def test_an_owner_record_that_is_a_pipe_does_not_stop_the_sweep(tmp_path: Path) -> None:
    store = UnitStore(tmp_path, "p", "f", stale_after_s=20.0)
    young = store.folder / ".tmp-young-x"
    young.mkdir(parents=True)
    os.mkfifo(young / ".owner.json")
    old = store.folder / ".tmp-old-x"
    old.mkdir()
    os.mkfifo(old / ".owner.json")
    t = time.time() - 60
    os.utime(old, (t, t))
    with bounded(20):
        removed = store.sweep_abandoned()
    assert removed == [old] and young.is_dir()  # ownerless: judged by its age


# -- caches: build folders killed writers left ---------------------------------------------------


def test_cache_build_folders_are_swept_only_when_their_writer_is_gone(tmp_path: Path) -> None:
    """What a SIGKILLed PEFT-member writer leaves in ``_cache/cl/members/``: its ``.tmp-*``
    folder (with its owner record) and its atomic writes' ``.tmp-*`` files."""
    members = tmp_path / "_cache" / "cl" / "members"
    members.mkdir(parents=True)
    dead_pid = int(
        subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    me = owner_record()

    def folder(name: str, owner: dict[str, object] | None, age: float = 0.0) -> Path:
        path = members / f".tmp-{name}-x"
        path.mkdir()
        if owner is not None:
            (path / ".owner.json").write_text(json.dumps(owner))
        (path / "member0.npz").write_bytes(b"partial")
        t = time.time() - age
        os.utime(path, (t, t))
        return path

    live = folder("live", me, age=7200)  # an old folder of a live writer: training takes hours
    dead = folder("dead", {**me, "pid": dead_pid, "process_start": 1})
    ownerless_young = folder("young", None, age=60)
    ownerless_old = folder("old", None, age=7200)
    stale_file = members / ".tmp-member0.npz-abc"
    stale_file.write_bytes(b"x")
    os.utime(stale_file, (time.time() - 7200,) * 2)
    fresh_file = members / ".tmp-member1.npz-abc"
    fresh_file.write_bytes(b"x")
    kept = members / "0123abcd"  # a published ensemble
    kept.mkdir()
    removed = set(sweep_build_folders(members, stale_after_s=3600))
    assert removed == {dead, ownerless_old, stale_file}
    for path in (live, ownerless_young, fresh_file, kept):
        assert path.exists()


# -- stand-in markers ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["deep", "pipe", "device", "oversized"])
def test_a_damaged_stand_in_marker_still_marks_and_lists_nothing(
    tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A marker that cannot be read marks its folder all the same (a stand-in never passes for
    the release), lists no file (so no stand-in file under it passes its check), and is said in
    one warning line; nothing raises or hangs."""
    from privrepro.data.provenance import REHEARSAL_MARKER, is_rehearsal_root, read_marker

    root = tmp_path / "data"
    root.mkdir()
    marker = root / REHEARSAL_MARKER
    if kind == "deep":
        marker.write_text('{"files":' * 50_000 + "{}" + "}" * 50_000)
    elif kind == "pipe":
        os.mkfifo(marker)
    elif kind == "device":
        marker.symlink_to("/dev/zero")
    else:
        with open(marker, "wb") as fh:
            fh.truncate(8 << 30)
    with bounded(20), caplog.at_level(logging.WARNING, logger="privrepro.data"):
        assert read_marker(root) == {}
        assert is_rehearsal_root(root / "cifar-10-batches-py")
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(lines) == 1 and str(marker) in lines[0] and "\n" not in lines[0]


# -- caches the libraries keep: the ip base model, PEFT members, Optuna journals ------------------


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
@pytest.mark.parametrize("fault", ["pickle", "pipe", "device", "cut"])
def test_a_damaged_ip_logits_cache_is_set_aside_and_built_again(
    tmp_path: Path, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Was: a pickle in ``logits.pt`` gave an ``UnpicklingError`` traceback on every run."""
    import io
    import pickle

    import torch

    from privrepro.inference.basemodels import _cached_base

    folder = tmp_path / "ip" / "base-0123456789abcdef"
    folder.mkdir(parents=True)
    model = torch.nn.Linear(3, 2)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    (folder / "model.pt").write_bytes(buf.getvalue())
    buf = io.BytesIO()
    torch.save(torch.zeros(5, 2), buf)
    (folder / "logits.pt").write_bytes(buf.getvalue())
    (folder / "meta.json").write_text(json.dumps({"clean_accuracy": 0.5}))
    fresh = torch.nn.Linear(3, 2)
    assert _cached_base(folder, fresh, 5) is not None  # the intact entry loads
    assert torch.equal(fresh.weight, model.weight)
    logits = folder / "logits.pt"
    logits.unlink()
    if fault == "pickle":  # a pickle that would run code if unpickled unrestricted
        logits.write_bytes(pickle.dumps(os.system))
    elif fault == "pipe":
        os.mkfifo(logits)
    elif fault == "device":
        logits.symlink_to("/dev/zero")
    else:
        logits.write_bytes(buf.getvalue()[:40])
    untouched = torch.nn.Linear(3, 2)
    weight = untouched.weight.detach().clone()
    with bounded(20), caplog.at_level(logging.WARNING, logger="privrepro.inference"):
        assert _cached_base(folder, untouched, 5) is None  # the caller builds it again
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(lines) == 1 and str(folder) in lines[0] and "moved aside" in lines[0]
    assert not any(os.path.lexists(folder / n) for n in ("model.pt", "logits.pt", "meta.json"))
    assert len(list(folder.glob(".corrupt-*"))) == 3
    assert torch.equal(untouched.weight, weight)  # a refused cache leaves the model as built


def test_damaged_kept_peft_members_are_moved_aside_and_trained_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from privrepro.continual.peft.shared_members import member_folder, shared_members

    folder = member_folder(tmp_path, "k" * 16)
    folder.mkdir(parents=True)
    os.mkfifo(folder / "members.json")
    trained = []

    def train() -> Iterator[Any]:
        trained.append(True)
        return iter([])

    with bounded(20), caplog.at_level(logging.WARNING, logger="privrepro.continual"):
        out = list(
            shared_members(
                "k" * 16, tmp_path, train, nb_tasks=0, backbone=None, dim=4, device="cpu"
            )
        )
    assert out == [] and trained == [True]
    assert not folder.exists() and len(list(folder.parent.glob(".corrupt-*"))) == 1
    assert any(str(folder) in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("kind", ["pipe", "device", "oversized"])
def test_a_journal_that_is_not_a_readable_file_is_refused_in_one_line(
    tmp_path: Path, kind: str
) -> None:
    from privrepro.config import ConfigError
    from privrepro.training.study_storage import check_storage

    journal = _specials(tmp_path / "studies")[kind]  # 8 GiB: above the journal bound
    with bounded(20), pytest.raises(ConfigError) as info:
        check_storage("params.tuning.storage", journal)
    assert "\n" not in str(info.value) and str(journal) in str(info.value)
    check_storage("params.tuning.storage", tmp_path / "studies" / "new.log")  # absent: fine
