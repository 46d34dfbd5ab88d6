"""The cl benchmarks as feature arrays plus their scenarios: one entry point for every recipe.

:func:`load_benchmark` returns a :class:`~privrepro.continual.scenarios.ContinualData` of
features for ``cifar100``, ``imagenet-r`` or ``5-datasets`` from one of three sources (more in
``docs/modules.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from privrepro.config import ConfigError, param
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
from privrepro.continual.synthetic_features import synthetic_benchmark
from privrepro.loops import PLAIN, Loops
from privrepro.training.precision import PRECISIONS

__all__ = [
    "BENCHMARKS",
    "BENCHMARK_CLASSES",
    "BENCHMARK_NAMES",
    "FEATURE_SOURCES",
    "TINY_VIT",
    "FeatureSource",
    "FeatureSpec",
    "ImagePart",
    "benchmark_images",
    "features_cache_key",
    "image_parts",
    "load_benchmark",
    "make_scenario",
]

BENCHMARKS = ("cifar100", "imagenet-r", "5-datasets")
#: the benchmarks' names in the cl paper
BENCHMARK_NAMES = {
    "cifar100": "Split-CIFAR-100",
    "imagenet-r": "Split-ImageNet-R",
    "5-datasets": "5-Datasets",
}
FEATURE_SOURCES = ("backbone", "synthetic", "tiny-vit")
_SYNTHETIC_KIND = {"cifar100": "cifar", "imagenet-r": "imagenet-r", "5-datasets": "5-datasets"}
#: the size of each benchmark's base label set
BENCHMARK_CLASSES = {"cifar100": 100, "imagenet-r": 200, "5-datasets": 50}

#: the small random ViT of the ``tiny-vit`` source (timm id and overrides).
TINY_VIT: dict[str, Any] = {
    "name": "vit_tiny_patch16_224",
    "img_size": 32,
    "patch_size": 8,
    "depth": 2,
}


@dataclass(frozen=True)
class FeatureSource:
    """Where a benchmark's features come from (the cosine figures' ``features`` parameters):
    real images through the frozen backbone (``profile=paper``), or a stand-in."""

    source: str = param(
        "synthetic",
        choices=FEATURE_SOURCES,
        doc="backbone (real images, cached ViT features), synthetic (clustered "
        "stand-in features) or tiny-vit (random small ViT on generated images)",
    )
    backbone: str = param(
        DEFAULT_BACKBONE,
        doc="timm id of the frozen backbone",
        assumed="the paper names the google-research ViT-B/16 in21k weights, "
        "not a timm id; augreg_in21k (orig_in21k is the alternative)",
    )
    weights: str | None = param(None, doc="local weights file of the backbone (None: timm hub)")
    download: bool = param(False, doc="let torchvision download missing datasets")
    verify_checksums: bool = param(True, doc="check torchvision's MD5 of dataset files")
    batch_size: int = param(64, ge=1, doc="feature-extraction batch size")
    imagenet_r_split_seed: int = param(
        0,
        ge=0,
        doc="seed of ImageNet-R's 80/20 split",
        assumed="one global random 80/20 split; the paper does "
        "not say whether it is redrawn per seed",
    )
    synthetic_seed: int = param(0, ge=0, doc="seed of the synthetic feature space")
    synthetic_dim: int = param(768, ge=2, doc="dimension of synthetic features (ViT-B: 768)")
    tiny_per_class: int = param(4, ge=1, doc="images per class for the tiny-vit source")
    precision: str = param(
        "fp32",
        choices=list(PRECISIONS),
        doc="the backbone's arithmetic extracting features: fp32, tf32 or bf16 autocast "
        "(privrepro.training.precision); each precision has its own cache files",
    )

    #: fields added after units were stored, omitted from an identity at this value
    IDENTITY_DEFAULTS: ClassVar[dict[str, Any]] = {"precision": "fp32"}

    @property
    def cache_backbone(self) -> str:
        """The backbone's name in feature-cache file names: with ``-<precision>`` unless fp32."""
        return self.backbone if self.precision == "fp32" else f"{self.backbone}-{self.precision}"


