"""Image sources of the cl benchmarks that the common data layer does not provide.

CIFAR-10/100 and MNIST come from :mod:`privrepro.data` (torchvision classes); the other sources
are read here (more in ``docs/modules.md``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from privrepro.config import ConfigError
from privrepro.continual.scenarios import train_test_split_indices
from privrepro.data.arrays import ArrayDataset
from privrepro.data.provenance import (
    data_source_of,
    folder_source,
    stand_in_source,
    unverified_source,
)
from privrepro.data.registry import DamagedDataError, MissingDataError
from privrepro.data.standin_checks import checksum_status, file_md5, log_stand_in

__all__ = [
    "IMAGE_SUFFIXES",
    "image_folder",
    "imagenet_r_split",
    "load_fashionmnist",
    "load_five_datasets_member",
    "load_notmnist",
    "load_svhn",
]

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp")

_IMAGENET_R_HOW = (
    "Download https://people.eecs.berkeley.edu/~hendrycks/imagenet-r.tar and "
    "extract it there (200 class folders of images)."
)
_NOTMNIST_HOW = (
    "Download notMNIST_small.tar.gz (http://yaroslavvb.com/upload/notMNIST/) and "
    "extract it there (folders A..J of 28×28 PNGs)."
)


def image_folder(folder: Path, name: str, how: str) -> ArrayDataset:
    """Every image under ``folder/<class>/``, classes sorted by folder name (torchvision's
    ImageFolder convention); ``x`` is an object array of paths."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MissingDataError(name, folder, how)
    classes = sorted(p.name for p in folder.iterdir() if p.is_dir())
    if not classes:
        raise MissingDataError(name, folder / "<class>", how)
    paths: list[str] = []
    labels: list[int] = []
    for c, cls in enumerate(classes):
        files = sorted(
            p
            for p in (folder / cls).iterdir()
            if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()
        )
        paths.extend(str(p) for p in files)
        labels.extend([c] * len(files))
    source = folder_source(folder, name)
    if source.is_stand_in:
        log_stand_in(name, folder)
    return ArrayDataset(
        np.array(paths, dtype=object),
        np.array(labels, dtype=np.int64),
        classes,
        name,
        {"root": str(folder), "data_source": source},
    )


def imagenet_r_split(
    root: Path, rng: np.random.Generator, test_fraction: float = 0.2
) -> tuple[ArrayDataset, ArrayDataset]:
    """ImageNet-R's train and test sets: a random, per-class stratified 80/20 split."""
    full = image_folder(Path(root) / "imagenet-r", "imagenet-r", _IMAGENET_R_HOW)
    tr, te = train_test_split_indices(full.y, test_fraction, rng)
    return full.subset(tr), full.subset(te)


def load_notmnist(
    root: Path, split: str = "train", split_seed: int = 0, test_fraction: float = 0.2
) -> ArrayDataset:
    """notMNIST letters A–J as ``uint8 [N, 28, 28]``, one split of an 80/20 split drawn with
    ``split_seed`` (the same seed gives complementary train and test sets)."""
    from PIL import Image

    full = image_folder(Path(root) / "notMNIST_small", "notmnist", _NOTMNIST_HOW)
    images, keep = [], []
    for i, p in enumerate(full.x):
        try:
            with Image.open(p) as im:
                images.append(np.asarray(im.convert("L").resize((28, 28)), dtype=np.uint8))
            keep.append(i)
        except OSError:
            continue
    y = full.y[keep]
    x = np.stack(images) if images else np.zeros((0, 28, 28), np.uint8)
    tr, te = train_test_split_indices(y, test_fraction, np.random.default_rng(split_seed))
    idx = tr if split == "train" else te
    return ArrayDataset(
        x[idx],
        y[idx],
        full.classes,
        f"notmnist/{split}",
        {
            "root": str(root),
            "unreadable_skipped": len(full.y) - len(keep),
            "data_source": data_source_of(root, "notmnist"),
        },
    )


_FASHIONMNIST_HOW = (
    "Run with download enabled on a machine with internet, or copy the FashionMNIST idx files "
    "of the split (.gz as distributed, or decompressed) there."
)
_SVHN_HOW = (
    "Download it from http://ufldl.stanford.edu/housenumbers/ (format 2) or run with "
    "download enabled."
)


