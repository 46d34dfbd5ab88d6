"""FiLM on real images of every cl benchmark: tiny files in the real formats (ImageNet-R's image
folder; 5-Datasets' idx, .mat, PNG-folder and pickled-batch files) through a small random timm
ViT loaded from a local weights file. The FiLM images must be exactly those behind the cached
features of head-only runs: same split, same labels, same pixels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from tests.continual.test_features import TINY, _write_folder
from tests.data.test_vision import _write_cifar, _write_idx

from privrepro.config import ConfigError
from privrepro.continual import Workspace
from privrepro.continual.benchmarks import FeatureSpec, benchmark_images, load_benchmark
from privrepro.continual.features import create_backbone
from privrepro.continual.peft import (
    FeatureSettings,
    FilmSettings,
    PeftData,
    PeftRun,
    TrainSettings,
    TuningSettings,
    check_film_source,
    load_film_images,
    run_peft,
)
from privrepro.continual.peft import data as peft_data
from privrepro.continual.pixels import HostImages
from privrepro.continual.scenarios import FIVE_DATASETS
from privrepro.training.rows import gather_rows

NAME = "vit_tiny_patch16_224"


def _where(tmp: Path) -> Workspace:
    return Workspace(tmp / "data", tmp / "_cache")


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    """A small random ViT (32 px, patch 8, one block) saved as a local checkpoint."""
    torch.manual_seed(0)
    path = tmp_path / "w.pth"
    torch.save(create_backbone(NAME, pretrained=False, **TINY).state_dict(), path)
    return path


def _spec(weights: Path) -> FeatureSpec:
    # the tiny CIFAR-10 batches are hand-made, not the release: no MD5 check
    return FeatureSpec(
        source="backbone",
        backbone=NAME,
        weights=str(weights),
        model_kwargs=TINY,
        batch_size=8,
        verify_checksums=False,
    )


def _params(weights: Path) -> FeatureSettings:
    return FeatureSettings(source="backbone", backbone=NAME, weights=str(weights))


def _write_five_datasets(root: Path) -> dict[str, tuple[int, int]]:
    """Every 5-Datasets member in its real on-disk format; returns (n_train, n_test) each."""
    from scipy.io import savemat

    rng = np.random.default_rng(0)
    for folder in ("MNIST", "FashionMNIST"):
        raw = root / folder / "raw"
        raw.mkdir(parents=True)
        for prefix, n in (("train", 6), ("t10k", 4)):
            _write_idx(
                raw / f"{prefix}-images-idx3-ubyte", rng.integers(0, 256, (n, 28, 28)), False
            )
            _write_idx(raw / f"{prefix}-labels-idx1-ubyte", np.arange(n) % 10, False)
    for split, n in (("train", 6), ("test", 4)):
        x = rng.integers(0, 255, size=(32, 32, 3, n), dtype=np.uint8)
        savemat(root / f"{split}_32x32.mat", {"X": x, "y": (np.arange(n) + 1)[:, None]})
    _write_folder(root / "notMNIST_small", list("ABCDEFGHIJ"), 5, 28, "L")
    train_files = [f"data_batch_{i}" for i in range(1, 6)]
    classes = [f"c{i}" for i in range(10)]
    _write_cifar(
        root,
        "cifar-10-batches-py",
        [*train_files, "test_batch"],
        "batches.meta",
        "labels",
        classes,
        rng,
    )
    # notMNIST: round(0.2·5) = 1 test image per letter; CIFAR-10: 4 images per batch file
    return {
        "mnist": (6, 4),
        "svhn": (6, 4),
        "notmnist": (40, 10),
        "fashionmnist": (6, 4),
        "cifar10": (20, 4),
    }


def _same_as_feature_path(data: PeftData, fs: FeatureSpec, benchmark: str, tmp: Path):
    """Labels, split and pixels of the FiLM images equal the feature path's (the features of
    the FiLM tensors through the same backbone are the cached features, up to float32 rounding
    of differently batched matmuls: atol 1e-5)."""
    feats, _ = load_benchmark(benchmark, fs, tmp / "data", tmp / "_cache")
    np.testing.assert_array_equal(data.train_y, feats.train_y)
    np.testing.assert_array_equal(data.test_y, feats.test_y)
    assert data.backbone is not None
    with torch.no_grad():
        z_tr = data.backbone(gather_rows(data.train_x)).numpy()
        z_te = data.backbone(gather_rows(data.test_x)).numpy()
    np.testing.assert_allclose(z_tr, feats.train_x, atol=1e-5)
    np.testing.assert_allclose(z_te, feats.test_x, atol=1e-5)


def test_imagenet_r_film_images(tmp_path: Path, weights: Path) -> None:
    _write_folder(tmp_path / "data" / "imagenet-r", ["n01", "n02", "n03"], 5, 24, "RGB")
    fs = _spec(weights)
    data = load_film_images("imagenet-r", _params(weights), _where(tmp_path), spec=fs)
    # 5 per class, 80/20 per class: 4 train + 1 test each; resized to the ViT's 32 px input
    assert data.train_x.shape == (12, 3, 32, 32) and data.test_x.shape == (3, 3, 32, 32)
    assert data.train_x.dtype == torch.float32 and data.num_classes == 200
    assert np.bincount(data.train_y).tolist() == [4, 4, 4]
    _same_as_feature_path(data, fs, "imagenet-r", tmp_path)
    # the images stay on the host, resized once into a memory-mapped uint8 cache per split
    assert isinstance(data.train_x, HostImages) and isinstance(data.test_x, HostImages)
    caches = sorted(p.name for p in (tmp_path / "_cache" / "cl" / "images").iterdir())
    assert len(caches) == 2 and caches[0].endswith("-imagenet-r-split0-test.npy")
    again = load_film_images("imagenet-r", _params(weights), _where(tmp_path), spec=fs)
    assert torch.equal(gather_rows(again.train_x), gather_rows(data.train_x))
    # the folder edited after its pixels were cached (a fourth class: its fingerprint, a
    # listing of paths and sizes, changes): converted again into caches of their own, never
    # read through the old ones
    _write_folder(tmp_path / "data" / "imagenet-r", ["n04"], 5, 24, "RGB")
    edited = load_film_images("imagenet-r", _params(weights), _where(tmp_path), spec=fs)
    assert edited.train_x.shape == (16, 3, 32, 32) and edited.test_x.shape == (4, 3, 32, 32)
    caches = sorted(p.name for p in (tmp_path / "_cache" / "cl" / "images").iterdir())
    assert len(caches) == 4


def test_five_datasets_film_images(tmp_path: Path, weights: Path) -> None:
    sizes = _write_five_datasets(tmp_path / "data")
    fs = _spec(weights)
    data = load_film_images("5-datasets", _params(weights), _where(tmp_path), spec=fs)
    n_tr = sum(a for a, _ in sizes.values())
    n_te = sum(b for _, b in sizes.values())
    # grey MNIST / FashionMNIST / notMNIST become 3 channels like SVHN and CIFAR-10
    assert data.train_x.shape == (n_tr, 3, 32, 32) and data.test_x.shape == (n_te, 3, 32, 32)
    assert data.num_classes == 50
    # member k's labels are 10k … 10k+9, members in FIVE_DATASETS order (cl paper, Sec. 6)
    for y, col in ((data.train_y, 0), (data.test_y, 1)):
        start = 0
        for k, member in enumerate(FIVE_DATASETS):
            n = sizes[member][col]
            part = y[start : start + n]
            assert part.min() >= 10 * k and part.max() <= 10 * k + 9, member
            start += n
        assert start == len(y)
    # a grey image is repeated over the channels: undoing the per-channel normalisation of the
    # backbone's transform gives three equal channels (float32 rounding: atol 1e-6)
    from timm.data import resolve_data_config

    x_raw, _ = benchmark_images("5-datasets", fs, tmp_path / "data", "train")
    assert np.asarray(x_raw[0]).ndim == 2  # MNIST comes first and is grey
    cfg = resolve_data_config({}, model=data.backbone)
    mean = torch.tensor(cfg["mean"])[:, None, None]
    std = torch.tensor(cfg["std"])[:, None, None]
    px = gather_rows(data.train_x, [0])[0] * std + mean
    torch.testing.assert_close(px[0], px[1], atol=1e-6, rtol=0)
    torch.testing.assert_close(px[0], px[2], atol=1e-6, rtol=0)
    _same_as_feature_path(data, fs, "5-datasets", tmp_path)


def test_subsampling_matches_head_runs(tmp_path: Path, weights: Path) -> None:
    """``max_*_per_class`` keeps the same images for FiLM as for head-only runs."""
    _write_folder(tmp_path / "data" / "imagenet-r", ["n01", "n02", "n03"], 5, 24, "RGB")
    fs = _spec(weights)
    fp = FeatureSettings(
        source="backbone", backbone=NAME, max_train_per_class=2, max_test_per_class=1
    )
    data = load_film_images("imagenet-r", fp, _where(tmp_path), spec=fs)
    feats, _ = load_benchmark("imagenet-r", fs, tmp_path / "data", tmp_path / "_cache")
    k_tr, k_te = peft_data.subsample_pair(feats.train_y, feats.test_y, fp)
    assert len(k_tr) == 6 and len(k_te) == 3
    assert data.backbone is not None
    with torch.no_grad():
        z = data.backbone(gather_rows(data.train_x)).numpy()
    np.testing.assert_allclose(z, feats.train_x[k_tr], atol=1e-5)  # batching rounding only
    np.testing.assert_array_equal(data.test_y, feats.test_y[k_te])


@pytest.mark.parametrize("benchmark", ["cifar100", "imagenet-r", "5-datasets"])
def test_check_film_source_accepts_every_benchmark(benchmark: str) -> None:
    """FiLM on real images is allowed on every benchmark: the check passes, and a FiLM recipe on
    real images builds its run units for the benchmark (``units`` runs the check first), each
    labelled as the real benchmark, not a stand-in."""
    from privrepro.config.validation import build_params
    from privrepro.figures.cl.fig5_peft import DomainShiftPeft

    fp = FeatureSettings(source="backbone")
    check_film_source(fp, [benchmark], ["peft_film", "naive_film", "noncl_head"])
    recipe = DomainShiftPeft()
    params = build_params(
        recipe.params_type,
        {
            "benchmarks": [benchmark],
            "methods": ["peft_film"],
            "epsilons": [1.0],
            "repeats": 1,
            "features": {"source": "backbone"},
        },
    )
    units = recipe.units(params)
    assert len(units) == 1 and units[0]["benchmark"] == benchmark
    assert units[0]["features"]["source"] == "backbone"
    source = recipe.data_source(units[0], Path("data"))
    assert not source.is_stand_in and source.name.endswith(
        ("CIFAR-100", "ImageNet-R", "5-Datasets")
    )


def test_check_film_source_still_refuses_unknown() -> None:
    with pytest.raises(ConfigError, match="tinyimagenet"):
        check_film_source(FeatureSettings(source="backbone"), ["tinyimagenet"], ["peft_film"])


def test_film_run_on_imagenet_r_images(
    tmp_path: Path, weights: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole PEFT FiLM run on the ImageNet-R images (DP-SGD through the per-sample clipper on the LayerNorm
    affine + head): ten tasks of 20 classes, only those holding the 3 written classes non-empty."""
    _write_folder(tmp_path / "data" / "imagenet-r", ["n01", "n02", "n03"], 5, 24, "RGB")
    monkeypatch.setattr(peft_data, "feature_spec", lambda fp: _spec(weights))
    rows, _ = run_peft(
        PeftRun("imagenet-r", "peft_film", epsilon=1.0, repeat=0),
        _params(weights),
        FilmSettings(physical_batch=8),
        TrainSettings(epochs=1.0),
        TuningSettings(enabled=False, batch_size=4.0),
        workspace=_where(tmp_path),
    )
    priv = rows[rows["row"] == "privacy"]
    assert len(priv) == 10  # Split-ImageNet-R: 10 tasks, one member each
    assert priv["n_train"].sum() == 12  # every training image in exactly one task
    aa = rows[(rows["row"] == "metric") & (rows["metric"] == "AA")]["value"]
    assert ((aa >= 0) & (aa <= 1)).all()


