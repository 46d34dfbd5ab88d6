"""What a number was computed on: the real dataset, or a named stand-in for it.

Every results table carries a ``data`` column with :attr:`DataSource.label`, so a value computed
on a stand-in (embedded digits for MNIST or CIFAR-10, synthetic features for Split-CIFAR-100,
full-size files written by the rehearsal) is never mistaken for a reproduction: plot titles,
tables and report sections name it, and the scorecard never compares it with a paper value.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from privrepro.bounded_read import CACHE_JSON_BYTES, parse_json, read_bytes

log = logging.getLogger("privrepro.data")

__all__ = [
    "ANALYTIC",
    "PAPER_NAMES",
    "REHEARSAL_MARKER",
    "REHEARSAL_NAME",
    "RELEASE_CHECKED",
    "STAND_IN_DATASETS",
    "UNDECLARED",
    "DataChangedError",
    "DataSource",
    "data_fingerprint",
    "data_source_of",
    "dataset_folder",
    "folder_source",
    "is_rehearsal_root",
    "is_stand_in_label",
    "read_from",
    "read_marker",
    "registry_source",
    "stand_in_source",
    "unchanged_since_plan",
    "unverified_source",
]

#: The marker file at a data root (or dataset folder) written by the rehearsal's stand-in writers.
REHEARSAL_MARKER = "PRIVREPRO_REHEARSAL_STAND_IN"

_STAND_IN = "stand-in for"


@dataclass(frozen=True)
class DataSource:
    """The data a unit ran on.

    Attributes:
        name: what was read, in words ("CIFAR-10", "scikit-learn digits 8×8", "synthetic
            features").
        stand_in_for: the paper's dataset when ``name`` is a stand-in for it, else ``None``.
        shaped: when a stand-in was shaped to sit in the paper's regime (say, synthetic features
            whose non-private accuracy lands near the paper's), how, in words a reader cannot
            miss; else ``None``.
        fingerprint: what identifies the files read from a data root
            (:func:`data_fingerprint`: the release for a dataset whose
            every file is checked against the release's checksums, else a hash of the files or
            of a stand-in marker's listing); ``None`` for data that does not come from a data
            root (formulas, embedded or generated data). It is part of a unit's identity: the
            same unit on other data is another unit. It is not part of :attr:`label`.
    """

    name: str
    stand_in_for: str | None = None
    shaped: str | None = None
    fingerprint: str | None = None

    @property
    def is_stand_in(self) -> bool:
        """Whether the numbers come from anything but the paper's own data."""
        return self.stand_in_for is not None

    @property
    def label(self) -> str:
        """The value of a table's ``data`` column and the plot title's data clause.

        ``"CIFAR-10"``; ``"scikit-learn digits 8×8 (stand-in for CIFAR-10)"``; a shaped stand-in
        says how: ``"synthetic features (stand-in for X; shaped so that ...)"``.
        """
        if self.stand_in_for is None:
            return self.name
        shaped = f"; {self.shaped}" if self.shaped else ""
        return f"{self.name} ({_STAND_IN} {self.stand_in_for}{shaped})"


#: The ``data`` of a figure computed from formulas alone (no dataset involved).
ANALYTIC = DataSource("none (analytic)")

#: The ``data`` of a recipe that declares none: the report never compares its numbers.
UNDECLARED = DataSource("not declared by the recipe")


def is_stand_in_label(label: object) -> bool:
    """Whether a ``data`` column value names a stand-in (see :attr:`DataSource.label`)."""
    return isinstance(label, str) and f"({_STAND_IN} " in label


def read_from(dataset: str, data_dir: str | Path | None) -> DataSource:
    """What a loader reading the paper's ``dataset`` from the data root ``data_dir`` gets.

    The real dataset (its paper name, :data:`PAPER_NAMES`), unless the
    dataset's folder under the root (or the root, or a parent) holds :data:`REHEARSAL_MARKER`:
    then the files are the rehearsal's format-real stand-ins and the label says so. Its
    ``fingerprint`` says which files these are (part of a unit's identity). The loaders
    label what they read with the same function (:func:`data_source_of`),
    so a table's ``data`` column and the loaders' ``data_source`` never disagree.
    """
    if data_dir is None or dataset not in PAPER_NAMES:
        return DataSource(PAPER_NAMES.get(dataset, dataset))
    return data_source_of(data_dir, dataset, identify=True)


#: Registry datasets that only ever stand in for a paper's dataset (embedded or generated).
STAND_IN_DATASETS = {
    "digits": "scikit-learn digits 8×8 (embedded)",
    "synthetic_images": "seeded synthetic images",
}


def registry_source(dataset: str, data_dir: str | Path | None, paper_dataset: str) -> DataSource:
    """The data a unit reading registry ``dataset`` gets, where the paper used ``paper_dataset``.

    An embedded or generated dataset (:data:`STAND_IN_DATASETS`) is a stand-in for the paper's;
    a paper dataset read from the data root goes through :func:`read_from`.
    """
    if dataset in STAND_IN_DATASETS:
        return DataSource(STAND_IN_DATASETS[dataset], stand_in_for=paper_dataset)
    source = read_from(dataset, data_dir)
    name = PAPER_NAMES.get(dataset, dataset)
    if not source.is_stand_in and name != paper_dataset:
        return replace(source, stand_in_for=paper_dataset)
    return source


def is_rehearsal_root(path: str | Path) -> bool:
    """Whether ``path`` or one of its parents holds the rehearsal stand-in marker (anything of
    that name: a marker that is damaged, a pipe or a folder still marks the files stand-ins)."""
    p = Path(path).expanduser().resolve()
    return any(os.path.lexists(q / REHEARSAL_MARKER) for q in (p, *p.parents))


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


def read_marker(folder: str | Path) -> dict[str, Any] | None:
    """The manifest of the marker in ``folder``, ``{}`` for an empty or unreadable marker, or
    ``None`` when ``folder`` holds none.

    Read bounded (:func:`~privrepro.bounded_read.read_json`): a marker that is a named pipe, a
    device, a link out of its folder, larger than its bound or nested too deep is unreadable,
    said in one warning line. It is left where it is, and still marks the folder
    (:func:`is_rehearsal_root`): moving it aside would let stand-ins pass for the release; with
    an empty listing, no stand-in file under it passes its check.
    """
    path = Path(folder) / REHEARSAL_MARKER
    if not os.path.lexists(path):
        return None
    try:
        raw = read_bytes(path, CACHE_JSON_BYTES)
        manifest = parse_json(raw) if raw.strip() else {}
    except (OSError, ValueError) as exc:
        log.warning(
            "stand-in marker %s is unreadable (%s): no file under it passes as listed", path, exc
        )
        return {}
    return manifest if isinstance(manifest, dict) else {}


class DataChangedError(RuntimeError):
    """The data a unit reads changed between the plan and the unit's end: the unit is not stored
    (its identity names the fingerprint taken in the plan, not that of the data it may have
    read). Reported in one line; running again plans on the data as it is now."""


def unchanged_since_plan(planned: DataSource, now: DataSource, where: str, when: str) -> None:
    """Raise :class:`DataChangedError` when the data's fingerprint ``now`` is not the one the
    plan took (``planned``); ``where``: the data root, ``when``: the moment (``as unit … started``).

    Data with no fingerprint (formulas, embedded or generated data) is never checked."""
    if planned.fingerprint is None or planned.fingerprint == now.fingerprint:
        return
    raise DataChangedError(
        f"{planned.name} under {where} changed after the plan, {when} (fingerprint "
        f"{str(planned.fingerprint)[:24]} in the plan, {str(now.fingerprint)[:24]} now): the "
        "unit is not stored under a fingerprint of data it may not have read; run again once "
        "the data stays put"
    )
