"""Nothing in a data folder can run code or pass damaged data off as the paper's.

A planted pickle (with a rehearsal marker vouching for it) never executes; every damaged file
(a changed MNIST idx file, a CIFAR batch that is garbled or not the format, a bad SVHN ``.mat``,
an undecodable image, a checkpoint that is not a weights-only state dict) is refused in one
:class:`DamagedDataError` line naming it; a stand-in is read only as a stand-in.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import pickle
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from privrepro.data import DamagedDataError, MissingDataError, load_dataset
from privrepro.data.provenance import REHEARSAL_MARKER
from privrepro.data.safe_pickle import DataPickleError, loads_data_pickle

CIFAR10_FILES = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch", "batches.meta"]


class _Planted:
    """A pickle payload that creates ``path`` when unpickled (``os.system`` would do anything)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.path}",))


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def _plant_cifar(root: Path, proof: Path, marker: bool = True) -> Path:
    """Every CIFAR-10 file a planted pickle, and a rehearsal marker listing each with its MD5."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    for name in CIFAR10_FILES:
        payload = {"data": _Planted(proof), "labels": [0], "label_names": _Planted(proof)}
        (folder / name).write_bytes(pickle.dumps(payload, protocol=2))
    if marker:
        listing = {"statement": "stand-in", "files": {n: _md5(folder / n) for n in CIFAR10_FILES}}
        (folder / REHEARSAL_MARKER).write_text(json.dumps(listing))
    return folder


def test_a_planted_pickle_never_runs_whatever_the_marker_says(tmp_path: Path) -> None:
    proof = tmp_path / "PWNED"
    folder = _plant_cifar(tmp_path / "data", proof)
    for split, first in (("test", "batches.meta"), ("train", "batches.meta")):
        with pytest.raises(DamagedDataError) as err:
            load_dataset("cifar10", tmp_path / "data", split=split)
        message = str(err.value)
        assert str(folder / first) in message and "posix.system" in message
        assert "\n" not in message
    with pytest.raises(DamagedDataError, match="posix.system"):
        load_dataset("cifar10", tmp_path / "data", split="test", verify_checksums=False)
    assert not proof.exists()


def test_a_planted_pickle_through_the_command_line(tmp_path: Path) -> None:
    """The case as reported: ``privrepro experiment=ip/fig5 profile=tiny params.dataset=cifar10
    paths.data_dir=<a shared folder holding the planted files and a marker>``."""
    proof = tmp_path / "PWNED"
    _plant_cifar(tmp_path / "shared", proof)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "privrepro.runner.cli",
            "experiment=ip/fig5",
            "profile=tiny",
            "params.dataset=cifar10",
            f"paths.data_dir={tmp_path / 'shared'}",
            f"paths.experiments_dir={tmp_path / 'exp'}",
            f"paths.results_dir={tmp_path / 'res'}",
            f"paths.plots_dir={tmp_path / 'plots'}",
            f"paths.cache_dir={tmp_path / 'cache'}",
            "progress=false",
            "device=cpu",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert not proof.exists(), "the planted pickle ran"
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("privrepro: damaged data: dataset 'cifar10'")
    assert "posix.system" in lines[-1] and "Traceback" not in done.stderr
    assert not [p for p in (tmp_path / "exp").rglob("manifest.json")]  # nothing stored


def test_the_restricted_unpickler_admits_the_format_only() -> None:
    ok = {"data": np.arange(6, dtype=np.uint8).reshape(2, 3), "labels": [1, 2], "s": "é"}
    for proto in (2, 4, 5):
        got = loads_data_pickle(pickle.dumps(ok, protocol=proto))
        np.testing.assert_array_equal(got["data"], ok["data"])  # integers: exact
        assert got["labels"] == [1, 2] and got["s"] == "é"
    refused = [
        {"x": np.array([1, "a"], dtype=object)},  # Python objects inside an array
        {"x": __import__("collections").OrderedDict()},  # any class by name
        {"x": _Planted(Path("/nonexistent/never"))},
    ]
    for obj in refused:
        with pytest.raises(DataPickleError):
            loads_data_pickle(pickle.dumps(obj, protocol=2))


def _write_cifar10(root: Path, rng: np.random.Generator, n: int = 4) -> Path:
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    images = rng.integers(0, 256, size=(n, 3072), dtype=np.uint8)
    (folder / "test_batch").write_bytes(pickle.dumps({"data": images, "labels": list(range(n))}))
    names = [f"c{i}" for i in range(10)]
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": names}))
    return folder


@pytest.mark.parametrize(
    "damage",
    ["truncated", "not a dict", "labels out of range", "data not uint8", "too few labels"],
)
def test_a_damaged_cifar_batch_is_one_line_naming_it(tmp_path: Path, damage: str) -> None:
    folder = _write_cifar10(tmp_path, np.random.default_rng(0))
    batch = folder / "test_batch"
    good = np.zeros((4, 3072), np.uint8)
    if damage == "truncated":
        batch.write_bytes(batch.read_bytes()[:-40])
    elif damage == "not a dict":
        batch.write_bytes(pickle.dumps([1, 2, 3]))
    elif damage == "labels out of range":
        batch.write_bytes(pickle.dumps({"data": good, "labels": [0, 1, 2, 10]}))
    elif damage == "data not uint8":
        batch.write_bytes(pickle.dumps({"data": good.astype(np.float32), "labels": [0] * 4}))
    else:
        batch.write_bytes(pickle.dumps({"data": good, "labels": [0, 1]}))
    with pytest.raises(DamagedDataError) as err:
        load_dataset("cifar10", tmp_path, split="test", verify_checksums=False)
    assert str(batch) in str(err.value) and "\n" not in str(err.value)


def _idx(array: np.ndarray) -> bytes:
    header = struct.pack(">HBB", 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(np.uint8).tobytes()


def _write_mnist(root: Path, n: int = 5, compress: bool = False) -> Path:
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for name, array in (
        ("t10k-images-idx3-ubyte", rng.integers(0, 256, size=(n, 28, 28))),
        ("t10k-labels-idx1-ubyte", np.arange(n) % 10),
    ):
        data = _idx(array)
        if compress:
            (raw / f"{name}.gz").write_bytes(gzip.compress(data))
        else:
            (raw / name).write_bytes(data)
    return raw


def test_a_changed_mnist_idx_file_is_refused_by_name(tmp_path: Path) -> None:
    """A decompressed idx file is checked against the release's MD5 too (it was read unchecked):
    4 bytes changed, or any file not the release's, is one line naming it."""
    raw = _write_mnist(tmp_path)
    images = raw / "t10k-images-idx3-ubyte"
    data = bytearray(images.read_bytes())
    data[100:104] = b"\xff\xff\xff\xff"
    images.write_bytes(bytes(data))
    with pytest.raises(DamagedDataError) as err:
        load_dataset("mnist", tmp_path, split="test")
    message = str(err.value)
    assert str(images) in message and "2646ac647ad5339dbf082846283269ea" in message  # the release's
    assert "\n" not in message
    # read without checks (hand-made files), it is labelled unverified, never MNIST
    ds = load_dataset("mnist", tmp_path, split="test", verify_checksums=False)
    assert ds.meta["data_source"].is_stand_in and "unverified" in ds.meta["data_source"].label


