"""How loaders treat files written by the rehearsal's stand-in writers.

The writers (:mod:`privrepro.rehearsal.standins`) put synthetic data in the real on-disk formats
at the real sizes, so that the paper profile can be rehearsed without the real datasets. Nothing
they write may pass for real data, so every folder they write holds the marker file
:data:`~privrepro.data.provenance.REHEARSAL_MARKER`: a JSON manifest that says what the files
are and lists the MD5 of each file below it.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from privrepro.data.provenance import REHEARSAL_MARKER, read_marker

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
        above it (the loader then reads it as a stand-in, labels it so and says so with
        :func:`log_stand_in`; it is not trusted any further: pickles still go through the
        restricted unpickler), ``None`` otherwise (missing or corrupt file, or a file that is
        neither the release nor a listed stand-in).
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
