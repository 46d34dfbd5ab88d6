"""A unit's seal, ``manifest.json``, and the verification that reads it.

The manifest, written last, lists the size and SHA-256 of every other file of the unit.
**Complete means verified**: a unit counts as complete only when its manifest names the folder,
every file it lists has the listed size and hash, and the config hashes to the folder's name.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.bounded_read import UNIT_JSON_BYTES, file_kind, parse_json, read_bytes, read_json
from privrepro.store.atomic import atomic_write_text
from privrepro.store.identity import identity_problem, is_of, unit_hash

__all__ = [
    "ENV",
    "MANIFEST",
    "NotRegular",
    "Verification",
    "check_unsealed",
    "os_reason",
    "regular_stat",
    "sha256_file",
    "verify_unit",
    "write_manifest",
]

MANIFEST = "manifest.json"  # written last: the unit's seal
ENV = "env.json"
_REQUIRED = ("config.json", ENV, "rows.csv")
_MAX_MANIFEST_BYTES = 1 << 20  # a manifest lists a handful of files


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class Verification:
    """The outcome of verifying one unit folder."""

    ok: bool
    reason: str = ""
    exists: bool = True


def regular_stat(path: Path) -> os.stat_result:
    """``lstat`` of ``path``; raises :class:`NotRegular` unless it is a regular file."""
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegular(path.name, file_kind(st.st_mode))
    return st


class NotRegular(Exception):
    """A unit's file is not a regular file (a pipe, a device, a link): it is never opened."""

    def __init__(self, name: str, kind: str) -> None:
        super().__init__(f"{name} is {kind}, not a regular file")


def os_reason(exc: OSError) -> str:
    """An I/O error in a few words, with the file it concerns."""
    name = Path(exc.filename).name if exc.filename else ""
    what = exc.strerror or type(exc).__name__
    return f"{name}: {what}" if name else what


def _manifest_files(data: bytes, unit_id: str) -> tuple[str, dict[str, dict[str, Any]]]:
    """The files a manifest seals (plain names → ``{"bytes": int, "sha256": str}``), or a
    reason it is not a valid seal of ``unit_id``."""
    try:
        manifest = parse_json(data)
        files = manifest["files"]
        sealed_id = manifest["unit_id"]
    except (ValueError, KeyError, TypeError) as exc:
        return f"{MANIFEST} unreadable ({type(exc).__name__})", {}
    if sealed_id != unit_id:
        return f"{MANIFEST} seals unit {sealed_id}, not {unit_id}", {}
    if not isinstance(files, dict):
        return f"{MANIFEST} lists no files", {}
    for name, entry in files.items():
        plain = isinstance(name, str) and name == Path(name).name and not name.startswith(".")
        ok = (
            isinstance(entry, dict)
            and is_of(entry.get("bytes"), int)
            and isinstance(entry.get("sha256"), str)
        )
        if not (plain and ok and name != MANIFEST):
            return f"{MANIFEST} has an invalid entry {str(name)[:40]!r}", {}
    missing = [n for n in _REQUIRED if n not in files]
    if missing:
        return f"{MANIFEST} lists no {missing[0]}", {}
    return "", files


def write_manifest(folder: Path, unit_id: str, names: list[str]) -> None:
    """Seal ``folder`` as ``unit_id``: the size and SHA-256 of each of ``names``, written last."""
    files = {}
    for name in sorted(names):
        path = folder / name
        files[name] = {"bytes": path.stat().st_size, "sha256": sha256_file(path)}
    manifest = {"format": 1, "unit_id": unit_id, "files": files}
    atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True))


