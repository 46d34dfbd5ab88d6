"""MNIST and CIFAR loaders on tiny files written in the real on-disk formats."""

from __future__ import annotations

import gzip
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest

from privrepro.data import MissingDataError, load_dataset


def _write_idx(path: Path, array: np.ndarray, compress: bool) -> None:
    """The idx format (LeCun): magic 0x0000 08 <ndim>, big-endian dims, then uint8 data."""
    header = struct.pack(">HBB", 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    data = header + array.astype(np.uint8).tobytes()
    if compress:
        path = path.with_name(path.name + ".gz")
        data = gzip.compress(data)
    path.write_bytes(data)


@pytest.mark.parametrize("compress", [False, True], ids=["raw", "gzip"])
def test_mnist_reads_idx_files_through_torchvision(tmp_path: Path, compress: bool) -> None:
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(5, 28, 28))
    labels = np.array([3, 1, 4, 1, 5])
    _write_idx(raw / "t10k-images-idx3-ubyte", images, compress)
    _write_idx(raw / "t10k-labels-idx1-ubyte", labels, compress)
    ds = load_dataset("mnist", tmp_path, split="test", verify_checksums=False)
    assert ds.x.shape == (5, 28, 28) and ds.x.dtype == np.uint8
    np.testing.assert_array_equal(ds.x, images)
    np.testing.assert_array_equal(ds.y, labels)
    assert ds.num_classes == 10


def test_mnist_checksums_are_verified_for_archives(tmp_path: Path) -> None:
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    _write_idx(raw / "t10k-images-idx3-ubyte", np.zeros((1, 28, 28)), compress=True)
    _write_idx(raw / "t10k-labels-idx1-ubyte", np.zeros(1), compress=True)
    with pytest.raises(MissingDataError, match="MD5"):
        load_dataset("mnist", tmp_path, split="test")  # a hand-made archive is not the release


def test_missing_mnist_names_file_place_and_remedy(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError) as err:
        load_dataset("mnist", tmp_path, split="train")
    message = str(err.value)
    assert str(tmp_path / "MNIST" / "raw" / "train-images-idx3-ubyte") in message
    assert "download" in message and "PRIVREPRO_DATA" in message


def _write_cifar(
    root: Path,
    folder: str,
    files: list[str],
    meta: str,
    label_key: str,
    classes: list[str],
    rng: np.random.Generator,
    n: int = 4,
) -> np.ndarray:
    """The CIFAR 'python version': pickled dicts with a ``data`` [N, 3072] uint8 array."""
    base = root / folder
    base.mkdir(parents=True)
    images = rng.integers(0, 256, size=(n, 3, 32, 32), dtype=np.uint8)
    for name in files:
        with open(base / name, "wb") as fh:
            pickle.dump({"data": images.reshape(n, -1), label_key: list(range(n))}, fh)
    with open(base / meta, "wb") as fh:
        pickle.dump({"label_names" if label_key == "labels" else "fine_label_names": classes}, fh)
    return images.transpose(0, 2, 3, 1)


def test_cifar10_reads_pickled_batches_through_torchvision(tmp_path: Path) -> None:
    classes = [f"c{i}" for i in range(10)]
    expected = _write_cifar(
        tmp_path,
        "cifar-10-batches-py",
        ["test_batch"],
        "batches.meta",
        "labels",
        classes,
        np.random.default_rng(1),
    )
    ds = load_dataset("cifar10", tmp_path, split="test", verify_checksums=False)
    assert ds.x.shape == (4, 32, 32, 3)
    np.testing.assert_array_equal(ds.x, expected)
    np.testing.assert_array_equal(ds.y, [0, 1, 2, 3])
    assert ds.classes == classes
    assert ds.as_float_images().shape == (4, 3, 32, 32)


def test_cifar100_reads_fine_labels(tmp_path: Path) -> None:
    classes = [f"f{i}" for i in range(100)]
    _write_cifar(
        tmp_path,
        "cifar-100-python",
        ["train"],
        "meta",
        "fine_labels",
        classes,
        np.random.default_rng(2),
    )
    ds = load_dataset("cifar100", tmp_path, split="train", verify_checksums=False)
    assert ds.num_classes == 100 and list(ds.y) == [0, 1, 2, 3]


def test_cifar_checksum_mismatch_and_missing_file(tmp_path: Path) -> None:
    _write_cifar(
        tmp_path,
        "cifar-10-batches-py",
        ["test_batch"],
        "batches.meta",
        "labels",
        [str(i) for i in range(10)],
        np.random.default_rng(3),
    )
    with pytest.raises(MissingDataError, match="MD5"):
        load_dataset("cifar10", tmp_path, split="test")
    with pytest.raises(MissingDataError, match="data_batch_1"):
        load_dataset("cifar10", tmp_path, split="train", verify_checksums=False)


def test_digits_split_is_fixed_and_disjoint() -> None:
    train = load_dataset("digits", split="train")
    test = load_dataset("digits", split="test")
    every = load_dataset("digits", split="all")
    assert len(train) + len(test) == len(every) == 1797  # sklearn's bundled digits
    assert train.x.max() <= 1.0 and train.x.dtype == np.float32
    again = load_dataset("digits", split="test")
    np.testing.assert_array_equal(test.y, again.y)


def test_unknown_dataset_and_split_are_config_errors() -> None:
    from privrepro.config import ConfigError

    with pytest.raises(ConfigError, match="dataset.name"):
        load_dataset("imagenet-42")
    with pytest.raises(ConfigError, match="dataset.split"):
        load_dataset("digits", split="validation")


def test_synthetic_images_are_seeded() -> None:
    a = load_dataset("synthetic_images", n=20, seed=3)
    b = load_dataset("synthetic_images", n=20, seed=3)
    c = load_dataset("synthetic_images", n=20, seed=4)
    np.testing.assert_array_equal(a.x, b.x)
    assert not np.array_equal(a.x, c.x)
    assert a.x.shape == (20, 3, 16, 16) and 0.0 <= a.x.min() and a.x.max() <= 1.0
