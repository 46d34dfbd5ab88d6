"""The data of a PEFT run: features for head-only runs, images for FiLM runs (cl paper, Sec. 6).

* Head-only runs read the benchmark's features (:func:`~privrepro.continual.benchmarks.
  load_benchmark`: cached ViT-B/16 features of the real images, or synthetic clusters).
* FiLM runs read images: seeded synthetic images through a small random-weight timm ViT
  (``source = "synthetic"``), or the real images in the backbone's input format, kept on the
  host (:func:`load_film_images`).

Both subsample with the same indices (``max_*_per_class``), so head and FiLM runs of one
benchmark see the same samples.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from privrepro.config import ConfigError
from privrepro.continual.benchmarks import FeatureSpec
from privrepro.continual.peft.settings import (
    FILM_BENCHMARKS,
    FeatureSettings,
    FilmSettings,
    PeftRun,
)
from privrepro.continual.workspace import Workspace
from privrepro.seeding import torch_stream
from privrepro.training.rows import Rows

__all__ = ["NUM_CLASSES", "PeftData", "feature_spec", "load_film_images", "load_peft_data"]

NUM_CLASSES = {"cifar100": 100, "imagenet-r": 200, "5-datasets": 50}


@dataclass
class PeftData:
    """Train and test rows (feature tensors, image tensors or host images), global labels, the
    number of base classes, provenance, and the backbone of FiLM runs."""

    train_x: Rows
    train_y: np.ndarray
    test_x: Rows
    test_y: np.ndarray
    num_classes: int
    meta: dict[str, Any]
    backbone: torch.nn.Module | None = None


def _subsample(y: np.ndarray, per_class: int, rng: np.random.Generator) -> np.ndarray:
    if per_class <= 0:
        return np.arange(len(y))
    keep = [rng.permutation(np.flatnonzero(y == c))[:per_class] for c in np.unique(y)]
    return np.sort(np.concatenate(keep))


def subsample_pair(
    train_y: np.ndarray, test_y: np.ndarray, features: FeatureSettings
) -> tuple[np.ndarray, np.ndarray]:
    """The kept train and test indices (``max_*_per_class``), the same for head and FiLM runs."""
    rng = np.random.default_rng([features.synthetic_seed, 17])
    return (
        _subsample(train_y, features.max_train_per_class, rng),
        _subsample(test_y, features.max_test_per_class, rng),
    )


def feature_spec(features: FeatureSettings) -> FeatureSpec:
    """The :class:`~privrepro.continual.benchmarks.FeatureSpec` of a run's ``features``:
    head runs read its cached features, FiLM runs its images (same split and labels)."""
    return FeatureSpec(
        source=features.source,
        backbone=features.backbone,
        weights=features.weights or None,
        synthetic_dim=features.synthetic_dim,
        synthetic_seed=features.synthetic_seed,
        precision=features.precision,
    )


def _head_data(run: PeftRun, features: FeatureSettings, ws: Workspace) -> PeftData:
    from privrepro.continual.benchmarks import load_benchmark

    spec = feature_spec(features)
    # the extraction's batches go through the workspace's loops, as the cosine runs' do
    data, meta = load_benchmark(run.benchmark, spec, ws.data_dir, ws.cache_dir, ws.device, ws.loops)
    tr, te = subsample_pair(data.train_y, data.test_y, features)
    device = ws.device
    return PeftData(
        torch.as_tensor(data.train_x[tr], dtype=torch.float32, device=device),
        data.train_y[tr],
        torch.as_tensor(data.test_x[te], dtype=torch.float32, device=device),
        data.test_y[te],
        data.num_classes,
        meta,
    )


def _synthetic_images(
    run: PeftRun, features: FeatureSettings, film: FilmSettings, device: str
) -> PeftData:
    """Seeded synthetic images, balanced per class, and the small random ViT of ``film``."""
    from privrepro.continual.peft.members import small_vit
    from privrepro.data.synthetic import synthetic_images

    sub_rng = np.random.default_rng([features.synthetic_seed, 17])
    c = NUM_CLASSES[run.benchmark]
    per = {"train": features.max_train_per_class or 50, "test": features.max_test_per_class or 10}
    # labels are drawn uniformly: oversample and keep ``per`` of each class (balanced)
    sets = {
        split: synthetic_images(
            None,
            n=c * (3 * per[split] + 40),
            num_classes=c,
            shape=(3, film.img_size, film.img_size),
            noise=film.image_noise,
            seed=features.synthetic_seed,
            split=split,
        )
        for split in ("train", "test")
    }
    keep = {split: _subsample(sets[split].y, per[split], sub_rng) for split in ("train", "test")}
    vit = small_vit(
        torch_stream(features.synthetic_seed, "cl-small-vit"),
        film.img_size,
        film.patch_size,
        film.embed_dim,
        film.depth,
        film.num_heads,
    )
    return PeftData(
        torch.as_tensor(sets["train"].x[keep["train"]], device=device),
        sets["train"].y[keep["train"]],
        torch.as_tensor(sets["test"].x[keep["test"]], device=device),
        sets["test"].y[keep["test"]],
        c,
        {"feature_source": "synthetic images", "backbone": "small random ViT"},
        vit.to(device),
    )


def load_peft_data(
    run: PeftRun,
    features: FeatureSettings,
    film: FilmSettings,
    workspace: Workspace | None = None,
) -> PeftData:
    """The rows ``run`` trains and tests on, on the workspace's device (real FiLM images: on
    the host)."""
    ws = workspace or Workspace()
    if run.kind == "head":
        return _head_data(run, features, ws)
    if features.source == "synthetic":
        return _synthetic_images(run, features, film, ws.device)
    return load_film_images(run.benchmark, features, ws)


def load_film_images(
    benchmark: str,
    features: FeatureSettings,
    workspace: Workspace | None = None,
    *,
    spec: FeatureSpec | None = None,
    chunk: int = 512,
) -> PeftData:
    """Real images in the backbone's input format, kept on the host (paper FiLM).

    The images and labels are those of :func:`privrepro.continual.benchmarks.image_parts`, the
    source of head runs' cached features too (ImageNet-R's 80/20 split, 5-Datasets' members and
    label offsets), subsampled like head runs (``max_*_per_class``). Each part is converted to
    RGB (grey MNIST, FashionMNIST and notMNIST repeated over 3 channels), resized and cropped
    once into a memory-mapped ``uint8`` cache (:func:`privrepro.continual.pixels.cached_pixels`,
    under the workspace's ``cache_dir``) and returned as
    :class:`~privrepro.continual.pixels.HostImages`: DP-SGD and evaluation gather one batch at a
    time to the device, normalised in float32, so a full-size benchmark never has to fit on it.
    ``spec`` (default :func:`feature_spec` of ``features``) gives the loaders' options and the
    backbone's ``model_kwargs``.
    """
    from privrepro.continual.benchmarks import ImagePart, image_parts
    from privrepro.continual.features import backbone_transform, create_backbone
    from privrepro.continual.pixels import (
        HostImages,
        cached_pixels,
        pixel_cache_path,
        split_transform,
    )
    from privrepro.data.provenance import DataChangedError

    if benchmark not in FILM_BENCHMARKS:
        raise ConfigError("benchmark", benchmark, f"must be one of {list(FILM_BENCHMARKS)}")
    ws = workspace or Workspace()
    fs = feature_spec(features) if spec is None else spec
    # the data first: a missing file is reported before the backbone is loaded
    parts = {
        split: [(p, p.load()) for p in plist]
        for split, plist in image_parts(benchmark, fs, Path(ws.data_dir)).items()
    }
    labels = {
        split: np.concatenate([np.asarray(ds.y, dtype=np.int64) + p.label_offset for p, ds in got])
        for split, got in parts.items()
    }
    model = create_backbone(fs.backbone, fs.weights, pretrained=True, **fs.model_kwargs)
    pt = split_transform(backbone_transform(model))
    k_tr, k_te = subsample_pair(labels["train"], labels["test"], features)

    def pixels(part: ImagePart, ds: Any, split: str) -> np.ndarray:
        # keyed by the data's fingerprint too: a dataset folder edited since is converted again
        before = part.fingerprint() if part.fingerprint is not None else None
        key = (
            pt.key
            if before is None
            else f"{pt.key}-{hashlib.sha256(before.encode()).hexdigest()[:12]}"
        )
        path = pixel_cache_path(ws.cache_dir, fs.backbone, key, part.dataset, split)
        new = not path.is_file()
        out = cached_pixels(path, partial(getattr, ds, "x"), pt, chunk, ws.loops)
        after = part.fingerprint() if new and part.fingerprint is not None else before
        if after != before:  # edited while it was read: the file holds pixels of neither
            path.unlink(missing_ok=True)
            raise DataChangedError(
                f"{part.dataset} changed while its {split} pixels were cached (fingerprint "
                f"{str(before)[:24]} before, {str(after)[:24]} after): {path} is not kept; run "
                "again once the data stays put"
            )
        return out

    def host(split: str, rows: np.ndarray) -> HostImages:
        arrays = [pixels(p, ds, split) for p, ds in parts[split]]
        return HostImages(arrays, pt.mean, pt.std, ws.device, rows=rows)

    train_x, test_x = host("train", k_tr), host("test", k_te)
    parts.clear()  # the raw images: the pixel caches hold what the runs read
    return PeftData(
        train_x,
        labels["train"][k_tr],
        test_x,
        labels["test"][k_te],
        NUM_CLASSES[benchmark],
        {
            "feature_source": "images",
            "backbone": fs.backbone,
            "weights": fs.weights or "timm hub",
            "n_train": len(k_tr),
            "n_test": len(k_te),
            "pixel_cache": pt.key,
        },
        model.to(ws.device),
    )