@pytest.mark.parametrize("damage", ["bad magic", "cut short", "labels for other images"])
def test_a_malformed_idx_file_is_one_line_naming_it(tmp_path: Path, damage: str) -> None:
    raw = _write_mnist(tmp_path)
    images, labels = raw / "t10k-images-idx3-ubyte", raw / "t10k-labels-idx1-ubyte"
    if damage == "bad magic":
        images.write_bytes(b"\x00\x00\x09\x03" + images.read_bytes()[4:])
        named = images
    elif damage == "cut short":
        images.write_bytes(images.read_bytes()[:-10])
        named = images
    else:
        labels.write_bytes(_idx(np.arange(3)))
        named = labels
    with pytest.raises(DamagedDataError) as err:
        load_dataset("mnist", tmp_path, split="test", verify_checksums=False)
    assert str(named) in str(err.value)


def test_a_stand_in_archive_is_read_as_a_stand_in_only(tmp_path: Path) -> None:
    """Listed by a marker, a file that is not the release is read, labelled a stand-in; the
    same bytes without the marker are refused like a corrupt download."""
    raw = _write_mnist(tmp_path, compress=True)
    listing = {"files": {p.name: _md5(p) for p in raw.iterdir()}}
    (raw / REHEARSAL_MARKER).write_text(json.dumps(listing))
    ds = load_dataset("mnist", tmp_path, split="test")
    assert ds.meta["checksums"] == "stand-in" and ds.meta["data_source"].is_stand_in
    assert ds.x.shape == (5, 28, 28)
    assert not list(raw.glob("*-ubyte"))  # nothing written into the data root
    (raw / REHEARSAL_MARKER).unlink()
    with pytest.raises(DamagedDataError, match="MD5"):
        load_dataset("mnist", tmp_path, split="test")


