"""How loaders treat files written by the rehearsal's stand-in writers, and what identifies data.

The writers (:mod:`privrepro.rehearsal.standins`) put synthetic data in the real on-disk formats
at the real sizes, so that the paper profile can be rehearsed without the real datasets. Nothing
they write may pass for real data, so every folder they write holds the marker file
:data:`~privrepro.data.provenance.REHEARSAL_MARKER`: a JSON manifest that says what the files
are and lists the MD5 of each file below it.

**A marker labels; it never vouches.** A loader that checks checksums (the release's MD5 list)
reacts to the marker in two ways, and neither makes a file trusted:

1. **Stand-in mode.** A file whose MD5 is not the release's is read only when a marker above it
   lists that file with the MD5 it has now, and then only as a stand-in (the data is labelled
   so everywhere, and is read through the same restricted readers as real data: a pickle is
   still unpickled by :mod:`privrepro.data.safe_pickle`). Without a marker the usual "MD5 does
   not match" error stands, so a stand-in moved out of its marked folder, or a corrupt
   stand-in, is refused like any corrupt download.
2. **Labelling.** :func:`data_source_of` returns the :class:`~privrepro.data.provenance.DataSource`
   of a dataset under a root: the real dataset's name, or ``"rehearsal stand-in"`` standing in
   for it when its folder (or a parent) is marked. Loaders put it in ``ArrayDataset.meta`` under
   ``"data_source"``; whatever writes a table's ``data`` column can call the function directly.

**What identifies data.** :func:`data_fingerprint` says which files a dataset is read from: the
release itself for a dataset whose every file is checked against the release's checksums, else
a hash of the files (or of the marker's listing of them). It is part of a unit's identity, so a
unit computed on other data is another unit.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from privrepro.data.provenance import REHEARSAL_MARKER, DataSource, is_rehearsal_root

__all__ = [
    "PAPER_NAMES",
    "REHEARSAL_NAME",
    "RELEASE_CHECKED",
    "checksum_status",
    "data_fingerprint",
    "data_source_of",
    "dataset_folder",
    "file_md5",
    "folder_source",
    "log_stand_in",
    "read_marker",
    "stand_in_source",
    "standin_md5",
    "unverified_source",
]

log = logging.getLogger("privrepro.data")

#: ``DataSource.name`` of everything read from a marked folder.
REHEARSAL_NAME = "rehearsal stand-in"

#: The paper's name of each dataset the loaders read, by the project's dataset key.
PAPER_NAMES: dict[str, str] = {
    "cifar10": "CIFAR-10",
    "cifar100": "CIFAR-100",
    "mnist": "MNIST",
    "fashionmnist": "Fashion-MNIST",
    "svhn": "SVHN",
    "notmnist": "notMNIST",
    "imagenet-r": "ImageNet-R",
    "5-datasets": "5-Datasets",
    "adult": "UCI Adult",
}

# Where each dataset's files live under the data root (torchvision's and the archives' layouts).
_FOLDERS: dict[str, tuple[str, ...]] = {
    "cifar10": ("cifar-10-batches-py",),
    "cifar100": ("cifar-100-python",),
    "mnist": ("MNIST",),
    "fashionmnist": ("FashionMNIST",),
    "svhn": ("",),  # torchvision's SVHN reads <root>/{train,test}_32x32.mat
    "notmnist": ("notMNIST_small",),
    "imagenet-r": ("imagenet-r",),
    "adult": ("adult",),
    "5-datasets": ("MNIST", "", "notMNIST_small", "FashionMNIST", "cifar-10-batches-py"),
}


def dataset_folder(root: str | Path, dataset: str) -> Path:
    """The folder under ``root`` that holds ``dataset``'s files (the root itself for SVHN)."""
    if dataset not in _FOLDERS:
        raise ValueError(f"dataset = {dataset!r}: must be one of {sorted(_FOLDERS)}")
    return Path(root) / _FOLDERS[dataset][0]


def data_source_of(root: str | Path, dataset: str, identify: bool = False) -> DataSource:
    """What a loader reads for ``dataset`` under ``root``: the real dataset, or the rehearsal
    stand-in for it when its folder or a parent holds the rehearsal marker.

    ``dataset`` is a key of :data:`PAPER_NAMES` (``5-datasets`` is a stand-in as soon as one
    member's folder is marked). ``identify``: also fill in
    :attr:`~privrepro.data.provenance.DataSource.fingerprint` (:func:`data_fingerprint`).
    """
    if dataset not in _FOLDERS:
        raise ValueError(f"dataset = {dataset!r}: must be one of {sorted(_FOLDERS)}")
    marked = any(is_rehearsal_root(f) for f in _file_folders(root, dataset))
    paper = PAPER_NAMES[dataset]
    source = DataSource(REHEARSAL_NAME, stand_in_for=paper) if marked else DataSource(paper)
    if identify:
        source = replace(source, fingerprint=data_fingerprint(root, dataset))
    return source


def _file_folders(root: str | Path, dataset: str) -> list[Path]:
    """The folders ``dataset``'s files lie in (a marker there or above marks them)."""
    members = _MEMBERS.get(dataset, (dataset,))
    return [Path(root) / _FOLDERS[m][0] / _RAW.get(m, "") for m in members]


def stand_in_source(dataset: str) -> DataSource:
    """The :class:`DataSource` of files a marker's listing admitted: a rehearsal stand-in."""
    return DataSource(REHEARSAL_NAME, stand_in_for=PAPER_NAMES.get(dataset, dataset))


