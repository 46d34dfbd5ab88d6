"""The cl benchmarks as feature arrays plus their scenarios: one entry point for every recipe.

:func:`load_benchmark` returns a :class:`~privrepro.continual.scenarios.ContinualData` of
features for ``cifar100``, ``imagenet-r`` or ``5-datasets`` from one of three sources:

* ``"backbone"`` — the real images through the frozen backbone, cached on disk
  (:mod:`privrepro.continual.features`); what ``profile=paper`` uses.
* ``"synthetic"`` — clustered features of the benchmark's shape (:mod:`.synthetic`); smoke/tests.
* ``"tiny-vit"`` — seeded synthetic images through a small random-weight timm ViT and the same
  feature cache: proves the extraction path without data or weights (smoke).

:func:`make_scenario` builds the benchmark's class-incremental split (class order from ``rng``;
5-Datasets members in a given order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import numpy as np

from privrepro.continual.features import (
    DEFAULT_BACKBONE,
    cached_features,
    create_backbone,
    extract_features,
)
from privrepro.continual.scenarios import (
    FIVE_DATASETS,
    ContinualData,
    Scenario,
    five_datasets,
    split_cifar100,
    split_imagenet_r,
)
from privrepro.continual.synthetic import synthetic_benchmark

__all__ = [
    "BENCHMARKS",
    "FEATURE_SOURCES",
    "TINY_VIT",
    "FeatureSpec",
    "load_benchmark",
    "make_scenario",
]

BENCHMARKS = ("cifar100", "imagenet-r", "5-datasets")
FEATURE_SOURCES = ("backbone", "synthetic", "tiny-vit")
_SYNTHETIC_KIND = {"cifar100": "cifar", "imagenet-r": "imagenet-r", "5-datasets": "5-datasets"}
_NUM_CLASSES = {"cifar100": 100, "imagenet-r": 200, "5-datasets": 50}

#: the small random ViT of the ``tiny-vit`` source (timm id and overrides).
TINY_VIT: dict[str, Any] = {"name": "vit_tiny_patch16_224", "img_size": 32, "patch_size": 8,
                            "depth": 2}


@dataclass(frozen=True)
class FeatureSpec:
    """Where a benchmark's features come from (the figures' ``features`` parameters)."""

    source: str = "synthetic"
    backbone: str = DEFAULT_BACKBONE
    weights: str | None = None
    download: bool = False
    verify_checksums: bool = True
    batch_size: int = 64
    imagenet_r_split_seed: int = 0
    synthetic_dim: int = 768
    synthetic_seed: int = 0
    tiny_per_class: int = 4
    model_kwargs: dict[str, Any] = field(default_factory=dict)


def _backbone_features(benchmark: str, spec: FeatureSpec, data_dir: Path, cache_dir: Path,
                       device: str, progress: Callable[..., Iterable[Any]] | None
                       ) -> tuple[ContinualData, dict[str, Any]]:
    from privrepro.continual.sources import imagenet_r_split, load_five_datasets_member

    model_box: list[Any] = []

    def model() -> Any:
        if not model_box:
            model_box.append(create_backbone(spec.backbone, spec.weights, pretrained=True,
                                             **spec.model_kwargs))
        return model_box[0]

    def feats(dataset: str, split: str, load: Callable[[], Any]) -> tuple[np.ndarray, np.ndarray,
                                                                          dict[str, Any]]:
        def compute() -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
            ds = load()
            x = extract_features(model(), ds.x, spec.batch_size, device, progress=progress)
            return x, ds.y, {"weights": spec.weights or "timm hub", "n": len(ds.y)}

        return cached_features(cache_dir, spec.backbone, dataset, split, compute)

    metas: dict[str, Any] = {}
    if benchmark == "cifar100":
        from privrepro.data.vision import load_cifar100

        parts = {s: feats("cifar100", s, partial(load_cifar100, data_dir, s,
                                                 download=spec.download,
                                                 verify_checksums=spec.verify_checksums))
                 for s in ("train", "test")}
    elif benchmark == "imagenet-r":
        split_seed = spec.imagenet_r_split_seed
        box: list[Any] = []

        def split(i: int) -> Any:
            if not box:
                box.extend(imagenet_r_split(data_dir, np.random.default_rng(split_seed)))
            return box[i]

        parts = {s: feats(f"imagenet-r-split{split_seed}", s, partial(split, i))
                 for i, s in enumerate(("train", "test"))}
    elif benchmark == "5-datasets":
        parts = {}
        for s in ("train", "test"):
            xs, ys = [], []
            for m, member in enumerate(FIVE_DATASETS):
                x, y, meta = feats(member, s, partial(load_five_datasets_member, member, data_dir,
                                                      s, 0, spec.download,
                                                      spec.verify_checksums))
                xs.append(x)
                ys.append(y + 10 * m)
                metas[f"{member}/{s}"] = meta
            parts[s] = (np.concatenate(xs), np.concatenate(ys), {"members": list(FIVE_DATASETS)})
    else:
        raise ValueError(f"benchmark = {benchmark!r}: must be one of {list(BENCHMARKS)}")
    for s, (_, _, meta) in parts.items():
        metas.setdefault(s, meta)
    data = ContinualData(benchmark, parts["train"][0], parts["train"][1], parts["test"][0],
                         parts["test"][1], _NUM_CLASSES[benchmark])
    return data, {"feature_source": "backbone", "backbone": spec.backbone,
                  "weights": spec.weights or "timm hub", "cache": metas}


def _tiny_vit_features(benchmark: str, spec: FeatureSpec, cache_dir: Path, device: str
                       ) -> tuple[ContinualData, dict[str, Any]]:
    from privrepro.data.synthetic import synthetic_images

    c = _NUM_CLASSES[benchmark]
    name = str(TINY_VIT["name"])
    key = f"{name}-random-{TINY_VIT['img_size']}px"
    model_box: list[Any] = []

    def compute(split: str) -> Callable[[], tuple[np.ndarray, np.ndarray, dict[str, Any]]]:
        def run() -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
            import torch

            if not model_box:
                torch.manual_seed(spec.synthetic_seed)  # timm's init draws from torch's default
                kw = {k: v for k, v in TINY_VIT.items() if k != "name"}
                model_box.append(create_backbone(name, pretrained=False, **kw))
            n = c * spec.tiny_per_class
            ds = synthetic_images(None, n=n, num_classes=c, shape=(3, 32, 32),
                                  seed=spec.synthetic_seed, split=split)
            x = extract_features(model_box[0], ds.x, spec.batch_size, device)
            return x, ds.y, {"weights": "random", "images": "synthetic_images", "n": n}
        return run

    parts = {s: cached_features(cache_dir, key, f"synthetic-{benchmark}-s{spec.synthetic_seed}"
                                f"-n{spec.tiny_per_class}", s, compute(s))
             for s in ("train", "test")}
    data = ContinualData(f"tiny-vit-{benchmark}", parts["train"][0], parts["train"][1],
                         parts["test"][0], parts["test"][1], c)
    return data, {"feature_source": "tiny-vit", "backbone": key, "weights": "random",
                  "cache": {s: p[2] for s, p in parts.items()}}


@lru_cache(maxsize=2)
def _synthetic(benchmark: str, seed: int, dim: int) -> ContinualData:
    return synthetic_benchmark(_SYNTHETIC_KIND[benchmark], np.random.default_rng(seed), dim=dim)


def load_benchmark(benchmark: str, spec: FeatureSpec, data_dir: str | Path = "data",
                   cache_dir: str | Path = "experiments/_cache", device: str = "cpu",
                   progress: Callable[..., Iterable[Any]] | None = None
                   ) -> tuple[ContinualData, dict[str, Any]]:
    """The benchmark's features and a provenance dict (source, backbone, weights, cache files).

    Synthetic features depend only on ``spec.synthetic_seed`` (one fixed "pre-trained feature
    space" shared by all seeds of a figure, as real cached features are); they are memoised in
    the process, since every unit of a figure reads the same arrays.
    """
    if benchmark not in BENCHMARKS:
        raise ValueError(f"benchmark = {benchmark!r}: must be one of {list(BENCHMARKS)}")
    if spec.source == "synthetic":
        data = _synthetic(benchmark, spec.synthetic_seed, spec.synthetic_dim)
        return data, {"feature_source": "synthetic", "backbone": "none (synthetic clusters)",
                      "synthetic_seed": spec.synthetic_seed, "dim": spec.synthetic_dim}
    if spec.source == "tiny-vit":
        return _tiny_vit_features(benchmark, spec, Path(cache_dir), device)
    if spec.source == "backbone":
        return _backbone_features(benchmark, spec, Path(data_dir), Path(cache_dir), device,
                                  progress)
    raise ValueError(f"features.source = {spec.source!r}: must be one of {list(FEATURE_SOURCES)}")


def make_scenario(benchmark: str, data: ContinualData, rng: np.random.Generator | None,
                  order: Sequence[int] | None = None) -> Scenario:
    """The benchmark's class-incremental split: Split-CIFAR-100 (10 × 10) and Split-ImageNet-R
    (10 × 20) with the class order drawn from ``rng``; 5-Datasets with its members in ``order``."""
    if benchmark == "cifar100":
        return split_cifar100(data, rng)
    if benchmark == "imagenet-r":
        return split_imagenet_r(data, rng)
    if benchmark == "5-datasets":
        return five_datasets(data, order)
    raise ValueError(f"benchmark = {benchmark!r}: must be one of {list(BENCHMARKS)}")