def test_a_decompressed_stand_in_is_checked_through_its_archive(tmp_path: Path) -> None:
    raw = _write_mnist(tmp_path, compress=True)
    listing = {"files": {p.name: _md5(p) for p in raw.iterdir()}}
    (raw / REHEARSAL_MARKER).write_text(json.dumps(listing))
    for gz in raw.glob("*.gz"):  # decompressed beside its archive (what earlier versions did)
        gz.with_suffix("").write_bytes(gzip.decompress(gz.read_bytes()))
    assert load_dataset("mnist", tmp_path, split="test").meta["checksums"] == "stand-in"
    labels = raw / "t10k-labels-idx1-ubyte"
    labels.write_bytes(labels.read_bytes()[:-1] + b"\x07")  # no longer its archive's content
    with pytest.raises(DamagedDataError) as err:
        load_dataset("mnist", tmp_path, split="test")
    assert str(labels) in str(err.value)


def test_a_bad_svhn_mat_file_is_one_line_naming_it(tmp_path: Path) -> None:
    from privrepro.continual.sources import load_svhn

    path = tmp_path / "test_32x32.mat"
    path.write_bytes(b"MATLAB 5.0 MAT-file, but then nothing")
    with pytest.raises(DamagedDataError) as err:
        load_svhn(tmp_path, "test", verify_checksums=False)
    assert str(path) in str(err.value)
    with pytest.raises(DamagedDataError, match="MD5"):
        load_svhn(tmp_path, "test")


def test_an_undecodable_image_is_one_line_naming_it(tmp_path: Path) -> None:
    from privrepro.continual.features import _to_pil

    path = tmp_path / "imagenet-r" / "n01" / "x.jpg"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xff\xd8\xff not really a jpeg")
    with pytest.raises(DamagedDataError) as err:
        _to_pil(str(path))
    assert str(path) in str(err.value)


def test_a_checkpoint_that_is_not_weights_only_is_one_line_naming_it(tmp_path: Path) -> None:
    import torch

    from privrepro.continual.features import _weights_only_state
    from privrepro.inference.basemodels import load_state

    proof = tmp_path / "PWNED"
    path = tmp_path / "model.pth"
    torch.save({"w": torch.zeros(2), "x": _Planted(proof)}, path)
    with pytest.raises(DamagedDataError) as err:
        load_state(torch.nn.Linear(2, 1), path)
    assert str(path) in str(err.value)
    with pytest.raises(DamagedDataError):
        _weights_only_state(path)  # a timm backbone's .pth: no longer unpickled whole
    path.write_bytes(b"garbage")
    with pytest.raises(DamagedDataError):
        load_state(torch.nn.Linear(2, 1), path)
    assert not proof.exists()


def test_missing_files_are_still_reported_as_missing(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError) as err:
        load_dataset("cifar10", tmp_path, split="test")
    assert not isinstance(err.value, DamagedDataError) and "is missing" in str(err.value)
