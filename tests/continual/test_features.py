"""Feature extraction and cache, and the image sources, on tiny files in the real formats."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from privrepro.continual.benchmarks import FeatureSpec, load_benchmark
from privrepro.continual.features import (
    create_backbone,
    feature_cache_path,
    load_feature_file,
    save_feature_file,
)
from privrepro.continual.sources import load_notmnist, load_svhn
from privrepro.data.registry import MissingDataError

TINY = {"img_size": 32, "patch_size": 8, "depth": 1, "embed_dim": 48, "num_heads": 2}


def _write_folder(root: Path, classes: list[str], per_class: int, size: int, mode: str) -> None:
    from PIL import Image

    rng = np.random.default_rng(0)
    for c in classes:
        (root / c).mkdir(parents=True)
        for i in range(per_class):
            shape = (size, size, 3) if mode == "RGB" else (size, size)
            arr = rng.integers(0, 255, size=shape, dtype=np.uint8)
            Image.fromarray(arr, mode=mode).save(
                root / c / f"{i}.{'jpg' if mode == 'RGB' else 'png'}"
            )


def test_feature_file_roundtrip(tmp_path: Path) -> None:
    path = feature_cache_path(tmp_path, "vit/b", "cifar100", "train")
    assert path == tmp_path / "cl" / "features" / "vit_b-cifar100-train.npz"
    x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    save_feature_file(path, x, np.arange(5), {"backbone": "b"})
    x2, y2, meta = load_feature_file(path)
    assert np.array_equal(x, x2) and y2.tolist() == [0, 1, 2, 3, 4] and meta == {"backbone": "b"}
    assert not list(path.parent.glob(".tmp-*"))  # atomic write left no partial file


def test_imagenet_r_folder_through_local_weights(tmp_path: Path) -> None:
    """ImageNet-R layout (<root>/imagenet-r/<wnid>/*.jpg) → 80/20 split → a timm ViT whose
    weights come from a local file → cached features; a second call reads the cache."""
    import torch

    _write_folder(tmp_path / "data" / "imagenet-r", ["n01", "n02", "n03"], 5, 24, "RGB")
    torch.manual_seed(0)
    model = create_backbone("vit_tiny_patch16_224", pretrained=False, **TINY)
    weights = tmp_path / "w.pth"
    torch.save(model.state_dict(), weights)
    spec = FeatureSpec(
        source="backbone",
        backbone="vit_tiny_patch16_224",
        weights=str(weights),
        model_kwargs=TINY,
        batch_size=4,
    )
    data, meta = load_benchmark("imagenet-r", spec, tmp_path / "data", tmp_path / "cache")
    assert data.train_x.shape == (12, 48) and data.test_x.shape == (3, 48)  # round(0.2·5) = 1
    assert sorted(np.bincount(data.test_y).tolist()) == [1, 1, 1]
    assert (
        meta["backbone"] == "vit_tiny_patch16_224" and meta["cache"]["train"]["cache_hit"] is False
    )
    # the features are the local model's: recompute one directly
    from privrepro.continual.features import extract_features
    from privrepro.continual.sources import imagenet_r_split

    tr, _ = imagenet_r_split(tmp_path / "data", np.random.default_rng(0))
    direct = extract_features(model, tr.x[:2], batch_size=2)
    assert np.allclose(direct, data.train_x[:2], atol=1e-5)
    again, meta2 = load_benchmark("imagenet-r", spec, tmp_path / "data", tmp_path / "cache")
    assert meta2["cache"]["train"]["cache_hit"] is True and np.array_equal(
        again.train_x, data.train_x
    )
    # the folder edited after its features were cached: five more images of a fourth class
    # (the folder's fingerprint, a listing of paths and sizes, changes); the cache is not read
    _write_folder(tmp_path / "data" / "imagenet-r", ["n04"], 5, 24, "RGB")
    edited, meta3 = load_benchmark("imagenet-r", spec, tmp_path / "data", tmp_path / "cache")
    assert meta3["cache"]["train"]["cache_hit"] is False
    assert edited.train_x.shape == (16, 48) and edited.test_x.shape == (4, 48)  # 4 classes × 4, 1


def test_missing_imagenet_r_names_the_folder(tmp_path: Path) -> None:
    spec = FeatureSpec(source="backbone", backbone="vit_tiny_patch16_224", weights=None)
    with pytest.raises(MissingDataError, match="imagenet-r"):
        load_benchmark("imagenet-r", spec, tmp_path, tmp_path / "cache")


def test_notmnist_folder_split(tmp_path: Path) -> None:
    _write_folder(tmp_path / "notMNIST_small", list("ABCDEFGHIJ"), 5, 28, "L")
    (tmp_path / "notMNIST_small" / "A" / "broken.png").write_bytes(b"not a png")
    tr = load_notmnist(tmp_path, "train", split_seed=3)
    te = load_notmnist(tmp_path, "test", split_seed=3)
    assert tr.x.shape == (40, 28, 28) and te.x.shape == (10, 28, 28) and tr.x.dtype == np.uint8
    assert tr.meta["unreadable_skipped"] == 1
    assert sorted(set(tr.y.tolist())) == list(range(10))


def test_svhn_mat_file(tmp_path: Path) -> None:
    from scipy.io import savemat

    rng = np.random.default_rng(0)
    X = rng.integers(0, 255, size=(32, 32, 3, 6), dtype=np.uint8)
    y = np.array([[10], [1], [2], [3], [4], [5]], dtype=np.uint8)  # SVHN stores digit 0 as 10
    savemat(tmp_path / "train_32x32.mat", {"X": X, "y": y})
    ds = load_svhn(tmp_path, "train", verify_checksums=False)  # hand-made: not the release
    assert ds.x.shape == (6, 32, 32, 3) and ds.y.tolist() == [0, 1, 2, 3, 4, 5]
    assert np.array_equal(ds.x[1], X[..., 1])
    with pytest.raises(MissingDataError):
        load_svhn(tmp_path, "test")


def test_tiny_vit_source(tmp_path: Path) -> None:
    spec = FeatureSpec(source="tiny-vit", tiny_per_class=1, batch_size=64)
    data, meta = load_benchmark("5-datasets", spec, tmp_path, tmp_path / "cache")
    assert data.num_classes == 50 and data.train_x.shape[0] == 50
    assert meta["weights"] == "random" and np.isfinite(data.train_x).all()


def test_a_cached_feature_file_of_other_weights_is_refused(tmp_path: Path) -> None:
    """The cache file is named by backbone, dataset and split; what else the features depend on
    (weights, constructor arguments, precision) is recorded and checked on every hit."""
    import numpy as np

    from privrepro.config import ConfigError
    from privrepro.continual.features import cached_features

    calls = []

    def compute() -> tuple[np.ndarray, np.ndarray, dict[str, object]]:
        calls.append(1)
        return np.ones((2, 3), np.float32), np.arange(2), {"weights": "a.safetensors"}

    cached_features(tmp_path, "vit", "cifar100", "train", compute, {"weights": "a.safetensors"})
    _, _, meta = cached_features(
        tmp_path,
        "vit",
        "cifar100",
        "train",
        compute,
        {"weights": "a.safetensors", "precision": "fp32"},
    )
    assert meta["cache_hit"] and len(calls) == 1  # a file without a precision: fp32
    for other in (
        {"weights": "b.safetensors"},
        {"precision": "bf16"},
        {"model_kwargs": {"img_size": 32}},
    ):
        with pytest.raises(ConfigError, match=f"features.{next(iter(other))}"):
            cached_features(tmp_path, "vit", "cifar100", "train", compute, other)
    assert len(calls) == 1


def test_a_cached_feature_file_of_other_data_is_extracted_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The cache file records the data fingerprint of what it was extracted from: the same
    fingerprint reads it, another one (or none recorded) extracts again, and data that changes
    while being read is refused in one line with nothing written."""
    import logging

    from privrepro.continual.features import cached_features
    from privrepro.data.provenance import DataChangedError

    calls: list[int] = []
    fingerprint = ["sha256:aaaa"]

    def compute() -> tuple[np.ndarray, np.ndarray, dict[str, object]]:
        calls.append(1)
        return np.full((2, 3), len(calls), np.float32), np.arange(2), {}

    def data() -> str:
        return fingerprint[0]

    def get() -> tuple[np.ndarray, np.ndarray, dict[str, object]]:
        return cached_features(tmp_path, "vit", "svhn", "train", compute, None, data)

    x, _, meta = get()
    assert not meta["cache_hit"] and meta["data"] == "sha256:aaaa" and len(calls) == 1
    x, _, meta = get()  # unchanged data: the cache
    assert meta["cache_hit"] and len(calls) == 1 and float(x[0, 0]) == 1.0
    fingerprint[0] = "sha256:bbbb"  # the dataset edited
    with caplog.at_level(logging.WARNING, logger="privrepro.continual"):
        x, _, meta = get()
    assert not meta["cache_hit"] and len(calls) == 2 and float(x[0, 0]) == 2.0
    assert "extracted from other data (fingerprint sha256:aaaa, now sha256:bbbb)" in caplog.text
    x, _, meta = get()  # the replaced file is this data's
    assert meta["cache_hit"] and meta["data"] == "sha256:bbbb" and float(x[0, 0]) == 2.0
    # a file written without a fingerprint (before they were recorded) is extracted again
    save_feature_file(feature_cache_path(tmp_path, "vit", "svhn", "train"), x, np.arange(2), {})
    _, _, meta = get()
    assert not meta["cache_hit"] and len(calls) == 3

    def edited_while_read() -> tuple[np.ndarray, np.ndarray, dict[str, object]]:
        fingerprint[0] = "sha256:cccc"
        return compute()

    fingerprint[0] = "sha256:dddd"
    with pytest.raises(DataChangedError) as err:
        cached_features(tmp_path, "vit", "svhn", "train", edited_while_read, None, data)
    assert "svhn changed while its train features were extracted" in str(err.value)
    assert "\n" not in str(err.value)
    _, _, kept = load_feature_file(feature_cache_path(tmp_path, "vit", "svhn", "train"))
    assert kept["data"] == "sha256:bbbb"  # not replaced: the file still holds what it was