@dataclass(frozen=True)
class FeatureSpec(FeatureSource):
    """A :class:`FeatureSource` with keyword arguments for the backbone's constructor
    (``timm.create_model``; e.g. a small test ViT's image and patch size)."""

    model_kwargs: dict[str, Any] = field(default_factory=dict)


def features_cache_key(dataset: str, features: Mapping[str, Any]) -> tuple[Any, ...]:
    """What names the cached backbone features of ``dataset`` (``<cache_dir>/cl/features/``,
    one file per backbone, dataset and split) under the feature settings ``features`` (a
    :class:`FeatureSpec`'s fields): every run reading the same files has the same key — the
    cosine figures' units and the PEFT head runs of a benchmark alike."""
    import json

    split_seed = features.get("imagenet_r_split_seed") if dataset == "imagenet-r" else None
    model_kwargs = json.dumps(features.get("model_kwargs", {}), sort_keys=True, default=str)
    source = (features["source"], features["backbone"], features.get("weights"), model_kwargs)
    key = ("cl-features", dataset, *source, split_seed, features.get("synthetic_seed"))
    precision = features.get("precision", "fp32")  # its own cache files, unless fp32
    return key if precision == "fp32" else (*key, precision)


@dataclass(frozen=True)
class ImagePart:
    """One source of a benchmark split's images: ``dataset`` names it (the feature-cache key),
    ``label_offset`` is added to its labels, ``load`` reads it (an ``ArrayDataset``),
    ``fingerprint`` identifies the files ``load`` reads
    (:func:`~privrepro.data.provenance.data_fingerprint`; ``None``: not known)."""

    dataset: str
    label_offset: int
    load: Callable[[], Any]
    fingerprint: Callable[[], str | None] | None = None


def image_parts(benchmark: str, spec: FeatureSpec, data_dir: Path) -> dict[str, list[ImagePart]]:
    """The raw image sources of ``benchmark`` per split (``"train"``, ``"test"``), lazily loaded.

    * ``cifar100``: the CIFAR-100 train / test sets.
    * ``imagenet-r``: the image folder, split 80/20 per class with ``spec.imagenet_r_split_seed``
      (cl paper, App. F: "a random 80/20 split"; drawn once, shared by both splits).
    * ``5-datasets``: the members in :data:`FIVE_DATASETS` order, member ``m``'s labels shifted to
      ``10 m … 10 m + 9`` (50 labels, cl paper, Sec. 6).

    Both the cached-feature path and the FiLM image path read the benchmarks through this, so
    they see the same images, labels and split.
    """
    from privrepro.continual.sources import imagenet_r_split, load_five_datasets_member
    from privrepro.data.provenance import data_fingerprint

    data_dir = Path(data_dir)

    def identify(dataset: str) -> Callable[[], str | None]:
        return partial(data_fingerprint, data_dir, dataset, spec.verify_checksums)

    if benchmark == "cifar100":
        from privrepro.data.vision import load_cifar100

        return {
            s: [
                ImagePart(
                    "cifar100",
                    0,
                    partial(
                        load_cifar100,
                        data_dir,
                        s,
                        download=spec.download,
                        verify_checksums=spec.verify_checksums,
                    ),
                    identify("cifar100"),
                )
            ]
            for s in ("train", "test")
        }
    if benchmark == "imagenet-r":
        split_seed = spec.imagenet_r_split_seed
        box: list[Any] = []

        def split(i: int) -> Any:
            if not box:
                box.extend(imagenet_r_split(data_dir, np.random.default_rng(split_seed)))
            return box[i]

        return {
            s: [
                ImagePart(
                    f"imagenet-r-split{split_seed}", 0, partial(split, i), identify("imagenet-r")
                )
            ]
            for i, s in enumerate(("train", "test"))
        }
    if benchmark == "5-datasets":
        return {
            s: [
                ImagePart(
                    member,
                    10 * m,
                    partial(
                        load_five_datasets_member,
                        member,
                        data_dir,
                        s,
                        0,
                        spec.download,
                        spec.verify_checksums,
                    ),
                    identify(member),
                )
                for m, member in enumerate(FIVE_DATASETS)
            ]
            for s in ("train", "test")
        }
    raise ConfigError("benchmark", benchmark, f"must be one of {list(BENCHMARKS)}")


