"""Seeded synthetic data: class-conditional Gaussian images and feature clusters.

Both generators take a ``numpy.random.Generator`` (never a global seed), so a unit's data is a
pure function of its stream.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from privrepro.config.validation import ConfigError
from privrepro.data.arrays import ArrayDataset
from privrepro.data.registry import register_dataset

__all__ = ["gaussian_clusters", "synthetic_images"]


def gaussian_clusters(
    rng: np.random.Generator,
    n: int,
    num_classes: int,
    dim: int,
    separation: float = 3.0,
    class_weights: np.ndarray | None = None,
) -> ArrayDataset:
    """``n`` points in ``dim`` dimensions around ``num_classes`` random means.

    Means are drawn N(0, separation²/dim · I) so the typical distance between two means is
    ``separation`` times the within-class noise (unit variance per coordinate, scaled by 1/√dim).
    ``class_weights`` (summing to 1) makes the classes imbalanced.
    """
    for key, value, low in (("n", n, 1), ("num_classes", num_classes, 1), ("dim", dim, 1)):
        if value < low:
            raise ConfigError(key, value, f"must be >= {low}")
    means = rng.normal(0.0, separation / np.sqrt(dim), size=(num_classes, dim))
    p = None if class_weights is None else np.asarray(class_weights, float) / np.sum(class_weights)
    y = rng.choice(num_classes, size=n, p=p).astype(np.int64)
    x = means[y] + rng.normal(0.0, 1.0 / np.sqrt(dim), size=(n, dim))
    return ArrayDataset(
        x.astype(np.float32),
        y,
        [str(c) for c in range(num_classes)],
        "gaussian_clusters",
        {"separation": separation},
    )


@register_dataset(
    "synthetic_images", description="seeded class-conditional Gaussian images", source="generated"
)
def synthetic_images(
    root: Path | None = None,
    n: int = 1000,
    num_classes: int = 10,
    shape: tuple[int, int, int] = (3, 16, 16),
    noise: float = 0.35,
    seed: int = 0,
    split: str = "train",
    download: bool = False,
) -> ArrayDataset:
    """Images ``[N, C, H, W]`` in [0, 1]: a smooth random template per class plus pixel noise.

    ``seed`` and ``split`` pick independent streams (train and test share the templates).
    """
    if split not in ("train", "test"):
        raise ConfigError("dataset.split", split, "must be one of ['train', 'test']")
    templates_rng = np.random.default_rng([seed, 0])
    c, h, w = shape
    coarse = templates_rng.uniform(0.0, 1.0, size=(num_classes, c, max(h // 4, 1), max(w // 4, 1)))
    templates = coarse.repeat(h // coarse.shape[2] or 1, axis=2).repeat(
        w // coarse.shape[3] or 1, axis=3
    )
    templates = templates[:, :, :h, :w]
    rng = np.random.default_rng([seed, 1 if split == "train" else 2])
    y = rng.integers(0, num_classes, size=n).astype(np.int64)
    x = np.clip(templates[y] + rng.normal(0.0, noise, size=(n, c, h, w)), 0.0, 1.0)
    return ArrayDataset(
        x.astype(np.float32),
        y,
        [str(k) for k in range(num_classes)],
        f"synthetic_images/{split}",
        {"seed": seed, "noise": noise},
    )