def unverified_source(dataset: str) -> DataSource:
    """The :class:`DataSource` of files read without their checksums checked
    (``verify_checksums=False``): never the paper's dataset, a stand-in for it."""
    paper = PAPER_NAMES.get(dataset, dataset)
    return DataSource(f"unverified files in the {paper} format", stand_in_for=paper)


#: Datasets whose loaders check every file against the release's checksums before reading it:
#: any copy that loads is the release, so the release is their identity.
RELEASE_CHECKED = frozenset({"cifar10", "cifar100", "mnist", "fashionmnist", "svhn"})
_MEMBERS = {"5-datasets": ("mnist", "svhn", "notmnist", "fashionmnist", "cifar10")}
_RAW = {"mnist": "raw", "fashionmnist": "raw"}  # torchvision's idx files lie in <folder>/raw
_IMAGE_FOLDERS = frozenset({"notmnist", "imagenet-r"})
_DIGESTS: dict[tuple[object, ...], str] = {}


def _sha256_file(path: Path) -> str:
    """The SHA-256 of a file, remembered per (path, size, mtime, inode) within the process."""
    try:
        st = path.stat()
    except OSError:
        return "absent"
    key = ("file", str(path), st.st_size, st.st_mtime_ns, st.st_ino)
    if key not in _DIGESTS:
        h = hashlib.sha256()
        try:
            with open(path, "rb") as fh:
                while block := fh.read(1 << 20):
                    h.update(block)
        except OSError:
            return "unreadable"
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


def _listing_digest(folder: Path) -> str:
    """The SHA-256 of an image folder's files: relative paths and sizes (not contents)."""
    if not folder.is_dir():
        return "absent"
    dirs = []
    for current, subdirs, _ in os.walk(folder):
        subdirs.sort()
        try:
            dirs.append((current, os.stat(current).st_mtime_ns))
        except OSError:
            continue
    key = ("listing", str(folder), tuple(dirs))
    if key not in _DIGESTS:
        h = hashlib.sha256()
        for current, subdirs, files in os.walk(folder):
            subdirs.sort()
            for name in sorted(files):
                path = Path(current) / name
                try:
                    size = path.stat().st_size
                except OSError:
                    size = -1
                h.update(f"{path.relative_to(folder).as_posix()}\0{size}\n".encode())
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


def _marker_digest(folder: Path) -> str:
    """The SHA-256 of the listings (file names and MD5s) of every marker at or above ``folder``."""
    listings = []
    p = folder.expanduser().resolve()
    for q in (p, *p.parents):
        manifest = read_marker(q)
        if manifest is not None:
            listings.append(manifest.get("files") or {})
    text = json.dumps(listings, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _dataset_files(root: str | Path, dataset: str) -> list[Path]:
    """The files of a :data:`RELEASE_CHECKED` dataset under ``root`` (SVHN's ``.mat`` files lie
    at the root itself, among anything else)."""
    folder = _file_folders(root, dataset)[0]
    if not folder.is_dir():
        return []
    pattern = "*_32x32.mat" if dataset == "svhn" else "*"
    return sorted(p for p in folder.glob(pattern) if p.is_file() and p.name != REHEARSAL_MARKER)


def data_fingerprint(root: str | Path, dataset: str, verified: bool = True) -> str:
    """What identifies the files ``dataset`` is read from under the data root ``root``.

    * A dataset of :data:`RELEASE_CHECKED`, not marked: ``"<name> release"``; its loader refuses
      any file that is not the release's, so every copy that loads is the same data. Read with
      ``verified=False`` (its checksums not checked): the SHA-256 of its files' contents.
    * Marked (a rehearsal stand-in): the SHA-256 of its markers' listings (each file's MD5),
      which its loader checks every file against.
    * UCI Adult (no checksum published): the SHA-256 of ``adult.data`` and ``adult.test``.
    * An image folder (ImageNet-R, notMNIST): the SHA-256 of its files' relative paths and
      sizes (not of their contents: a file replaced by another of the same size keeps it).
    * 5-Datasets: its members' fingerprints together.

    Missing files give the fingerprint of their absence; the load then fails, naming them.
    """
    if dataset in _MEMBERS:
        parts = [data_fingerprint(root, m, verified) for m in _MEMBERS[dataset]]
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()
    if dataset not in _FOLDERS:
        raise ValueError(f"dataset = {dataset!r}: must be one of {sorted(_FOLDERS)}")
    folder = dataset_folder(root, dataset)
    if dataset == "adult":
        files = [_sha256_file(folder / n) for n in ("adult.data", "adult.test")]
        return "sha256:" + hashlib.sha256(" ".join(files).encode()).hexdigest()
    if dataset in _IMAGE_FOLDERS:
        return "listing:" + _listing_digest(folder)
    if not verified:
        files = [f"{p.name} {_sha256_file(p)}" for p in _dataset_files(root, dataset)]
        return "sha256:" + hashlib.sha256("\n".join(files).encode()).hexdigest()
    marked = _file_folders(root, dataset)[0]
    if is_rehearsal_root(marked):
        return "stand-in:" + _marker_digest(marked)
    return f"{PAPER_NAMES[dataset]} release"


def folder_source(folder: str | Path, name: str) -> DataSource:
    """The :class:`DataSource` of files read from ``folder`` (any folder): ``name`` (its paper
    name when :data:`PAPER_NAMES` knows it), or the rehearsal stand-in for it when ``folder`` or
    a parent holds the marker."""
    paper = PAPER_NAMES.get(name, name)
    if is_rehearsal_root(folder):
        return DataSource(REHEARSAL_NAME, stand_in_for=paper)
    return DataSource(paper)


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