def load_fashionmnist(
    root: Path, split: str = "train", download: bool = False, verify_checksums: bool = True
) -> ArrayDataset:
    """FashionMNIST as ``uint8 [N, 28, 28]`` through ``torchvision.datasets.FashionMNIST``.

    Like MNIST (:func:`privrepro.data.vision.load_mnist`): only the files of ``split`` are
    needed, each MD5-checked; the ``.gz`` archives are read when the raw files are absent.
    """
    from torchvision.datasets import FashionMNIST

    from privrepro.data.vision import load_idx_split

    return load_idx_split(
        FashionMNIST, "fashionmnist", root, split, download, verify_checksums, _FASHIONMNIST_HOW
    )


def load_svhn(
    root: Path, split: str = "train", download: bool = False, verify_checksums: bool = True
) -> ArrayDataset:
    """SVHN (cropped digits) as ``uint8 [N, 32, 32, 3]`` through ``torchvision.datasets.SVHN``
    (its label 10 for the digit 0 is mapped to 0 by torchvision); the ``.mat`` file is checked
    against torchvision's MD5 unless ``verify_checksums=False``."""
    from torchvision.datasets import SVHN

    path = Path(root) / f"{split}_32x32.mat"
    if download:  # torchvision's download (MD5-checked), without loading the file twice
        from torchvision.datasets.utils import download_url

        url, filename, md5 = SVHN.split_list[split]
        download_url(url, str(root), filename, md5)
    if not path.is_file():
        raise MissingDataError("svhn", path, _SVHN_HOW)
    checksums = "not verified"
    if verify_checksums:
        checksums = checksum_status(path, SVHN.split_list[split][2]) or ""
        if not checksums:
            raise DamagedDataError(
                "svhn",
                path,
                f"its MD5 ({file_md5(path)}) does not match torchvision's list of the release "
                f"({SVHN.split_list[split][2]}): the file is corrupt or not the release",
                _SVHN_HOW,
            )

    class _Checked(SVHN):  # integrity was checked above (MD5 unless verify_checksums=False)
        def _check_integrity(self) -> bool:
            return True

    try:  # a .mat file (scipy.io.loadmat): arrays, no code
        ds = _Checked(str(root), split=split, download=False)
        x = np.ascontiguousarray(np.asarray(ds.data, dtype=np.uint8).transpose(0, 2, 3, 1))
        y = np.asarray(ds.labels, dtype=np.int64)
    except Exception as exc:
        raise DamagedDataError(
            "svhn",
            path,
            f"it does not load as SVHN's .mat ({type(exc).__name__}: {exc})",
            _SVHN_HOW,
        ) from exc
    if x.shape[1:] != (32, 32, 3) or y.shape != (len(x),):
        raise DamagedDataError(
            "svhn", path, f"its arrays have shapes {x.shape}, {y.shape}", _SVHN_HOW
        )
    if not verify_checksums:
        source = unverified_source("svhn")
    else:
        source = (
            stand_in_source("svhn") if checksums == "stand-in" else data_source_of(root, "svhn")
        )
        if source.is_stand_in:
            log_stand_in("svhn", path, checksums=checksums == "stand-in")
    return ArrayDataset(
        x,
        y,
        [str(i) for i in range(10)],
        f"svhn/{split}",
        {"root": str(root), "checksums": checksums, "data_source": source},
    )


def load_five_datasets_member(
    name: str,
    root: Path,
    split: str,
    split_seed: int = 0,
    download: bool = False,
    verify_checksums: bool = True,
) -> ArrayDataset:
    """One member of 5-Datasets by name (see :data:`privrepro.continual.scenarios.FIVE_DATASETS`)."""
    if name == "mnist":
        from privrepro.data.vision import load_mnist

        return load_mnist(Path(root), split, download=download, verify_checksums=verify_checksums)
    if name == "cifar10":
        from privrepro.data.vision import load_cifar10

        return load_cifar10(Path(root), split, download=download, verify_checksums=verify_checksums)
    if name == "svhn":
        return load_svhn(Path(root), split, download, verify_checksums)
    if name == "fashionmnist":
        return load_fashionmnist(Path(root), split, download, verify_checksums)
    if name == "notmnist":
        return load_notmnist(Path(root), split, split_seed)
    raise ConfigError(
        "5-Datasets member", name, "must be one of mnist, svhn, notmnist, fashionmnist, cifar10"
    )
