"""MNIST, CIFAR-10 and CIFAR-100 through torchvision's own dataset classes.

Files live under the data root in torchvision's layout (``<root>/MNIST/raw/``,
``<root>/cifar-10-batches-py/``, ``<root>/cifar-100-python/``). ``download=True`` fetches them on a
machine with internet (torchvision's own download, MD5-checked). Without it a missing file raises
:class:`~privrepro.data.registry.MissingDataError` naming the file, where it is expected and how
to obtain it. Checksums are verified with torchvision's MD5 list unless ``verify_checksums=False``
(for hand-made files in the same format, e.g. in tests).

Rehearsal stand-ins (:mod:`privrepro.rehearsal.standins`) fail those checksums by design: a file
whose MD5 is not the release's is accepted only when a rehearsal marker above it lists the file
with its current MD5 (:func:`privrepro.data.standin_checks.checksum_status`), and the load says so in
the log. Every dataset
returned carries ``meta["data_source"]``, the real dataset or the rehearsal stand-in for it.

Two departures from torchvision, both offline conveniences: MNIST needs only the files of the
requested split, and its gzip archives (the files torchvision downloads) are decompressed in place
when the raw files are absent.
"""

from __future__ import annotations

import gzip
import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from privrepro.config.validation import ConfigError
from privrepro.data.arrays import ArrayDataset
from privrepro.data.provenance import data_source_of
from privrepro.data.registry import MissingDataError, register_dataset
from privrepro.data.standin_checks import checksum_status, log_stand_in

__all__ = ["load_cifar10", "load_cifar100", "load_idx_split", "load_mnist"]

_MNIST_HOW = (
    "Run with dataset download enabled on a machine with internet, or copy the MNIST idx "
    "files of the split (.gz as distributed, or decompressed) into that folder."
)
_CIFAR_HOW = (
    "Run with dataset download enabled on a machine with internet, or extract the "
    "'python version' archive from https://www.cs.toronto.edu/~kriz/cifar.html there."
)


def _check_split(split: str) -> bool:
    if split not in ("train", "test"):
        raise ConfigError("dataset.split", split, "must be one of ['train', 'test']")
    return split == "train"


def _checked(path: Path, md5: str | None, dataset: str, verify: bool) -> str:
    """How ``path`` passed its check: ``"release"``, ``"stand-in"`` or ``"not verified"``;
    ``""`` when it failed (a wrong MD5 outside a rehearsal stand-in's manifest)."""
    if not verify:
        return "not verified"
    return checksum_status(path, md5) or ""


def _torchvision_mnist() -> Any:
    from torchvision.datasets import MNIST

    return MNIST


def _mnist_files(train: bool, cls: Any = None) -> list[tuple[str, str]]:
    """The ``(archive name, MD5)`` of one split of torchvision's ``cls`` (MNIST by default)."""
    prefix = "train" if train else "t10k"
    resources = (cls or _torchvision_mnist()).resources
    return [(name, md5) for name, md5 in resources if name.startswith(prefix)]


def _prepare_mnist_raw(
    root: Path,
    train: bool,
    verify: bool,
    cls: Any = None,
    dataset: str = "mnist",
    how: str = _MNIST_HOW,
) -> str:
    """Make sure the raw idx files of one split exist (decompressing ``.gz`` when needed).

    ``cls`` is torchvision's MNIST (default) or a class with its layout (FashionMNIST). Returns
    how the archives passed their check (``"release"``, ``"stand-in"``, ``"not verified"``, or
    ``"raw files present"`` when nothing had to be decompressed).
    """
    cls = cls or _torchvision_mnist()
    raw = root / cls.__name__ / "raw"
    status = "raw files present"
    for gz_name, md5 in _mnist_files(train, cls):
        target = raw / gz_name[: -len(".gz")]
        if target.is_file():
            continue
        archive = raw / gz_name
        if not archive.is_file():
            raise MissingDataError(dataset, target, how)
        status = _checked(archive, md5, dataset, verify)
        if not status:
            raise MissingDataError(
                dataset,
                archive,
                f"Its MD5 does not match torchvision's: the file is corrupt or not the "
                f"{cls.__name__} release. " + how,
            )
        tmp = target.with_name(f".tmp-{target.name}-{os.getpid()}")
        with gzip.open(archive, "rb") as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(tmp, target)
    return status