def test_head_runs_extract_features_under_the_workspaces_loops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A head run's feature extraction goes through the workspace's loops, as a cosine run's
    does: a bar on a terminal, and the loop a rehearsal's cap shortens (without it a rehearsed
    head unit extracted all of CIFAR-100 through ViT-B/16 and ran out of time)."""
    import privrepro.continual.benchmarks as benchmarks
    from privrepro.continual.scenarios import ContinualData

    seen: list[object] = []

    def fake(*args: object, **kwargs: object) -> tuple[ContinualData, dict[str, str]]:
        seen.append(args[5] if len(args) > 5 else kwargs.get("loops"))
        y = np.arange(4) % 2
        x = np.zeros((4, 3), dtype=np.float32)
        return ContinualData("cifar100", x, y, x, y, 2), {"feature_source": "backbone"}

    monkeypatch.setattr(benchmarks, "load_benchmark", fake)
    from dataclasses import replace

    from privrepro.loops import Loops

    ws = replace(_where(tmp_path), loops=Loops())  # an instance of its own, not the default
    peft_data.load_peft_data(
        PeftRun("cifar100", "peft_head", epsilon=1.0),
        FeatureSettings(source="backbone"),
        FilmSettings(),
        ws,
    )
    assert len(seen) == 1 and seen[0] is ws.loops
