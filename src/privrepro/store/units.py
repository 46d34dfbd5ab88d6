"""Run units on disk: ``experiments/<paper>/<figure>/<unit_id>/``, sealed and verified.

A unit's folder holds ``config.json`` (the unit's identity: figure, profile, seed, recipe and
version, the unit dict), ``rows.csv`` and ``rows.parquet`` (its result rows), ``log.txt``,
``env.json`` (git sha, package versions, device, profile, wall time) and, written last,
``manifest.json``: the size and SHA-256 of every other file. The folder's name is the hash of
``config.json`` (:func:`unit_hash`).

**Complete means verified.** A unit counts as complete only when its manifest names the folder,
every file it lists has the listed size and hash, and the config hashes to the folder's name. A
folder that fails is reported (one warning line naming it and why), moved aside to
``.corrupt-<unit_id>-<time>`` in the same figure folder, and never read; the run that needs it
computes it again. No state of a unit folder stops a later run.

**Built privately, published in one step.** A unit is computed in ``.tmp-<unit_id>-<random>/``
and renamed into place once sealed, so a worker killed at any instant (SIGKILL included) leaves
no partial unit. Two workers computing the same unit both finish; the second finds the unit
published and verified, and drops its copy.

**Live build folders are never swept.** A build folder records its owner (host, boot id, pid and
the process's start time) and a heartbeat file the owner touches every ``heartbeat_s`` while the
unit computes. :meth:`UnitStore.sweep_abandoned` removes a build folder only when its owner is
provably gone: on the same host (and boot), the process no longer exists (or its pid now belongs
to a younger process); on another host, the heartbeat is older than ``stale_after_s``. A folder
with no owner record (a worker killed before writing it) is removed once older than
``stale_after_s``.

**A unit belongs to one figure.** Its ``config.json`` must be a JSON object of the identity's
form (``paper``, ``figure``, ``profile``, ``seed``, ``recipe``, ``version``, ``unit`` and, for a
unit that read a data root, ``data``) naming the store's paper and figure
(:func:`identity_problem`); a unit copied into another figure's folder fails verification.

**Nothing in a unit folder can stop a reader.** Every listed file must be a regular file (a named
pipe, a device or a symbolic link fails verification before it is opened); a folder or file the
process cannot read, and any other I/O error while verifying, is a verification failure like a
wrong hash.

**Missing seals are not a lesser seal.** A folder without a valid manifest fails verification
and is moved aside like any other. Units written before manifests existed (``env.json`` and no
``manifest.json``) are sealed only by the explicit migration ``python -m privrepro.store.migrate``
(:meth:`UnitStore.seal_unsealed`), which lists every unit it seals and the rule it checked.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import platform
import re
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.bounded_read import (
    UNIT_JSON_BYTES,
    file_kind,
    parse_json,
    read_bytes,
    read_json,
)
from privrepro.processes import process_alive, process_start
from privrepro.store.atomic import (
    atomic_write_bytes,
    atomic_write_text,
    folder_mode,
    fsync_dir,
    parquet_bytes,
)

__all__ = [
    "IDENTITY_KEYS",
    "MANIFEST",
    "UNIT_ID",
    "UnitStore",
    "Verification",
    "canonical_json",
    "figure_stores",
    "identity_problem",
    "owner_gone",
    "owner_record",
    "sweep_build_folders",
    "unit_belongs",
    "unit_hash",
]

log = logging.getLogger("privrepro.store")

MANIFEST = "manifest.json"  # written last: the unit's seal
_ENV = "env.json"
_REQUIRED = ("config.json", _ENV, "rows.csv")
_OWNER = ".owner.json"  # inside a build folder only
_HEARTBEAT = ".heartbeat"
_BUILD_PREFIX = ".tmp-"
_TRASH_PREFIX = ".trash-"
_CORRUPT_PREFIX = ".corrupt-"
UNIT_ID = re.compile(r"^[0-9a-f]{16}$")


def canonical_json(obj: Any) -> str:
    """Stable JSON: sorted keys, no whitespace, floats in their shortest round-trip form."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str, allow_nan=True)


def unit_hash(identity: Mapping[str, Any]) -> str:
    """The 16-hex-digit hash that names a unit's folder."""
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()[:16]


def _sha256(path: Path) -> str:
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


