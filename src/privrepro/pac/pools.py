"""Data pools for the pac Examples: flattened inputs in [0, 1] with labels, from the registry.

Examples 2 and 3 use all 60,000 CIFAR-10 images (train + test), Example 4 all 70,000 MNIST
images (train + test); a pool ``U`` is those images flattened to vectors in [0, 1]^d.
The ``smoke`` stand-ins are scikit-learn's digits (1,797 × 64) and seeded synthetic images.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = ["Pool", "load_pool"]

_SPLITS = {"all": ("train", "test"), "train": ("train",), "test": ("test",)}


@dataclass(frozen=True)
class Pool:
    """A pool of ``N`` flattened inputs ``x [N, d]`` (float32 in [0, 1]) and labels ``y [N]``."""

    x: NDArray[np.float32]
    y: NDArray[np.int64]
    name: str

    @property
    def size(self) -> int:
        return int(self.x.shape[0])

    @property
    def dim(self) -> int:
        return int(self.x.shape[1])


def load_pool(
    name: str,
    root: str | Path | None,
    splits: str = "all",
    seed: int = 0,
    synthetic_size: int = 2000,
    synthetic_shape: tuple[int, int, int] = (3, 8, 8),
) -> Pool:
    """Load the pool ``name`` (a registry dataset) with ``splits`` in ``all``/``train``/``test``.

    ``digits`` has its own ``all`` split; ``synthetic_images`` is generated from ``seed`` with
    ``synthetic_size`` images of ``synthetic_shape``.
    """
    from privrepro.config.validation import ConfigError
    from privrepro.data.registry import load_dataset

    if splits not in _SPLITS:
        raise ConfigError("params.splits", splits, f"must be one of {sorted(_SPLITS)}")
    parts = []
    if name == "digits":
        parts.append(load_dataset("digits", root, split=splits))
    elif name == "synthetic_images":
        parts += [
            load_dataset(
                "synthetic_images",
                root,
                n=synthetic_size,
                shape=synthetic_shape,
                seed=seed,
                split=s,
            )
            for s in _SPLITS[splits]
        ]
    else:
        parts += [load_dataset(name, root, split=s, download=False) for s in _SPLITS[splits]]
    xs = [p.as_float_images().reshape(len(p), -1) for p in parts]
    x = np.ascontiguousarray(np.concatenate(xs), dtype=np.float32)
    y = np.concatenate([p.y for p in parts]).astype(np.int64)
    return Pool(x, y, f"{name}/{splits}")