def benchmark_images(
    benchmark: str, spec: FeatureSpec, data_dir: str | Path, split: str
) -> tuple[np.ndarray, np.ndarray]:
    """The images of one split of ``benchmark`` and their labels in the benchmark's label space.

    Returns an object array of images (``uint8`` arrays, grey or colour, or file paths for image
    folders; :func:`privrepro.continual.features.extract_features` and the FiLM path convert each
    to RGB) and ``int64`` labels, in the order of :func:`load_benchmark`'s features.
    """
    xs: list[Any] = []
    ys: list[np.ndarray] = []
    for part in image_parts(benchmark, spec, Path(data_dir))[split]:
        ds = part.load()
        xs.extend(ds.x[i] for i in range(len(ds.y)))
        ys.append(np.asarray(ds.y, dtype=np.int64) + part.label_offset)
    x = np.empty(len(xs), dtype=object)
    for i, im in enumerate(xs):  # element-wise: numpy would broadcast equal-shaped arrays
        x[i] = im
    return x, (np.concatenate(ys) if ys else np.zeros(0, np.int64))


def _backbone_features(
    benchmark: str,
    spec: FeatureSpec,
    data_dir: Path,
    cache_dir: Path,
    device: str,
    loops: Loops,
) -> tuple[ContinualData, dict[str, Any]]:
    model_box: list[Any] = []

    def model() -> Any:
        if not model_box:
            model_box.append(
                create_backbone(spec.backbone, spec.weights, pretrained=True, **spec.model_kwargs)
            )
        return model_box[0]

    # what the cached features depend on beyond the file's name (checked on every cache hit)
    expect = {
        "weights": spec.weights or "timm hub",
        "model_kwargs": dict(spec.model_kwargs),
        "precision": spec.precision,
    }

    def feats(part: ImagePart, split: str) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        def compute() -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
            ds = part.load()
            x = extract_features(
                model(), ds.x, spec.batch_size, device, loops=loops, precision=spec.precision
            )
            return x, ds.y, {**expect, "n": len(ds.y)}

        key = spec.cache_backbone
        x, y, meta = cached_features(
            cache_dir, key, part.dataset, split, compute, expect, part.fingerprint
        )
        return x, np.asarray(y) + part.label_offset, meta

    metas: dict[str, Any] = {}
    parts: dict[str, tuple[np.ndarray, np.ndarray, dict[str, Any]]] = {}
    for s, plist in image_parts(benchmark, spec, data_dir).items():
        got = [feats(p, s) for p in plist]
        if len(got) == 1:
            parts[s] = got[0]
        else:
            for p, (_, _, meta) in zip(plist, got, strict=True):
                metas[f"{p.dataset}/{s}"] = meta
            parts[s] = (
                np.concatenate([g[0] for g in got]),
                np.concatenate([g[1] for g in got]),
                {"members": [p.dataset for p in plist]},
            )
    for s, (_, _, meta) in parts.items():
        metas.setdefault(s, meta)
    data = ContinualData(
        benchmark,
        parts["train"][0],
        parts["train"][1],
        parts["test"][0],
        parts["test"][1],
        BENCHMARK_CLASSES[benchmark],
    )
    return data, {
        "feature_source": "backbone",
        "backbone": spec.backbone,
        "weights": spec.weights or "timm hub",
        "cache": metas,
    }