#: The keys of a unit's identity (``config.json``) and the JSON type each must have; ``data``
#: (the fingerprint of the data a unit read from a data root) is present only for such units.
IDENTITY_KEYS: dict[str, type] = {
    "paper": str,
    "figure": str,
    "profile": str,
    "seed": int,
    "recipe": str,
    "version": int,
    "unit": dict,
}
_OPTIONAL_KEYS: dict[str, type] = {"data": str}
_MAX_MANIFEST_BYTES = 1 << 20  # a manifest lists a handful of files


def _is(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def identity_problem(identity: Any, paper: str, figure: str) -> str | None:
    """Why ``identity`` (a parsed ``config.json``) is not a unit of ``paper/figure``, or ``None``.

    The identity must be a JSON object with exactly the keys of :data:`IDENTITY_KEYS` (plus, for a
    unit that read a data root, ``data``), each of its type (``seed`` and ``version`` integers,
    ``seed >= 0``, ``unit`` an object), and name ``paper`` and ``figure``.
    """
    if not isinstance(identity, dict):
        return f"config.json holds a {type(identity).__name__}, not an object"
    allowed = {**IDENTITY_KEYS, **_OPTIONAL_KEYS}
    unknown = sorted(set(identity) - set(allowed))
    if unknown:
        return f"config.json has the unknown key {unknown[0]!r}"
    for key, kind in allowed.items():
        if key not in identity and key in _OPTIONAL_KEYS:
            continue
        value = identity.get(key)
        if not _is(value, kind):
            return f"config.json: {key} = {json.dumps(value, default=str)[:60]} is not a {kind.__name__}"
    if identity["seed"] < 0:
        return f"config.json: seed = {identity['seed']} is negative"
    if (identity["paper"], identity["figure"]) != (paper, figure):
        return (
            f"config.json names the figure {identity['paper']}/{identity['figure']}, "
            f"not {paper}/{figure}"
        )
    return None


def unit_belongs(identity: Any, paper: str, figure: str) -> bool:
    """Whether ``identity`` is a well-formed unit identity of ``paper/figure``."""
    return identity_problem(identity, paper, figure) is None


def _regular(path: Path) -> os.stat_result:
    """``lstat`` of ``path``; raises ``_NotRegular`` unless it is a regular file."""
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _NotRegular(path.name, file_kind(st.st_mode))
    return st


class _NotRegular(Exception):
    def __init__(self, name: str, kind: str) -> None:
        super().__init__(f"{name} is {kind}, not a regular file")


def _os_reason(exc: OSError) -> str:
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
            and _is(entry.get("bytes"), int)
            and isinstance(entry.get("sha256"), str)
        )
        if not (plain and ok and name != MANIFEST):
            return f"{MANIFEST} has an invalid entry {str(name)[:40]!r}", {}
    missing = [n for n in _REQUIRED if n not in files]
    if missing:
        return f"{MANIFEST} lists no {missing[0]}", {}
    return "", files


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def owner_record() -> dict[str, Any]:
    """Who builds a unit: host, boot id, pid and the process's start time."""
    return {
        "host": platform.node(),
        "boot_id": _boot_id(),
        "pid": os.getpid(),
        "process_start": process_start(os.getpid()),
        "started": time.time(),
    }


def owner_gone(entry: Path, stale_after_s: float, now: float | None = None) -> bool:
    """Whether the owner of the build folder ``entry`` (its ``.owner.json``,
    :func:`owner_record`) is provably gone: on this host and boot, its process no longer exists
    (or its pid now belongs to a younger process); elsewhere, its heartbeat (``.heartbeat``, else
    the time it started) is older than ``stale_after_s``. A folder with no readable owner record
    is gone once its own modification time is older than ``stale_after_s``."""
    now = time.time() if now is None else now
    try:
        owner = read_json(entry / _OWNER, 1 << 16)
    except (OSError, ValueError):
        owner = None
    if not isinstance(owner, dict):
        try:
            return now - entry.stat().st_mtime > stale_after_s
        except FileNotFoundError:
            return False
    same_machine = owner.get("host") == platform.node() and owner.get("boot_id") == _boot_id()
    if same_machine and owner.get("boot_id"):
        try:
            pid = int(owner.get("pid", -1))
        except (TypeError, ValueError):
            pid = -1
        return not process_alive(pid, owner.get("process_start"))
    try:
        beat = (entry / _HEARTBEAT).stat().st_mtime
    except FileNotFoundError:
        try:
            beat = float(owner.get("started", 0.0))
        except (TypeError, ValueError):
            beat = 0.0
    return now - beat > stale_after_s


