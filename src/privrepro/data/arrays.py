"""An in-memory labelled dataset: what every loader of :mod:`privrepro.data` returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ArrayDataset"]


@dataclass(frozen=True)
class ArrayDataset:
    """Images (or features) and integer labels as numpy arrays.

    Attributes:
        x: the inputs, ``[N, ...]``; images are ``uint8`` in the dataset's own layout
            (``[N, 28, 28]`` for MNIST, ``[N, 32, 32, 3]`` for CIFAR) or ``float32`` in [0, 1].
        y: the labels, ``int64`` ``[N]``.
        classes: the class names, indexed by label.
        name: the dataset's registry name, and its split.
        meta: anything else worth recording (source file paths, checksums verified or not).
    """

    x: np.ndarray
    y: np.ndarray
    classes: list[str]
    name: str
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y):
            raise ValueError(f"{self.name}: {len(self.x)} inputs but {len(self.y)} labels")

    def __len__(self) -> int:
        return len(self.y)

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def subset(self, index: np.ndarray) -> ArrayDataset:
        """The rows at ``index`` (an integer array or boolean mask)."""
        return ArrayDataset(self.x[index], self.y[index], self.classes, self.name, dict(self.meta))

    def as_float_images(self) -> np.ndarray:
        """Inputs as ``float32`` ``[N, C, H, W]`` in [0, 1] (channels first, as torch expects)."""
        x = self.x.astype(np.float32)
        if self.x.dtype == np.uint8:
            x = x / 255.0
        if x.ndim == 3:
            x = x[:, None]
        elif x.ndim == 4 and x.shape[-1] in (1, 3) and x.shape[1] not in (1, 3):
            x = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
        return x
