"""Run units on disk: ``experiments/<paper>/<figure>/<hash>/``.

A unit's folder holds ``config.json`` (the resolved unit config), ``rows.csv`` and
``rows.parquet`` (its result rows), ``log.txt`` and ``env.json`` (git sha, package versions,
device, profile, wall time). It is built in a private temporary folder and renamed into place in
one step, so a unit folder exists only when complete: a sweep killed at any instant (SIGKILL
included) leaves no partial unit, and a rerun skips every complete one. Two workers computing the
same unit at once both finish; the second rename finds the unit present and discards its copy.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.store.atomic import atomic_write_text, fsync_dir

__all__ = ["UnitStore", "canonical_json", "unit_hash"]

_COMPLETE = "env.json"  # written last inside the temporary folder


def canonical_json(obj: Any) -> str:
    """Stable JSON: sorted keys, no whitespace, floats in their shortest round-trip form."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str, allow_nan=True)


def unit_hash(identity: Mapping[str, Any]) -> str:
    """The 16-hex-digit hash that names a unit's folder."""
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class UnitStore:
    """The units of one figure: ``root/<paper>/<figure>/<unit_id>/``."""

    root: Path
    paper: str
    figure: str

    @property
    def folder(self) -> Path:
        return Path(self.root) / self.paper / self.figure

    def path(self, unit_id: str) -> Path:
        return self.folder / unit_id

    def is_complete(self, unit_id: str) -> bool:
        return (self.path(unit_id) / _COMPLETE).is_file()

    def load_rows(self, unit_id: str) -> pd.DataFrame:
        folder = self.path(unit_id)
        parquet = folder / "rows.parquet"
        if parquet.is_file():
            return pd.read_parquet(parquet)
        return pd.read_csv(folder / "rows.csv")

    def load_env(self, unit_id: str) -> dict[str, Any]:
        return json.loads((self.path(unit_id) / _COMPLETE).read_text())

    def discard(self, unit_id: str) -> None:
        """Remove a complete unit (``force=true``): renamed aside first, so readers never see half."""
        folder = self.path(unit_id)
        if folder.exists():
            trash = folder.with_name(f".tmp-trash-{unit_id}-{os.getpid()}-{time.time_ns()}")
            os.replace(folder, trash)
            shutil.rmtree(trash, ignore_errors=True)

    @contextmanager
    def building(self, unit_id: str):  # type: ignore[no-untyped-def]
        """A private temporary folder for a unit under construction.

        Yields the folder; on normal exit it is renamed into place (or dropped when another worker
        completed the same unit first); on an exception it is removed.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{unit_id}-", dir=self.folder))
        try:
            yield tmp
            if not (tmp / _COMPLETE).is_file():
                raise RuntimeError(f"unit {unit_id} was not finished ({_COMPLETE} missing)")
            try:
                os.rename(tmp, self.path(unit_id))
            except OSError:
                if not self.is_complete(unit_id):
                    raise
                shutil.rmtree(tmp, ignore_errors=True)  # another worker finished it first
            fsync_dir(self.folder)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    @staticmethod
    def write_unit(
        tmp: Path, config: Mapping[str, Any], rows: pd.DataFrame, env: Mapping[str, Any]
    ) -> None:
        """Fill a temporary unit folder; ``env.json`` goes last and marks completeness."""
        atomic_write_text(
            tmp / "config.json", json.dumps(config, indent=2, sort_keys=True, default=str)
        )
        atomic_write_text(tmp / "rows.csv", rows.to_csv(index=False))
        try:
            rows.to_parquet(tmp / "rows.parquet", index=False)
        except (ValueError, TypeError, ImportError):
            pass  # mixed-type object columns: CSV alone is the record
        atomic_write_text(tmp / _COMPLETE, json.dumps(env, indent=2, sort_keys=True, default=str))

    def sweep_stale_temporaries(self, older_than_s: float = 3600.0) -> int:
        """Remove ``.tmp-*`` folders left by killed workers (older than ``older_than_s``)."""
        if not self.folder.is_dir():
            return 0
        removed = 0
        now = time.time()
        for entry in self.folder.glob(".tmp-*"):
            try:
                if now - entry.stat().st_mtime > older_than_s:
                    shutil.rmtree(entry, ignore_errors=True) if entry.is_dir() else entry.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
        return removed
