"""The rehearsal marker: a JSON manifest in every folder the stand-in writers fill.

The marker file (:data:`~privrepro.data.provenance.REHEARSAL_MARKER`) says, in words, that the
files are synthetic, and lists the MD5 of each file written below the folder (relative POSIX
paths), which the loaders' stand-in mode checks (:mod:`privrepro.data.standin_checks`). The data root's
marker also summarises every stand-in written there: counts, files, bytes and seconds.

The root marker is written *before* the first file, so a writer killed part-way leaves files that
can never pass for real data (their folder has no manifest entry, and their MD5 is not the
release's, so every checking loader refuses them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privrepro.data.provenance import REHEARSAL_MARKER, read_marker
from privrepro.store.atomic import atomic_write_bytes, atomic_write_text

__all__ = ["STATEMENT", "FileRecord", "MarkedFolder", "Progress", "WriteRequest", "update_marker"]

#: What every marker says first.
STATEMENT = (
    "Synthetic rehearsal stand-in written by privrepro.rehearsal.standins: generated pixels, "
    "rows and random weights in the real on-disk formats and sizes. NOT real data and NOT "
    "pretrained weights: nothing computed on these files is a reproduction of any paper value."
)


@dataclass(frozen=True)
class FileRecord:
    """One written file: its path relative to the folder, its MD5 and its size in bytes."""

    rel: str
    md5: str
    nbytes: int


def _read(folder: Path) -> dict[str, Any]:
    """The marker's manifest (``{}`` when absent or unreadable: :func:`read_marker`, bounded)."""
    return read_marker(folder) or {}


def update_marker(folder: Path, files: dict[str, str] | None = None, **fields: Any) -> Path:
    """Create or update the marker in ``folder``: merge ``files`` into its ``files`` manifest and
    set the other ``fields`` (dict values are merged one level deep)."""
    path = Path(folder) / REHEARSAL_MARKER
    manifest = _read(folder)
    manifest.setdefault("statement", STATEMENT)
    for key, value in fields.items():
        if isinstance(value, dict) and isinstance(manifest.get(key), dict):
            manifest[key] = {**manifest[key], **value}
        else:
            manifest[key] = value
    manifest["files"] = {**manifest.get("files", {}), **(files or {})}
    return atomic_write_text(path, json.dumps(manifest, indent=1, sort_keys=True) + "\n")


@dataclass
class MarkedFolder:
    """A folder being filled with the stand-in of one dataset.

    Files are written through :meth:`write_bytes` (atomically, hashed as written) or recorded with
    :meth:`record` when a worker process wrote them; :meth:`finish` writes the folder's marker.
    ``folder`` may be the data root itself (SVHN's ``.mat`` files live there).
    """

    root: Path
    rel_folder: str
    dataset: str
    stand_in_for: str
    records: list[FileRecord] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.root / self.rel_folder if self.rel_folder else self.root

    def clear(self, keep: Iterable[str] = ()) -> int:
        """Delete the files an earlier run listed in this folder's marker, except ``keep`` (the
        files about to be rewritten): an image folder rewritten with other counts must not keep
        old images. Only listed files are touched, only below the root; returns how many."""
        if self.path == self.root:
            return 0
        manifest = _read(self.path)
        listed = manifest.get("files") or {}
        stale = set(listed) - set(keep)
        for rel in stale:
            (self.path / rel).unlink(missing_ok=True)
        if listed:
            manifest["files"] = {}
            atomic_write_text(
                self.path / REHEARSAL_MARKER, json.dumps(manifest, indent=1, sort_keys=True) + "\n"
            )
        return len(stale)

    def write_bytes(self, rel: str, data: bytes) -> Path:
        """Write ``data`` to ``<folder>/<rel>`` atomically and record its MD5."""
        target = atomic_write_bytes(self.path / rel, data)
        self.records.append(
            FileRecord(rel, hashlib.md5(data, usedforsecurity=False).hexdigest(), len(data))
        )
        return target

    def record(self, rel: str, md5: str, nbytes: int) -> None:
        """Record a file written elsewhere (a worker process) under ``<folder>/<rel>``."""
        self.records.append(FileRecord(rel, md5, nbytes))

    @property
    def nbytes(self) -> int:
        return sum(r.nbytes for r in self.records)

    def finish(self, summary: dict[str, Any]) -> None:
        """Write the folder's marker (its files' MD5s) and the dataset's line in the root's."""
        self.path.mkdir(parents=True, exist_ok=True)
        update_marker(
            self.path,
            {r.rel: r.md5 for r in self.records},
            datasets={self.dataset: {"stand_in_for": self.stand_in_for, **summary}},
        )
        if self.path != self.root:
            update_marker(
                self.root,
                datasets={
                    self.dataset: {
                        "stand_in_for": self.stand_in_for,
                        "folder": self.rel_folder,
                        **summary,
                    }
                },
            )


Progress = Callable[[Iterable[Any], str, int], Iterable[Any]]
"""``progress(items, description, total)``: the items, wrapped in a progress bar or not."""


@dataclass(frozen=True)
class WriteRequest:
    """What a stand-in writer is asked for: every writer is ``writer(request) -> summary``.

    Attributes:
        out: the marked folder it writes into.
        counts: images or rows per split, or files (the stand-in's real counts, or fewer).
        seed: the root seed its random streams are named from.
        jobs: worker processes it may use (the image folders encode on them).
        progress: wraps its long loops (``None``: no bars).
    """

    out: MarkedFolder
    counts: Mapping[str, int]
    seed: int
    jobs: int = 1
    progress: Progress | None = None