def sweep_build_folders(folder: Path, stale_after_s: float) -> list[Path]:
    """Remove the ``.tmp-*`` build folders in ``folder`` whose owner is gone
    (:func:`owner_gone`), and ``.tmp-*`` files older than ``stale_after_s`` (a killed atomic
    write's temporary); return what went. A live writer's folder is never removed."""
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    now = time.time()
    for entry in sorted(folder.glob(f"{_BUILD_PREFIX}*")):
        try:
            if entry.is_dir() and not entry.is_symlink():
                gone = owner_gone(entry, stale_after_s, now)
            else:
                gone = now - entry.lstat().st_mtime > stale_after_s
        except OSError:
            continue
        if gone:
            _remove(entry)
            removed.append(entry)
            log.info("removed abandoned %s", entry)
    return removed


class _Heartbeat:
    """Touch ``path`` every ``period`` seconds from a daemon thread until stopped."""

    def __init__(self, path: Path, period: float) -> None:
        self.path, self.period = path, period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="privrepro-heartbeat", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            try:
                os.utime(self.path)
            except OSError:
                return  # the folder is gone (published, or removed): nothing left to mark

    def __enter__(self) -> _Heartbeat:
        self.path.touch()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


@dataclass(frozen=True)
class UnitStore:
    """The units of one figure: ``root/<paper>/<figure>/<unit_id>/``.

    Attributes:
        heartbeat_s: how often a build folder's owner touches its heartbeat.
        stale_after_s: a heartbeat (or an ownerless build folder) older than this, on another
            host, marks an abandoned build folder; twenty heartbeat periods by default.
    """

    root: Path
    paper: str
    figure: str
    heartbeat_s: float = 30.0
    stale_after_s: float = 600.0
    _verified: dict[str, tuple[Any, ...]] = field(
        default_factory=dict, compare=False, hash=False, repr=False
    )

    @property
    def folder(self) -> Path:
        return Path(self.root) / self.paper / self.figure

    def path(self, unit_id: str) -> Path:
        return self.folder / unit_id

    # -- verification --------------------------------------------------------------------------

    def unit_ids(self) -> list[str]:
        """The names of the unit folders present (verified or not), sorted."""
        if not self.folder.is_dir():
            return []
        return sorted(e.name for e in self.folder.iterdir() if UNIT_ID.match(e.name))

    def _stat_key(self, folder: Path, names: list[str]) -> tuple[Any, ...]:
        out = []
        for name in names:
            st = _regular(folder / name)
            out.append((name, st.st_size, st.st_mtime_ns, st.st_ino))
        return tuple(out)

    def verify(self, unit_id: str) -> Verification:
        """Check one unit folder against its manifest; never modifies it, never blocks.

        Any I/O error (a folder or file this process may not read, a file removed under us) is a
        failed verification, like a wrong hash; so is a listed file that is not a regular file
        (it is never opened).
        """
        folder = self.path(unit_id)
        try:
            return self._verify(unit_id, folder)
        except _NotRegular as exc:
            return Verification(False, str(exc))
        except OSError as exc:
            return Verification(
                False, f"unreadable ({_os_reason(exc)})", exists=os.path.lexists(folder)
            )
        except RecursionError:  # a last guard: every parse is depth-bounded before it starts
            return Verification(False, "a file nests too deep to parse")

    def _verify(self, unit_id: str, folder: Path) -> Verification:
        if not os.path.lexists(folder):
            return Verification(False, "absent", exists=False)
        if not folder.is_dir():
            return Verification(False, "not a folder")
        manifest_path = folder / MANIFEST
        try:
            mst = _regular(manifest_path)
        except FileNotFoundError:
            return Verification(False, f"no {MANIFEST}: the unit is not sealed")
        if mst.st_size > _MAX_MANIFEST_BYTES:
            return Verification(False, f"{MANIFEST} is {mst.st_size} bytes: not a manifest")
        problem, files = _manifest_files(read_bytes(manifest_path, _MAX_MANIFEST_BYTES), unit_id)
        if problem:
            return Verification(False, problem)
        try:
            key = (_sha256(manifest_path), self._stat_key(folder, sorted(files)))
        except FileNotFoundError as exc:
            return Verification(
                False, f"{Path(exc.filename or '?').name} missing", exists=folder.exists()
            )
        if self._verified.get(unit_id) == key:
            return Verification(True)
        for name, expected in sorted(files.items()):
            path = folder / name
            size = _regular(path).st_size
            if size != expected["bytes"]:  # before reading: a huge file is never hashed
                return Verification(
                    False, f"{name} has {size} bytes, sealed with {expected['bytes']}"
                )
            if _sha256(path) != expected["sha256"]:
                return Verification(False, f"{name} differs from its sealed hash")
        try:
            identity = read_json(folder / "config.json", UNIT_JSON_BYTES)
            env = read_json(folder / _ENV, UNIT_JSON_BYTES)
        except ValueError as exc:
            return Verification(False, f"config.json or env.json is not JSON ({exc})")
        why = identity_problem(identity, self.paper, self.figure)
        if why:
            return Verification(False, why)
        if unit_hash(identity) != unit_id:
            return Verification(False, "config.json does not hash to the unit's name")
        if not isinstance(env, dict):
            return Verification(False, f"{_ENV} holds a {type(env).__name__}, not an object")
        self._verified[unit_id] = key
        return Verification(True)

    def quarantine(self, unit_id: str, reason: str) -> Path | None:
        """Move a unit folder that failed verification aside; one warning line names it.

        A folder that cannot be moved (the figure folder is not writable) is left where it is,
        reported in the same one line, and still never read.
        """
        folder = self.path(unit_id)
        self._verified.pop(unit_id, None)
        aside = self.folder / f"{_CORRUPT_PREFIX}{unit_id}-{time.time_ns()}"
        try:
            os.rename(folder, aside)
        except FileNotFoundError:
            return None  # another worker moved it first
        except OSError as exc:
            log.warning(
                "unit %s failed verification (%s) and could not be moved aside (%s); "
                "it is left out",
                folder,
                reason,
                _os_reason(exc),
            )
            return None
        fsync_dir(self.folder)
        log.warning(
            "unit %s failed verification (%s): moved aside to %s; it is recomputed when needed",
            folder,
            reason,
            aside.name,
        )
        return aside

    def is_complete(self, unit_id: str) -> bool:
        """Whether the unit is present and verified.

        A folder that fails verification is moved aside (and a warning logged), so the caller
        can compute the unit again.
        """
        result = self.verify(unit_id)
        if result.ok:
            return True
        if result.exists:
            self.quarantine(unit_id, result.reason)
        return False

    # -- units written before manifests (the explicit migration) --------------------------------

    def unsealed_ids(self) -> list[str]:
        """Unit folders written before manifests: ``env.json`` present, no ``manifest.json``."""
        out = []
        for uid in self.unit_ids():
            folder = self.path(uid)
            with contextlib.suppress(OSError):
                if not os.path.lexists(folder / MANIFEST) and (folder / _ENV).is_file():
                    out.append(uid)
        return out

    def check_unsealed(self, unit_id: str) -> Verification:
        """The rule units written before manifests were written under, strengthened.

        The config belongs to this figure and hashes to the folder's name, ``env.json`` is a JSON
        object, every file is a regular file, ``rows.csv`` parses and ends with a newline, and
        where ``rows.parquet`` exists, the CSV export of the Parquet equals ``rows.csv`` byte for
        byte. It cannot tell rows edited consistently in both files from the computed ones.
        """
        folder = self.path(unit_id)
        try:
            names = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
            for name in names:
                _regular(folder / name)
            identity = read_json(folder / "config.json", UNIT_JSON_BYTES)
            problem = identity_problem(identity, self.paper, self.figure)
            if problem:
                return Verification(False, problem)
            if unit_hash(identity) != unit_id:
                return Verification(False, "config.json does not hash to the unit's name")
            if not isinstance(read_json(folder / _ENV, UNIT_JSON_BYTES), dict):
                return Verification(False, f"{_ENV} is not a JSON object")
            text = (folder / "rows.csv").read_text()
            pd.read_csv(folder / "rows.csv")
        except _NotRegular as exc:
            return Verification(False, str(exc))
        except OSError as exc:
            return Verification(False, f"unreadable ({_os_reason(exc)})")
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

    def seal_unsealed(self, unit_id: str) -> tuple[Verification, list[str]]:
        """Seal a unit written before manifests once :meth:`check_unsealed` passes.

        Returns the check's outcome and the names of the files sealed (none when it failed;
        nothing is moved or changed then).
        """
        result = self.check_unsealed(unit_id)
        if not result.ok:
            return result, []
        folder = self.path(unit_id)
        names = sorted(
            p.name
            for p in folder.iterdir()
            if p.is_file() and p.name != MANIFEST and not p.name.startswith(".")
        )
        self._write_manifest(folder, unit_id, names)
        return result, names

    # -- reading -------------------------------------------------------------------------------

    def load_rows(self, unit_id: str) -> pd.DataFrame:
        folder = self.path(unit_id)
        parquet = folder / "rows.parquet"
        if parquet.is_file():
            return pd.read_parquet(parquet)
        return pd.read_csv(folder / "rows.csv")

    def load_config(self, unit_id: str) -> dict[str, Any]:
        """The unit's identity (bounded: :func:`~privrepro.bounded_read.read_json`)."""
        out: dict[str, Any] = read_json(self.path(unit_id) / "config.json", UNIT_JSON_BYTES)
        return out

    def load_env(self, unit_id: str) -> dict[str, Any]:
        """The unit's environment (bounded: :func:`~privrepro.bounded_read.read_json`)."""
        out: dict[str, Any] = read_json(self.path(unit_id) / _ENV, UNIT_JSON_BYTES)
        return out

    # -- writing -------------------------------------------------------------------------------

    def discard(self, unit_id: str) -> None:
        """Remove a unit (``force=true``): renamed aside first, so readers never see half."""
        folder = self.path(unit_id)
        if folder.exists() or folder.is_symlink():
            trash = self.folder / f"{_TRASH_PREFIX}{unit_id}-{os.getpid()}-{time.time_ns()}"
            try:
                os.replace(folder, trash)
            except FileNotFoundError:
                return
            self._verified.pop(unit_id, None)
            _remove(trash)

    @contextlib.contextmanager
    def building(self, unit_id: str, replace: bool = False) -> Iterator[Path]:
        """A private build folder for a unit, owned by this process and kept alive by a heartbeat.

        Yields the folder; on normal exit (after :meth:`write_unit` sealed it) it is renamed into
        place, or dropped when another worker published the same unit first; on an exception it
        is removed. ``replace`` (``force=true``): a unit already stored is replaced by the new one
        only once the new one is sealed, so a recompute that fails leaves the stored unit whole.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"{_BUILD_PREFIX}{unit_id}-", dir=self.folder))
        try:
            os.chmod(tmp, folder_mode())
            (tmp / _OWNER).write_text(json.dumps(owner_record()))
            with _Heartbeat(tmp / _HEARTBEAT, self.heartbeat_s):
                yield tmp
            if not (tmp / MANIFEST).is_file():
                raise RuntimeError(f"unit {unit_id} was not sealed ({MANIFEST} missing)")
            if replace:
                self.discard(unit_id)
            published = self._publish(tmp, unit_id)  # owned until the rename: never swept live
        except BaseException:
            _remove(tmp)
            raise
        if published:  # the owner record is not part of the unit (the manifest ignores it)
            for name in (_OWNER, _HEARTBEAT):
                (self.path(unit_id) / name).unlink(missing_ok=True)

    def _publish(self, tmp: Path, unit_id: str) -> bool:
        """Rename a sealed build folder into place; an invalid occupant is moved aside first.

        Returns ``False`` when another worker had published the unit (ours is dropped).
        """
        for _ in range(5):
            try:
                os.rename(tmp, self.path(unit_id))
                fsync_dir(self.folder)
                return True
            except OSError:
                result = self.verify(unit_id)
                if result.ok:
                    _remove(tmp)  # another worker published it first
                    return False
                if result.exists:
                    self.quarantine(unit_id, result.reason)
        raise RuntimeError(f"unit {unit_id}: could not publish {tmp.name}")

    @staticmethod
    def _write_manifest(folder: Path, unit_id: str, names: list[str]) -> None:
        files = {}
        for name in sorted(names):
            path = folder / name
            files[name] = {"bytes": path.stat().st_size, "sha256": _sha256(path)}
        manifest = {"format": 1, "unit_id": unit_id, "files": files}
        atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True))

    @staticmethod
    def write_unit(
        tmp: Path, config: Mapping[str, Any], rows: pd.DataFrame, env: Mapping[str, Any]
    ) -> None:
        """Fill a build folder and seal it: ``manifest.json`` goes last and marks completeness."""
        atomic_write_text(
            tmp / "config.json", json.dumps(config, indent=2, sort_keys=True, default=str)
        )
        atomic_write_text(tmp / "rows.csv", rows.to_csv(index=False))
        try:
            parquet = parquet_bytes(rows)
        except (ValueError, TypeError, ImportError, NotImplementedError):
            parquet = None  # mixed-type columns: the CSV alone
        if parquet is not None:  # written by Python: a full disk names the file
            atomic_write_bytes(tmp / "rows.parquet", parquet)
        atomic_write_text(tmp / "env.json", json.dumps(env, indent=2, sort_keys=True, default=str))
        unit_id = tmp.name[len(_BUILD_PREFIX) :].split("-", 1)[0]
        names = [p.name for p in tmp.iterdir() if p.is_file() and not p.name.startswith(".")]
        UnitStore._write_manifest(tmp, unit_id, names)

    # -- sweeping ------------------------------------------------------------------------------

    def _abandoned(self, entry: Path, now: float) -> bool:
        """Whether a build folder's owner is provably gone."""
        return owner_gone(entry, self.stale_after_s, now)

    def sweep_abandoned(self) -> list[Path]:
        """Remove build folders whose owner is gone and leftover trash; return what went."""
        if not self.folder.is_dir():
            return []
        removed = []
        now = time.time()
        for entry in sorted(self.folder.iterdir()):
            name = entry.name
            if name.startswith(_TRASH_PREFIX):
                _remove(entry)
                removed.append(entry)
            elif name.startswith(_BUILD_PREFIX):
                if entry.is_dir() and not entry.is_symlink():
                    if self._abandoned(entry, now):
                        _remove(entry)
                        removed.append(entry)
                else:
                    try:
                        old = now - entry.lstat().st_mtime > self.stale_after_s
                    except FileNotFoundError:
                        continue
                    if old:
                        entry.unlink(missing_ok=True)
                        removed.append(entry)
        for entry in removed:
            log.info("removed abandoned %s", entry)
        return removed

    def lock_path(self) -> Path:
        """The file lock serialising the derivation of this figure's table."""
        return self.folder / ".table.lock"

    @contextlib.contextmanager
    def table_lock(self) -> Iterator[None]:
        """Hold the figure's table lock (an exclusive ``flock`` on :meth:`lock_path`).

        A lock file this process may not write (another user's) is locked through a read-only
        descriptor, which ``flock`` allows, so both users still exclude each other. One it cannot
        open at all (unreadable, a folder, a pipe, a symbolic link) is moved aside to
        ``.corrupt-table.lock-<time>`` with one warning line, and a new one is made.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = self._open_lock()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def _open_lock(self) -> int:
        path = self.lock_path()
        flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        for _ in range(5):
            try:
                try:
                    fd = os.open(path, os.O_RDWR | os.O_CREAT | flags, 0o666)
                except PermissionError:
                    fd = os.open(path, os.O_RDONLY | flags)
            except FileNotFoundError:
                continue  # removed between the two opens
            except OSError as exc:
                self._lock_aside(path, _os_reason(exc))
                continue
            if stat.S_ISREG(os.fstat(fd).st_mode):
                return fd
            os.close(fd)
            self._lock_aside(path, f"{path.name} is not a regular file")
        raise OSError(errno.EACCES, "cannot open the table lock", str(path))

    def _lock_aside(self, path: Path, reason: str) -> None:
        aside = self.folder / f"{_CORRUPT_PREFIX}{path.name.lstrip('.')}-{time.time_ns()}"
        try:
            os.rename(path, aside)
        except FileNotFoundError:
            return
        log.warning(
            "the table lock %s cannot be used (%s): moved aside to %s", path, reason, aside.name
        )


def _remove(path: Path) -> None:
    """Remove a folder (or file) that no reader looks at; missing parts are fine."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def figure_stores(experiments_dir: str | Path) -> list[UnitStore]:
    """A store per ``experiments/<paper>/<figure>/`` folder (``_*`` and ``.*`` folders skipped)."""
    out: list[UnitStore] = []
    root = Path(experiments_dir)
    if not root.is_dir():
        return out
    for paper in sorted(root.iterdir()):
        if not paper.is_dir() or paper.name[0] in "._":
            continue
        for figure in sorted(paper.iterdir()):
            if figure.is_dir() and figure.name[0] not in "._":
                out.append(UnitStore(root, paper.name, figure.name))
    return out