@register_dataset(
    "mnist",
    description="MNIST 28×28 grey digits (torchvision layout)",
    source="http://yann.lecun.com/exdb/mnist/ via torchvision",
)
def load_mnist(
    root: Path, split: str = "train", download: bool = False, verify_checksums: bool = True
) -> ArrayDataset:
    """MNIST as ``uint8 [N, 28, 28]`` through ``torchvision.datasets.MNIST``."""
    from torchvision.datasets import MNIST

    return load_idx_split(MNIST, "mnist", root, split, download, verify_checksums, _MNIST_HOW)


def load_idx_split(
    cls: Any, name: str, root: Path, split: str, download: bool, verify: bool, how: str
) -> ArrayDataset:
    """One split of MNIST or of a dataset in its layout (FashionMNIST) through torchvision's
    ``cls``: only the files of ``split`` are needed, and the ``.gz`` archives are checked and
    decompressed when the raw files are absent (:func:`_prepare_mnist_raw`). ``name`` is the
    registry's name, ``how`` the hint of a missing-data error."""
    train = _check_split(split)
    root = Path(root)
    if download:
        cls(str(root), train=train, download=True)
    checksums = _prepare_mnist_raw(root, train, verify, cls, name, how)

    class _Split(cls):  # type: ignore[misc, valid-type]  # checks only the requested split
        @property
        def raw_folder(self) -> str:
            return os.path.join(self.root, cls.__name__, "raw")

        def _check_exists(self) -> bool:
            return all(
                (Path(self.raw_folder) / n[: -len(".gz")]).is_file()
                for n, _ in _mnist_files(self.train, cls)
            )

    ds = _Split(str(root), train=train, download=False)
    source = data_source_of(root, name)
    if source.is_stand_in:
        log_stand_in(name, root / cls.__name__, checksums=checksums == "stand-in")
    return ArrayDataset(
        ds.data.numpy(),
        ds.targets.numpy().astype(np.int64),
        [c.split(" - ")[0] for c in ds.classes],  # MNIST's "0 - zero" is the class "0"
        f"{name}/{split}",
        {
            "root": str(root),
            "checksums_verified": verify,
            "checksums": checksums,
            "data_source": source,
        },
    )


def _load_cifar(
    name: str, cls: Any, root: Path, split: str, download: bool, verify: bool
) -> ArrayDataset:
    train = _check_split(split)
    root = Path(root)
    folder = root / cls.base_folder
    needed = [
        *(cls.train_list if train else cls.test_list),
        (cls.meta["filename"], cls.meta["md5"]),
    ]
    if download:
        cls(str(root), train=train, download=True)
    statuses = set()
    for file_name, md5 in needed:
        path = folder / file_name
        if not path.is_file():
            raise MissingDataError(name, path, _CIFAR_HOW)
        status = _checked(path, md5, name, verify)
        statuses.add(status)
        if not status:
            raise MissingDataError(
                name,
                path,
                "Its MD5 does not match torchvision's: the file is "
                "corrupt or not the CIFAR release. " + _CIFAR_HOW,
            )

    source = data_source_of(root, name)
    if source.is_stand_in:
        log_stand_in(name, folder, checksums="stand-in" in statuses)

    class _Checked(cls):  # type: ignore[misc, valid-type]
        # Integrity was checked above (MD5 unless verify_checksums=False).
        def _check_integrity(self) -> bool:
            return True

        def _load_meta(self) -> None:
            with open(Path(self.root) / self.base_folder / self.meta["filename"], "rb") as fh:
                self.classes = pickle.load(fh, encoding="latin1")[self.meta["key"]]
            self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    ds = _Checked(str(root), train=train, download=False)
    return ArrayDataset(
        np.asarray(ds.data, dtype=np.uint8),
        np.asarray(ds.targets, dtype=np.int64),
        list(ds.classes),
        f"{name}/{split}",
        {
            "root": str(root),
            "checksums_verified": verify,
            "checksums": "stand-in" if "stand-in" in statuses else statuses.pop(),
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
        f"{title}{labels} as ``uint8 [N, 32, 32, 3]`` through "
        f"``torchvision.datasets.{torchvision_class}``."
    )
    register_dataset(
        name,
        description=f"{title} 32×32 colour, {classes} classes (torchvision layout)",
        source=_CIFAR_SOURCE,
    )(load)
    return load


load_cifar10 = _cifar_loader("cifar10", "CIFAR10", "CIFAR-10", 10)
load_cifar100 = _cifar_loader("cifar100", "CIFAR100", "CIFAR-100", 100, " (fine labels)")
