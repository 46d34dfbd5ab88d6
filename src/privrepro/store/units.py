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

**Units written before manifests** (``env.json`` as the completion marker, no ``manifest.json``)
are verified once by the rule they were written under, strengthened: the config must hash to the
folder's name, ``rows.csv`` must parse, and where ``rows.parquet`` exists the two must hold the
same table (the CSV export of the Parquet equals the CSV byte for byte). A unit that passes is
sealed in place (its manifest is written then); one that fails is moved aside like any other.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import platform
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.processes import process_alive, process_start
from privrepro.store.atomic import atomic_write_text, folder_mode, fsync_dir

__all__ = [
    "MANIFEST",
    "UNIT_ID",
    "UnitStore",
    "Verification",
    "canonical_json",
    "unit_hash",
]

log = logging.getLogger("privrepro.store")

MANIFEST = "manifest.json"  # written last: the unit's seal
_LEGACY_MARKER = "env.json"  # the completion marker of units written before manifests
_REQUIRED = ("config.json", "env.json", "rows.csv")
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
    legacy: bool = False


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
            st = (folder / name).stat()
            out.append((name, st.st_size, st.st_mtime_ns, st.st_ino))
        return tuple(out)

    def verify(self, unit_id: str) -> Verification:
        """Check one unit folder against its manifest (or the legacy rule); never modifies it."""
        folder = self.path(unit_id)
        if not folder.exists() and not folder.is_symlink():
            return Verification(False, "absent", exists=False)
        if not folder.is_dir():
            return Verification(False, "not a folder")
        manifest_path = folder / MANIFEST
        if not manifest_path.is_file():
            if (folder / _LEGACY_MARKER).is_file():
                return self._verify_legacy(unit_id)
            return Verification(False, f"no {MANIFEST}: the unit was never sealed")
        try:
            manifest = json.loads(manifest_path.read_text())
            files: dict[str, dict[str, Any]] = manifest["files"]
            sealed_id = manifest["unit_id"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return Verification(False, f"{MANIFEST} unreadable ({type(exc).__name__})")
        if sealed_id != unit_id:
            return Verification(False, f"{MANIFEST} seals unit {sealed_id}, not {unit_id}")
        missing = [n for n in _REQUIRED if n not in files]
        if missing:
            return Verification(False, f"{MANIFEST} lists no {missing[0]}")
        try:
            key = (_sha256(manifest_path), self._stat_key(folder, sorted(files)))
        except OSError as exc:
            return Verification(
                False, f"{Path(exc.filename or '?').name} missing", exists=folder.exists()
            )
        if self._verified.get(unit_id) == key:
            return Verification(True)
        for name, expected in sorted(files.items()):
            path = folder / name
            try:
                size, digest = path.stat().st_size, _sha256(path)
            except OSError:  # removed under us (force=true elsewhere): absent if the folder is
                return Verification(False, f"{name} unreadable", exists=folder.exists())
            if size != expected.get("bytes"):
                return Verification(
                    False, f"{name} has {size} bytes, sealed with {expected.get('bytes')}"
                )
            if digest != expected.get("sha256"):
                return Verification(False, f"{name} differs from its sealed hash")
        identity = self._config(folder)
        if identity is None or unit_hash(identity) != unit_id:
            return Verification(False, "config.json does not hash to the unit's name")
        self._verified[unit_id] = key
        return Verification(True)

    @staticmethod
    def _config(folder: Path) -> Any:
        try:
            return json.loads((folder / "config.json").read_text())
        except (OSError, ValueError):
            return None

    def _verify_legacy(self, unit_id: str) -> Verification:
        folder = self.path(unit_id)
        identity = self._config(folder)
        if not isinstance(identity, dict) or unit_hash(identity) != unit_id:
            return Verification(False, "config.json does not hash to the unit's name", legacy=True)
        try:
            json.loads((folder / _LEGACY_MARKER).read_text())
            text = (folder / "rows.csv").read_text()
            pd.read_csv(folder / "rows.csv")
        except Exception as exc:
            return Verification(False, f"unreadable ({type(exc).__name__})", legacy=True)
        if not text.endswith("\n"):
            return Verification(False, "rows.csv is cut short", legacy=True)
        parquet = folder / "rows.parquet"
        if parquet.is_file():
            try:
                same = pd.read_parquet(parquet).to_csv(index=False) == text
            except Exception as exc:
                return Verification(
                    False, f"rows.parquet unreadable ({type(exc).__name__})", legacy=True
                )
            if not same:
                return Verification(False, "rows.csv and rows.parquet differ", legacy=True)
        return Verification(True, legacy=True)

    def quarantine(self, unit_id: str, reason: str) -> Path | None:
        """Move a unit folder that failed verification aside; one warning line names it."""
        folder = self.path(unit_id)
        aside = self.folder / f"{_CORRUPT_PREFIX}{unit_id}-{time.time_ns()}"
        try:
            os.rename(folder, aside)
        except FileNotFoundError:
            return None  # another worker moved it first
        fsync_dir(self.folder)
        log.warning(
            "unit %s failed verification (%s): moved aside to %s; it is recomputed when needed",
            folder,
            reason,
            aside.name,
        )
        return aside

    def is_complete(self, unit_id: str) -> bool:
        """Whether the unit is present and verified (a legacy unit passing is sealed here).

        A folder that fails verification is moved aside (and a warning logged), so the caller
        can compute the unit again.
        """
        result = self.verify(unit_id)
        if result.ok:
            if result.legacy:
                self._seal_in_place(unit_id)
            return True
        if result.exists:
            self.quarantine(unit_id, result.reason)
        return False

    def _seal_in_place(self, unit_id: str) -> None:
        """Write the manifest of a verified legacy unit (the one-time migration)."""
        folder = self.path(unit_id)
        names = [
            p.name
            for p in folder.iterdir()
            if p.is_file() and p.name != MANIFEST and not p.name.startswith(".")
        ]
        with contextlib.suppress(OSError):
            self._write_manifest(folder, unit_id, names)

    # -- reading -------------------------------------------------------------------------------

    def load_rows(self, unit_id: str) -> pd.DataFrame:
        folder = self.path(unit_id)
        parquet = folder / "rows.parquet"
        if parquet.is_file():
            return pd.read_parquet(parquet)
        return pd.read_csv(folder / "rows.csv")

    def load_config(self, unit_id: str) -> dict[str, Any]:
        return json.loads((self.path(unit_id) / "config.json").read_text())

    def load_env(self, unit_id: str) -> dict[str, Any]:
        return json.loads((self.path(unit_id) / "env.json").read_text())

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
    def building(self, unit_id: str) -> Iterator[Path]:
        """A private build folder for a unit, owned by this process and kept alive by a heartbeat.

        Yields the folder; on normal exit (after :meth:`write_unit` sealed it) it is renamed into
        place, or dropped when another worker published the same unit first; on an exception it
        is removed.
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
            rows.to_parquet(tmp / "rows.parquet", index=False)
        except (ValueError, TypeError, ImportError):
            (tmp / "rows.parquet").unlink(missing_ok=True)  # mixed-type columns: the CSV alone
        atomic_write_text(tmp / "env.json", json.dumps(env, indent=2, sort_keys=True, default=str))
        unit_id = tmp.name[len(_BUILD_PREFIX) :].split("-", 1)[0]
        names = [p.name for p in tmp.iterdir() if p.is_file() and not p.name.startswith(".")]
        UnitStore._write_manifest(tmp, unit_id, names)

    # -- sweeping ------------------------------------------------------------------------------

    def _abandoned(self, entry: Path, now: float) -> bool:
        """Whether a build folder's owner is provably gone."""
        try:
            owner = json.loads((entry / _OWNER).read_text())
        except (OSError, ValueError):
            owner = None
        if not isinstance(owner, dict):
            try:
                return now - entry.stat().st_mtime > self.stale_after_s
            except FileNotFoundError:
                return False
        same_machine = owner.get("host") == platform.node() and owner.get("boot_id") == _boot_id()
        if same_machine and owner.get("boot_id"):
            return not process_alive(int(owner.get("pid", -1)), owner.get("process_start"))
        try:
            beat = (entry / _HEARTBEAT).stat().st_mtime
        except FileNotFoundError:
            beat = float(owner.get("started", 0.0))
        return now - beat > self.stale_after_s

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


def _remove(path: Path) -> None:
    """Remove a folder (or file) that no reader looks at; missing parts are fine."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
