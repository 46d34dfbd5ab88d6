"""Run units on disk: ``experiments/<paper>/<figure>/<unit_id>/``, sealed and verified.

A unit's folder holds ``config.json`` (the unit's identity, :mod:`~privrepro.store.identity`),
``rows.csv`` and ``rows.parquet`` (its result rows), ``log.txt``, ``env.json`` (git sha, package
versions, device, profile, wall time) and, written last, ``manifest.json``: its seal
(:mod:`~privrepro.store.seal`). A folder that fails verification is reported (one warning line
naming it and why), moved aside to ``.corrupt-<unit_id>-<time>`` in the same figure folder, and
never read; the run that needs it computes it again. No state of a unit folder stops a later run.
A unit is computed in a build folder (:mod:`~privrepro.store.build_folders`); two workers
computing the same unit both finish, and the second finds the unit published and verified, and
drops its copy. The figure's table lock is :mod:`~privrepro.store.table_lock`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.bounded_read import UNIT_JSON_BYTES, read_json
from privrepro.store import table_lock as _table_lock
from privrepro.store.atomic import (
    atomic_write_bytes,
    atomic_write_text,
    folder_mode,
    fsync_dir,
    parquet_bytes,
)
from privrepro.store.build_folders import (
    BUILD_PREFIX,
    HEARTBEAT,
    OWNER,
    TRASH_PREFIX,
    Heartbeat,
    owner_record,
    remove_path,
    sweep_abandoned,
)
from privrepro.store.identity import UNIT_ID
from privrepro.store.seal import (
    ENV,
    MANIFEST,
    Verification,
    check_unsealed,
    os_reason,
    verify_unit,
    write_manifest,
)

__all__ = ["UnitStore", "figure_stores"]

log = logging.getLogger("privrepro.store")

_CORRUPT_PREFIX = ".corrupt-"


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

    def verify(self, unit_id: str) -> Verification:
        """Check one unit folder against its manifest; never modifies it, never blocks
        (:func:`~privrepro.store.seal.verify_unit`)."""
        return verify_unit(self.path(unit_id), unit_id, self.paper, self.figure, self._verified)

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
                os_reason(exc),
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
                if not os.path.lexists(folder / MANIFEST) and (folder / ENV).is_file():
                    out.append(uid)
        return out

    def check_unsealed(self, unit_id: str) -> Verification:
        """The rule units written before manifests were written under, strengthened
        (:func:`~privrepro.store.seal.check_unsealed`)."""
        return check_unsealed(self.path(unit_id), unit_id, self.paper, self.figure)

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
        out: dict[str, Any] = read_json(self.path(unit_id) / ENV, UNIT_JSON_BYTES)
        return out

    # -- writing -------------------------------------------------------------------------------

    def discard(self, unit_id: str) -> None:
        """Remove a unit (``force=true``): renamed aside first, so readers never see half."""
        folder = self.path(unit_id)
        if folder.exists() or folder.is_symlink():
            trash = self.folder / f"{TRASH_PREFIX}{unit_id}-{os.getpid()}-{time.time_ns()}"
            try:
                os.replace(folder, trash)
            except FileNotFoundError:
                return
            self._verified.pop(unit_id, None)
            remove_path(trash)

    @contextlib.contextmanager
    def building(self, unit_id: str, replace: bool = False) -> Iterator[Path]:
        """A private build folder for a unit, owned by this process and kept alive by a heartbeat.

        Yields the folder; on normal exit (after :meth:`write_unit` sealed it) it is renamed into
        place, or dropped when another worker published the same unit first; on an exception it
        is removed. ``replace`` (``force=true``): a unit already stored is replaced by the new one
        only once the new one is sealed, so a recompute that fails leaves the stored unit whole.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"{BUILD_PREFIX}{unit_id}-", dir=self.folder))
        try:
            os.chmod(tmp, folder_mode())
            (tmp / OWNER).write_text(json.dumps(owner_record()))
            with Heartbeat(tmp / HEARTBEAT, self.heartbeat_s):
                yield tmp
            if not (tmp / MANIFEST).is_file():
                raise RuntimeError(f"unit {unit_id} was not sealed ({MANIFEST} missing)")
            if replace:
                self.discard(unit_id)
            published = self._publish(tmp, unit_id)  # owned until the rename: never swept live
        except BaseException:
            remove_path(tmp)
            raise
        if published:  # the owner record is not part of the unit (the manifest ignores it)
            for name in (OWNER, HEARTBEAT):
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
                    remove_path(tmp)  # another worker published it first
                    return False
                if result.exists:
                    self.quarantine(unit_id, result.reason)
        raise RuntimeError(f"unit {unit_id}: could not publish {tmp.name}")

    @staticmethod
    def _write_manifest(folder: Path, unit_id: str, names: list[str]) -> None:
        """Seal a filled build folder (:func:`~privrepro.store.seal.write_manifest`)."""
        write_manifest(folder, unit_id, names)

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
        unit_id = tmp.name[len(BUILD_PREFIX) :].split("-", 1)[0]
        names = [p.name for p in tmp.iterdir() if p.is_file() and not p.name.startswith(".")]
        UnitStore._write_manifest(tmp, unit_id, names)

    # -- sweeping ------------------------------------------------------------------------------

    def sweep_abandoned(self) -> list[Path]:
        """Remove build folders whose owner is gone and leftover trash; return what went."""
        return sweep_abandoned(self.folder, self.stale_after_s)

    def lock_path(self) -> Path:
        """The file lock serialising the derivation of this figure's table."""
        return self.folder / _table_lock.LOCK_NAME

    def table_lock(self) -> contextlib.AbstractContextManager[None]:
        """Hold the figure's table lock (an exclusive ``flock`` on :meth:`lock_path`;
        :func:`~privrepro.store.table_lock.table_lock`)."""
        return _table_lock.table_lock(self.folder)


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
