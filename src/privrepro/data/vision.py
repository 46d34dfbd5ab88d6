"""MNIST, CIFAR-10 and CIFAR-100 in torchvision's layout, every file checked before it is read.

Files live under the data root in torchvision's layout (``<root>/MNIST/raw/``,
``<root>/cifar-10-batches-py/``, ``<root>/cifar-100-python/``); ``download=True`` fetches them
(torchvision's own download, MD5-checked), else a missing file raises
:class:`~privrepro.data.registry.MissingDataError`. Every file is checked against the release's
MD5 before it is read (for decompressed idx files, :data:`RAW_MD5`); one that differs raises
:class:`~privrepro.data.registry.DamagedDataError`. ``verify_checksums=False``, or a rehearsal
marker listing a file with its current MD5 (:func:`privrepro.data.standin_checks.checksum_status`),
makes what is read a labelled stand-in, never trusted. The CIFAR pickles are read by
:func:`~privrepro.data.safe_pickle.load_data_pickle` and checked against the format; the idx
files are parsed here. MNIST reads only the requested split (its ``.gz`` archives directly when
the decompressed files are absent); nothing is written into the data root. The guarantees in
full: README, "The run store" and "Real data".
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from privrepro.config.validation import ConfigError
from privrepro.data.arrays import ArrayDataset
from privrepro.data.provenance import (
    DataSource,
    data_source_of,
    stand_in_source,
    unverified_source,
)
from privrepro.data.registry import DamagedDataError, MissingDataError, register_dataset
from privrepro.data.safe_pickle import DataPickleError, load_data_pickle
from privrepro.data.standin_checks import checksum_status, file_md5, log_stand_in

__all__ = ["RAW_MD5", "load_cifar10", "load_cifar100", "load_idx_split", "load_mnist"]

_MNIST_HOW = (
    "Run with dataset download enabled on a machine with internet, or copy the MNIST idx "
    "files of the split (.gz as distributed, or decompressed) into that folder."
)
_CIFAR_HOW = (
    "Run with dataset download enabled on a machine with internet, or extract the "
    "'python version' archive from https://www.cs.toronto.edu/~kriz/cifar.html there."
)

#: MD5 of each decompressed idx file of the MNIST and FashionMNIST releases (the contents of the
#: ``.gz`` archives whose MD5s torchvision lists; the same values are published beside several
#: loaders of these datasets, and the t10k ones were recomputed from the release archives).
RAW_MD5: dict[str, dict[str, str]] = {
    "MNIST": {
        "train-images-idx3-ubyte": "6bbc9ace898e44ae57da46a324031adb",
        "train-labels-idx1-ubyte": "a25bea736e30d166cdddb491f175f624",
        "t10k-images-idx3-ubyte": "2646ac647ad5339dbf082846283269ea",
        "t10k-labels-idx1-ubyte": "27ae3e4e09519cfbb04c329615203637",
    },
    "FashionMNIST": {
        "train-images-idx3-ubyte": "f4a8712d7a061bf5bd6d2ca38dc4d50a",
        "train-labels-idx1-ubyte": "9018921c3c673c538a1fc5bad174d6f9",
        "t10k-images-idx3-ubyte": "8181f5470baa50b63fa0f6fddb340f0a",
        "t10k-labels-idx1-ubyte": "15d484375f8d13e6eb1aabb0c3f46965",
    },
}


def _check_split(split: str) -> bool:
    if split not in ("train", "test"):
        raise ConfigError("dataset.split", split, "must be one of ['train', 'test']")
    return split == "train"


def _checked(path: Path, md5: str | None, verify: bool) -> str:
    """How ``path`` passed its check: ``"release"``, ``"stand-in"`` or ``"not verified"``;
    ``""`` when it failed (a wrong MD5 outside a rehearsal stand-in's manifest)."""
    if not verify:
        return "not verified"
    return checksum_status(path, md5) or ""


def _md5_problem(path: Path, md5: str | None, what: str) -> str:
    return (
        f"its MD5 ({file_md5(path)}) does not match {what} ({md5}): the file is corrupt or "
        "not the release"
    )


def _source(root: Path, dataset: str, statuses: set[str], folder: Path, verify: bool) -> DataSource:
    """What was read: the release, a stand-in (a marker lists the files), or unverified files."""
    if not verify:
        return unverified_source(dataset)
    source = data_source_of(root, dataset)
    if "stand-in" in statuses and not source.is_stand_in:  # a marker below the dataset folder
        source = stand_in_source(dataset)
    if source.is_stand_in:
        log_stand_in(dataset, folder, checksums="stand-in" in statuses)
    return source


# -- MNIST and FashionMNIST ------------------------------------------------------------------------


def _torchvision_mnist() -> Any:
    from torchvision.datasets import MNIST

    return MNIST


def _mnist_files(train: bool, cls: Any = None) -> list[tuple[str, str]]:
    """The ``(archive name, MD5)`` of one split of torchvision's ``cls`` (MNIST by default)."""
    prefix = "train" if train else "t10k"
    resources = (cls or _torchvision_mnist()).resources
    return [(name, md5) for name, md5 in resources if name.startswith(prefix)]


def _checked_file(dataset: str, path: Path, md5: str, verify: bool, listing: str, how: str) -> str:
    """How ``path`` passed its MD5 check (:func:`_checked`); else the one-line data error."""
    if not path.is_file():
        raise MissingDataError(dataset, path, how)
    status = _checked(path, md5, verify)
    if not status:
        raise DamagedDataError(dataset, path, _md5_problem(path, md5, listing), how)
    return status


def _read_idx_bytes(
    raw: Path, gz_md5: str, cls_name: str, dataset: str, verify: bool, how: str
) -> tuple[bytes, str]:
    """The bytes of one idx file (decompressed) and how they passed their check.

    The decompressed file is read when present (checked against :data:`RAW_MD5`, or a marker's
    listing, or, when neither matches, against the content of its checked ``.gz`` beside it);
    else its ``.gz`` archive (checked against torchvision's MD5).
    """
    archive = raw.with_name(raw.name + ".gz")
    if raw.is_file():
        status = _checked(raw, RAW_MD5.get(cls_name, {}).get(raw.name), verify)
        data = raw.read_bytes()
        if status:
            return data, status
        if archive.is_file() and _checked(archive, gz_md5, verify):
            try:
                same = gzip.decompress(archive.read_bytes()) == data
            except (OSError, EOFError, zlib.error):
                same = False
            if same:  # decompressed from a checked archive: the archive's status
                return data, _checked(archive, gz_md5, verify)
        raise DamagedDataError(
            dataset,
            raw,
            _md5_problem(raw, RAW_MD5.get(cls_name, {}).get(raw.name), "the release's"),
            f"Delete it (its .gz archive is read when present). {how}",
        )
    if not archive.is_file():
        raise MissingDataError(dataset, raw, how)
    status = _checked_file(dataset, archive, gz_md5, verify, "torchvision's list", how)
    try:
        return gzip.decompress(archive.read_bytes()), status
    except (OSError, EOFError, zlib.error) as exc:
        raise DamagedDataError(dataset, archive, f"it does not decompress ({exc})", how) from exc


def _parse_idx(data: bytes, ndim: int, path: Path, dataset: str, how: str) -> np.ndarray:
    """An idx array (LeCun's format: magic ``0x0000 08 <ndim>``, big-endian sizes, then the
    ``uint8`` data) of ``ndim`` dimensions."""
    header = 4 + 4 * ndim
    if len(data) < header or data[:4] != bytes([0, 0, 0x08, ndim]):
        raise DamagedDataError(
            dataset, path, f"it does not start like an idx file of {ndim} dimension(s)", how
        )
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    expected = header + int(np.prod(shape))
    if len(data) != expected:
        raise DamagedDataError(
            dataset, path, f"it holds {len(data)} bytes, its header {shape} says {expected}", how
        )
    return np.frombuffer(data, dtype=np.uint8, offset=header).reshape(shape).copy()


@register_dataset(
    "mnist",
    description="MNIST 28×28 grey digits (torchvision layout)",
    source="http://yann.lecun.com/exdb/mnist/ via torchvision",
)
def load_mnist(
    root: Path, split: str = "train", download: bool = False, verify_checksums: bool = True
) -> ArrayDataset:
    """MNIST as ``uint8 [N, 28, 28]`` from torchvision's layout (``<root>/MNIST/raw/``)."""
    from torchvision.datasets import MNIST

    return load_idx_split(MNIST, "mnist", root, split, download, verify_checksums, _MNIST_HOW)


def load_idx_split(
    cls: Any, name: str, root: Path, split: str, download: bool, verify: bool, how: str
) -> ArrayDataset:
    """One split of MNIST or of a dataset in its layout (FashionMNIST), torchvision's ``cls``
    naming the files, their MD5s and the classes: only the files of ``split`` are needed, each
    checked (:func:`_read_idx_bytes`) and parsed (:func:`_parse_idx`). ``name`` is the registry's
    name, ``how`` the hint of a missing-data error."""
    train = _check_split(split)
    root = Path(root)
    if download:
        cls(str(root), train=train, download=True)
    raw_folder = root / cls.__name__ / "raw"
    arrays, statuses = [], set()
    for (gz_name, md5), ndim in zip(_mnist_files(train, cls), (3, 1), strict=True):
        raw = raw_folder / gz_name[: -len(".gz")]
        data, status = _read_idx_bytes(raw, md5, cls.__name__, name, verify, how)
        statuses.add(status)
        arrays.append(_parse_idx(data, ndim, raw, name, how))
    images, labels = arrays
    if len(images) != len(labels) or (len(labels) and labels.max() >= len(cls.classes)):
        raise DamagedDataError(
            name,
            raw_folder / _mnist_files(train, cls)[1][0][: -len(".gz")],
            f"{len(labels)} labels (largest {labels.max() if len(labels) else None}) for "
            f"{len(images)} images of {len(cls.classes)} classes",
            how,
        )
    source = _source(root, name, statuses, raw_folder, verify)
    return ArrayDataset(
        images,
        labels.astype(np.int64),
        [c.split(" - ")[0] for c in cls.classes],  # MNIST's "0 - zero" is the class "0"
        f"{name}/{split}",
        {
            "root": str(root),
            "checksums_verified": verify,
            "checksums": "stand-in" if "stand-in" in statuses else sorted(statuses)[0],
            "data_source": source,
        },
    )


# -- CIFAR ------------------------------------------------------------------------------------------


def _cifar_entry(
    entry: Any, path: Path, name: str, label_key: str, classes: int
) -> tuple[np.ndarray, np.ndarray]:
    """The rows ``uint8 [N, 3072]`` (1,024 red, green then blue values of each 32×32 image) and
    labels of one CIFAR batch dict, checked against the format."""

    def bad(problem: str) -> DamagedDataError:
        return DamagedDataError(name, path, problem, _CIFAR_HOW)

    if not isinstance(entry, Mapping):
        raise bad(f"it holds a {type(entry).__name__}, not the batch dict of the format")
    data = entry.get("data")
    labels = entry.get(label_key)
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2:
        raise bad("its 'data' is not a uint8 [N, 3072] array")
    if data.shape[1] != 3 * 32 * 32:
        raise bad(f"its 'data' has {data.shape[1]} columns, not 3072")
    try:
        y = np.asarray(labels, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise bad(f"its {label_key!r} are not integers") from None
    if y.shape != (len(data),) or (len(y) and (y.min() < 0 or y.max() >= classes)):
        raise bad(f"its {label_key!r} are not {len(data)} labels in [0, {classes})")
    return data, y


def _load_pickle(path: Path, name: str) -> Any:
    try:
        return load_data_pickle(path)
    except DataPickleError as exc:
        raise DamagedDataError(name, path, str(exc), _CIFAR_HOW) from None


def _load_cifar(
    name: str, cls: Any, root: Path, split: str, download: bool, verify: bool
) -> ArrayDataset:
    train = _check_split(split)
    root = Path(root)
    folder = root / cls.base_folder
    batches = list(cls.train_list if train else cls.test_list)
    needed = [*batches, (cls.meta["filename"], cls.meta["md5"])]
    if download:
        cls(str(root), train=train, download=True)
    statuses = set()
    for file_name, md5 in needed:
        listing = "torchvision's list of the release"
        statuses.add(_checked_file(name, folder / file_name, md5, verify, listing, _CIFAR_HOW))
    meta_path = folder / cls.meta["filename"]
    meta = _load_pickle(meta_path, name)
    classes = meta.get(cls.meta["key"]) if isinstance(meta, Mapping) else None
    if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
        raise DamagedDataError(
            name, meta_path, f"its {cls.meta['key']!r} is not a list of class names", _CIFAR_HOW
        )
    label_key = "labels" if name == "cifar10" else "fine_labels"
    xs, ys = [], []
    for file_name, _ in batches:
        path = folder / file_name
        x, y = _cifar_entry(_load_pickle(path, name), path, name, label_key, len(classes))
        xs.append(x)
        ys.append(y)
    source = _source(root, name, statuses, folder, verify)
    images = np.concatenate(xs).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)  # as torchvision
    return ArrayDataset(
        images,
        np.concatenate(ys),
        list(classes),
        f"{name}/{split}",
        {
            "root": str(root),
            "checksums_verified": verify,
            "checksums": "stand-in" if "stand-in" in statuses else sorted(statuses)[0],
            "data_source": source,
        },
    )


_CIFAR_SOURCE = "https://www.cs.toronto.edu/~kriz/cifar.html via torchvision"


def _cifar_loader(
    name: str, torchvision_class: str, title: str, classes: int, labels: str = ""
) -> Callable[..., ArrayDataset]:
    """The loader ``load_<name>(root, split="train", download=False, verify_checksums=True)``
    of a CIFAR set, registered under ``name``."""

    def load(
        root: Path, split: str = "train", download: bool = False, verify_checksums: bool = True
    ) -> ArrayDataset:
        from torchvision import datasets

        cls = getattr(datasets, torchvision_class)
        return _load_cifar(name, cls, root, split, download, verify_checksums)

    load.__name__ = load.__qualname__ = f"load_{name}"
    load.__doc__ = (
        f"{title}{labels} as ``uint8 [N, 32, 32, 3]`` in ``torchvision.datasets."
        f"{torchvision_class}``'s layout, its pickles read without running code."
    )
    register_dataset(
        name,
        description=f"{title} 32×32 colour, {classes} classes (torchvision layout)",
        source=_CIFAR_SOURCE,
    )(load)
    return load


load_cifar10 = _cifar_loader("cifar10", "CIFAR10", "CIFAR-10", 10)
load_cifar100 = _cifar_loader("cifar100", "CIFAR100", "CIFAR-100", 100, " (fine labels)")
