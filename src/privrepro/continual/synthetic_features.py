"""Synthetic clustered features that stand in for cached ViT features in ``smoke`` and tests.

Model (K = 768, ViT-B/16's feature size, by default) (more in ``docs/modules.md``).
"""

from __future__ import annotations

import numpy as np

from privrepro.config import ConfigError
from privrepro.continual.scenarios import ContinualData

__all__ = ["SYNTHETIC_KINDS", "clustered_features", "synthetic_benchmark"]

SYNTHETIC_KINDS = ("cifar", "imagenet-r", "5-datasets")

# kind: (classes, groups, spread s, group tie h, hard fraction per group or scalar)
_SHAPES: dict[str, tuple[int, int, float, float, tuple[float, ...]]] = {
    "cifar": (100, 20, 1.7, 0.5, (0.2,)),
    "imagenet-r": (200, 40, 2.0, 0.5, (0.42,)),
    "5-datasets": (50, 5, 1.7, 0.5, (0.1, 0.55, 0.4, 0.3, 0.65)),
}


def _unit(a: np.ndarray) -> np.ndarray:
    return np.asarray(a / np.linalg.norm(a, axis=-1, keepdims=True))


def clustered_features(
    means: np.ndarray,
    counts: np.ndarray,
    spread: np.ndarray | float,
    rng: np.random.Generator,
    common: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``counts[c]`` samples around unit mean ``means[c]`` (+ ``common``), float32, unit norm,
    ordered by class."""
    k = means.shape[1]
    y = np.repeat(np.arange(len(means)), counts).astype(np.int64)
    s = np.broadcast_to(np.asarray(spread, dtype=float), (len(means),))[y]
    centre = means[y] if common is None else means[y] + common[None, :]
    x = _unit(centre + (s / np.sqrt(k))[:, None] * rng.standard_normal((len(y), k)))
    return x.astype(np.float32), y


def _sample(
    means: np.ndarray,
    group: np.ndarray,
    counts: np.ndarray,
    spread: float,
    hard: np.ndarray,
    common: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Samples labelled c, a ``hard[c]`` fraction drawn around another class of c's group."""
    y = np.repeat(np.arange(len(means)), counts).astype(np.int64)
    c = len(means)
    siblings = [np.flatnonzero((group == group[k]) & (np.arange(c) != k)) for k in range(c)]
    width = min(len(sb) for sb in siblings)
    centre_class = y.copy()
    if width > 0:  # groups are equal-sized: a (classes × siblings) table, then one draw
        table = np.stack([sb[:width] for sb in siblings])
        is_hard = rng.random(len(y)) < hard[y]
        pick = rng.integers(0, width, size=len(y))
        centre_class = np.where(is_hard, table[y, pick], y)
    k = means.shape[1]
    x = rng.standard_normal((len(y), k), dtype=np.float32)
    x *= np.float32(spread / np.sqrt(k))
    x += (means + common[None, :]).astype(np.float32)[centre_class]
    x /= np.sqrt(np.einsum("ij,ij->i", x, x))[:, None]
    return x, y


def synthetic_benchmark(
    kind: str,
    rng: np.random.Generator,
    dim: int = 768,
    train_per_class: int | None = None,
    test_per_class: int | None = None,
    spread: float | None = None,
) -> ContinualData:
    """A feature-space benchmark of the given ``kind`` (see ``docs/modules.md``).

    ``train_per_class``/``test_per_class`` override the class sizes (for ``imagenet-r``,
    ``train_per_class`` is the mean size; sizes are drawn in [0.5, 2] × it, test = 20 %).
    """
    if kind not in SYNTHETIC_KINDS:
        raise ConfigError("synthetic kind", kind, f"must be one of {list(SYNTHETIC_KINDS)}")
    c, groups, s, h, hard_g = _SHAPES[kind]
    s = s if spread is None else spread
    if dim < 2:
        raise ConfigError("dim", dim, "must be >= 2")
    for key, size in (("train_per_class", train_per_class), ("test_per_class", test_per_class)):
        if size is not None and size < 1:
            raise ConfigError(key, size, "must be >= 1")
    group = (np.arange(c) // (c // groups)) if kind == "5-datasets" else np.arange(c) % groups
    hard = np.broadcast_to(np.asarray(hard_g), (groups,))[group]
    nu = _unit(rng.standard_normal((groups, dim)))
    om = _unit(rng.standard_normal((c, dim)))
    means = _unit(nu[group] + h * om)
    common = _unit(rng.standard_normal(dim))
    if kind == "imagenet-r":
        mean_n = 120 if train_per_class is None else train_per_class
        total = rng.integers(int(0.5 * mean_n / 0.8), int(2.0 * mean_n / 0.8) + 1, size=c)
        nte = np.maximum(1, np.round(0.2 * total)).astype(np.int64)
        ntr = np.maximum(1, total - nte)
    else:
        ntr = np.full(c, 500 if train_per_class is None else train_per_class)
        nte = np.full(c, 100 if test_per_class is None else test_per_class)
    xtr, ytr = _sample(means, group, ntr, s, hard, common, rng)
    xte, yte = _sample(means, group, nte, s, hard, common, rng)
    perm = rng.permutation(len(ytr))  # sample order carries no information
    return ContinualData(f"synthetic-{kind}", xtr[perm], ytr[perm], xte, yte, c)