def _tiny_vit_features(
    benchmark: str, spec: FeatureSpec, cache_dir: Path, device: str
) -> tuple[ContinualData, dict[str, Any]]:
    from privrepro.data.synthetic import synthetic_images

    c = BENCHMARK_CLASSES[benchmark]
    name = str(TINY_VIT["name"])
    key = f"{name}-random-{TINY_VIT['img_size']}px"
    if spec.precision != "fp32":
        key = f"{key}-{spec.precision}"
    model_box: list[Any] = []

    def compute(split: str) -> Callable[[], tuple[np.ndarray, np.ndarray, dict[str, Any]]]:
        def run() -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
            import torch

            if not model_box:
                torch.manual_seed(spec.synthetic_seed)  # timm's init draws from torch's default
                kw = {k: v for k, v in TINY_VIT.items() if k != "name"}
                model_box.append(create_backbone(name, pretrained=False, **kw))
            n = c * spec.tiny_per_class
            ds = synthetic_images(
                None, n=n, num_classes=c, shape=(3, 32, 32), seed=spec.synthetic_seed, split=split
            )
            x = extract_features(
                model_box[0], ds.x, spec.batch_size, device, precision=spec.precision
            )
            return x, ds.y, {"weights": "random", "images": "synthetic_images", "n": n}

        return run

    parts = {
        s: cached_features(
            cache_dir,
            key,
            f"synthetic-{benchmark}-s{spec.synthetic_seed}-n{spec.tiny_per_class}",
            s,
            compute(s),
        )
        for s in ("train", "test")
    }
    data = ContinualData(
        f"tiny-vit-{benchmark}",
        parts["train"][0],
        parts["train"][1],
        parts["test"][0],
        parts["test"][1],
        c,
    )
    return data, {
        "feature_source": "tiny-vit",
        "backbone": key,
        "weights": "random",
        "cache": {s: p[2] for s, p in parts.items()},
    }


@lru_cache(maxsize=2)
def _synthetic(benchmark: str, seed: int, dim: int) -> ContinualData:
    return synthetic_benchmark(_SYNTHETIC_KIND[benchmark], np.random.default_rng(seed), dim=dim)


def load_benchmark(
    benchmark: str,
    spec: FeatureSpec,
    data_dir: str | Path = "data",
    cache_dir: str | Path = "experiments/_cache",
    device: str = "cpu",
    loops: Loops = PLAIN,
) -> tuple[ContinualData, dict[str, Any]]:
    """The benchmark's features and a provenance dict (source, backbone, weights, cache files).

    Synthetic features depend only on ``spec.synthetic_seed`` (one fixed "pre-trained feature
    space" shared by all seeds of a figure, as real cached features are); they are memoised in
    the process, since every unit of a figure reads the same arrays.
    """
    if benchmark not in BENCHMARKS:
        raise ConfigError("benchmark", benchmark, f"must be one of {list(BENCHMARKS)}")
    if spec.source == "synthetic":
        data = _synthetic(benchmark, spec.synthetic_seed, spec.synthetic_dim)
        return data, {
            "feature_source": "synthetic",
            "backbone": "none (synthetic clusters)",
            "synthetic_seed": spec.synthetic_seed,
            "dim": spec.synthetic_dim,
        }
    if spec.source == "tiny-vit":
        return _tiny_vit_features(benchmark, spec, Path(cache_dir), device)
    if spec.source == "backbone":
        return _backbone_features(benchmark, spec, Path(data_dir), Path(cache_dir), device, loops)
    raise ConfigError("source", spec.source, f"must be one of {list(FEATURE_SOURCES)}")


def make_scenario(
    benchmark: str,
    data: ContinualData,
    rng: np.random.Generator | None,
    order: Sequence[int] | None = None,
) -> Scenario:
    """The benchmark's class-incremental split: Split-CIFAR-100 (10 × 10) and Split-ImageNet-R
    (10 × 20) with the class order drawn from ``rng``; 5-Datasets with its members in ``order``."""
    if benchmark == "cifar100":
        return split_cifar100(data, rng)
    if benchmark == "imagenet-r":
        return split_imagenet_r(data, rng)
    if benchmark == "5-datasets":
        return five_datasets(data, order)
    raise ConfigError("benchmark", benchmark, f"must be one of {list(BENCHMARKS)}")
