"""How loaders treat files written by the rehearsal's stand-in writers.

The writers (:mod:`privrepro.rehearsal.standins`) put synthetic data in the real on-disk formats
at the real sizes, so that the paper profile can be rehearsed without the real datasets. Nothing
they write may pass for real data, so every folder they write holds the marker file
:data:`~privrepro.data.provenance.REHEARSAL_MARKER`: a JSON manifest that says what the files
are and lists the MD5 of each file below it.

A loader that checks checksums (torchvision's MD5 list of the real release) reacts to the
marker in two ways:

1. **Stand-in mode.** A file whose MD5 is not the release's is accepted only when a marker above
   it lists that file with the MD5 it has now; the acceptance is logged once per folder. Without
   a marker the usual "MD5 does not match" error stands, so a stand-in moved out of its marked
   folder, or a corrupt stand-in, is refused like any corrupt download.
2. **Labelling.** :func:`~privrepro.data.provenance.data_source_of` returns the
   :class:`~privrepro.data.provenance.DataSource` of a dataset under a root: the real dataset's
   name, or ``"rehearsal stand-in"`` standing in for it when its folder (or a parent) is marked.
   Loaders put it in ``ArrayDataset.meta`` under ``"data_source"``; whatever writes a table's
   ``data`` column can call the function directly.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from privrepro.data.provenance import REHEARSAL_MARKER

__all__ = [
    "checksum_status",
    "file_md5",
    "log_stand_in",
    "read_marker",
    "standin_md5",
]

log = logging.getLogger("privrepro.data")


def file_md5(path: str | Path, chunk: int = 1 << 20) -> str:
    """The MD5 hex digest of a file, read in chunks."""
    h = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def read_marker(folder: str | Path) -> dict[str, Any] | None:
    """The manifest of the marker in ``folder``, ``{}`` for an empty or unreadable marker, or
    ``None`` when ``folder`` holds none."""
    path = Path(folder) / REHEARSAL_MARKER
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _marker_listing(path: Path) -> tuple[Path, str] | None:
    """The nearest marked folder above ``path`` whose manifest lists it, and the listed MD5."""
    path = Path(path).expanduser().resolve()
    for folder in path.parents:
        manifest = read_marker(folder)
        if manifest is None:
            continue
        files = manifest.get("files") or {}
        md5 = files.get(path.relative_to(folder).as_posix())
        if isinstance(md5, str):
            return folder, md5
    return None


def standin_md5(path: str | Path) -> str | None:
    """The MD5 a rehearsal marker above ``path`` lists for it, or ``None`` (no marker lists it)."""
    found = _marker_listing(Path(path))
    return None if found is None else found[1]


def checksum_status(path: str | Path, md5: str | None) -> str | None:
    """Check ``path`` against the real release's ``md5``, then against a rehearsal manifest.

    Returns:
        ``"release"`` when the file has the release's MD5 (or no MD5 is known and it exists),
        ``"stand-in"`` when it is a rehearsal stand-in whose MD5 matches the manifest of a marker
        above it (the loader then says so with :func:`log_stand_in`), ``None`` otherwise
        (missing or corrupt file, or a file that is neither the release nor a listed stand-in).
    """
    path = Path(path)
    if not path.is_file():
        return None
    if md5 is None:
        return "release"
    actual = file_md5(path)
    if actual == md5:
        return "release"
    found = _marker_listing(path)
    if found is None or found[1] != actual:
        return None
    return "stand-in"


def log_stand_in(dataset: str, folder: str | Path, checksums: bool = False) -> None:
    """Say in the log (once per load, so that each unit's log shows it) that ``dataset`` is read
    from the rehearsal stand-in files in ``folder``; ``checksums``: their MD5s were accepted
    from the marker's manifest instead of the release's."""
    how = " and accepted by the MD5s its manifest lists, not the release's" if checksums else ""
    log.warning(
        "%s: rehearsal stand-in mode: the files in %s are synthetic (marked by %s%s). Nothing "
        "computed on them is a reproduction.",
        dataset,
        folder,
        REHEARSAL_MARKER,
        how,
    )