def _stat_key(folder: Path, names: list[str]) -> tuple[Any, ...]:
    out = []
    for name in names:
        st = regular_stat(folder / name)
        out.append((name, st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(out)


def verify_unit(
    folder: Path, unit_id: str, paper: str, figure: str, verified: dict[str, tuple[Any, ...]]
) -> Verification:
    """Check one unit folder of ``paper/figure`` against its manifest; never modifies it.

    Any I/O error (a folder or file this process may not read, a file removed under us) is a
    failed verification, like a wrong hash; so is a listed file that is not a regular file
    (it is never opened).

    Args:
        folder: the unit's folder, named ``unit_id``.
        verified: unit id → the manifest's hash and the files' stat of the last success; a unit
            whose key is unchanged is not hashed again (updated here).
    """
    try:
        return _verify(folder, unit_id, paper, figure, verified)
    except NotRegular as exc:
        return Verification(False, str(exc))
    except OSError as exc:
        return Verification(False, f"unreadable ({os_reason(exc)})", exists=os.path.lexists(folder))
    except RecursionError:  # a last guard: every parse is depth-bounded before it starts
        return Verification(False, "a file nests too deep to parse")


def _verify(
    folder: Path, unit_id: str, paper: str, figure: str, verified: dict[str, tuple[Any, ...]]
) -> Verification:
    if not os.path.lexists(folder):
        return Verification(False, "absent", exists=False)
    if not folder.is_dir():
        return Verification(False, "not a folder")
    manifest_path = folder / MANIFEST
    try:
        mst = regular_stat(manifest_path)
    except FileNotFoundError:
        return Verification(False, f"no {MANIFEST}: the unit is not sealed")
    if mst.st_size > _MAX_MANIFEST_BYTES:
        return Verification(False, f"{MANIFEST} is {mst.st_size} bytes: not a manifest")
    problem, files = _manifest_files(read_bytes(manifest_path, _MAX_MANIFEST_BYTES), unit_id)
    if problem:
        return Verification(False, problem)
    try:
        key = (sha256_file(manifest_path), _stat_key(folder, sorted(files)))
    except FileNotFoundError as exc:
        return Verification(
            False, f"{Path(exc.filename or '?').name} missing", exists=folder.exists()
        )
    if verified.get(unit_id) == key:
        return Verification(True)
    for name, expected in sorted(files.items()):
        path = folder / name
        size = regular_stat(path).st_size
        if size != expected["bytes"]:  # before reading: a huge file is never hashed
            return Verification(False, f"{name} has {size} bytes, sealed with {expected['bytes']}")
        if sha256_file(path) != expected["sha256"]:
            return Verification(False, f"{name} differs from its sealed hash")
    try:
        identity = read_json(folder / "config.json", UNIT_JSON_BYTES)
        env = read_json(folder / ENV, UNIT_JSON_BYTES)
    except ValueError as exc:
        return Verification(False, f"config.json or env.json is not JSON ({exc})")
    why = identity_problem(identity, paper, figure)
    if why:
        return Verification(False, why)
    if unit_hash(identity) != unit_id:
        return Verification(False, "config.json does not hash to the unit's name")
    if not isinstance(env, dict):
        return Verification(False, f"{ENV} holds a {type(env).__name__}, not an object")
    verified[unit_id] = key
    return Verification(True)


def check_unsealed(folder: Path, unit_id: str, paper: str, figure: str) -> Verification:
    """The rule units written before manifests were written under, strengthened.

    The config belongs to this figure and hashes to the folder's name, ``env.json`` is a JSON
    object, every file is a regular file, ``rows.csv`` parses and ends with a newline, and
    where ``rows.parquet`` exists, the CSV export of the Parquet equals ``rows.csv`` byte for
    byte. It cannot tell rows edited consistently in both files from the computed ones.
    """
    try:
        names = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
        for name in names:
            regular_stat(folder / name)
        identity = read_json(folder / "config.json", UNIT_JSON_BYTES)
        problem = identity_problem(identity, paper, figure)
        if problem:
            return Verification(False, problem)
        if unit_hash(identity) != unit_id:
            return Verification(False, "config.json does not hash to the unit's name")
        if not isinstance(read_json(folder / ENV, UNIT_JSON_BYTES), dict):
            return Verification(False, f"{ENV} is not a JSON object")
        text = (folder / "rows.csv").read_text()
        pd.read_csv(folder / "rows.csv")
    except NotRegular as exc:
        return Verification(False, str(exc))
    except OSError as exc:
        return Verification(False, f"unreadable ({os_reason(exc)})")
    except Exception as exc:  # pandas' parse errors, JSON errors
        return Verification(False, f"unreadable ({type(exc).__name__})")
    if not text.endswith("\n"):
        return Verification(False, "rows.csv is cut short")
    parquet = folder / "rows.parquet"
    if parquet.is_file():
        try:
            same = pd.read_parquet(parquet).to_csv(index=False) == text
        except Exception as exc:
            return Verification(False, f"rows.parquet unreadable ({type(exc).__name__})")
        if not same:
            return Verification(False, "rows.csv and rows.parquet differ")
    return Verification(True)
