"""Image data for the ip experiments as float tensors in [0, 1], N×C×H×W, with a validation split.

Datasets come from the project's registry (:func:`privrepro.data.registry.load_dataset`), with
their own train/test splits: ``cifar10``/``cifar100`` (the paper), ``digits`` (scikit-learn's
bundled 8×8 digits, ``smoke``) and ``synthetic_images``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

__all__ = ["ImageData", "load_image_data"]


@dataclass
class ImageData:
    """Train / validation / test images in [0, 1] and labels, with the train-set channel stats."""

    name: str
    x_train: Tensor
    y_train: Tensor
    x_val: Tensor
    y_val: Tensor
    x_test: Tensor
    y_test: Tensor
    num_classes: int
    mean: tuple[float, ...]
    std: tuple[float, ...]

    @property
    def shape(self) -> tuple[int, int, int]:
        """(channels, height, width) of one image."""
        c, h, w = self.x_train.shape[1:]
        return int(c), int(h), int(w)


# Channel statistics the ip notebooks use for ResNet-18 (timm/detectors pretrained configs).
CIFAR_STATS = {
    "cifar10": ((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
    "cifar100": ((0.5071, 0.4867, 0.4408), (0.2675, 0.2565, 0.2761)),
}


def _to_images(x: Any) -> Tensor:
    """uint8 / float arrays (N, H, W, C), (N, C, H, W) or (N, H, W) → float32 N×C×H×W in [0, 1]."""
    arr = x.numpy() if isinstance(x, Tensor) else np.asarray(x)
    if arr.ndim == 3:
        arr = arr[:, None]
    elif arr.ndim == 4 and arr.shape[-1] in (1, 3) and arr.shape[1] not in (1, 3):
        arr = arr.transpose(0, 3, 1, 2)
    if arr.dtype == np.uint8:
        arr = arr.astype(np.float32) / 255.0
    arr = arr.astype(np.float32)
    if arr.max(initial=0.0) > 1.0 + 1e-6:
        raise ValueError(f"images must lie in [0, 1] or be uint8; max is {arr.max()}")
    return torch.from_numpy(np.ascontiguousarray(arr))


def _load(name: str, root: Path | None, split: str, download: bool) -> tuple[Tensor, Tensor]:
    """One split of a registered dataset as float images in [0, 1] and long labels."""
    from privrepro.data.registry import load_dataset

    ds = load_dataset(name, root, split=split, download=download)
    return _to_images(ds.x), torch.as_tensor(np.asarray(ds.y), dtype=torch.long)


def load_image_data(
    name: str,
    root: str | Path | None,
    rng: np.random.Generator,
    val_fraction: float = 0.2,
    max_train: int | None = None,
    max_test: int | None = None,
    download: bool = False,
) -> ImageData:
    """Load ``name`` and split off a validation set from the training data with ``rng``.

    ``max_train``/``max_test`` subsample (seeded) for reduced profiles.
    """
    root_path = Path(root) if root is not None else None
    x_tr, y_tr = _load(name, root_path, "train", download)
    x_te, y_te = _load(name, root_path, "test", download)
    perm = torch.from_numpy(rng.permutation(len(x_tr)))
    n_val = round(val_fraction * len(x_tr))
    x_val, y_val = x_tr[perm[:n_val]], y_tr[perm[:n_val]]
    x_tr, y_tr = x_tr[perm[n_val:]], y_tr[perm[n_val:]]
    if max_train is not None and len(x_tr) > max_train:
        x_tr, y_tr = x_tr[:max_train], y_tr[:max_train]
    if max_test is not None and len(x_te) > max_test:
        keep = torch.from_numpy(rng.permutation(len(x_te))[:max_test])
        x_te, y_te = x_te[keep], y_te[keep]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    if name in CIFAR_STATS:
        mean, std = CIFAR_STATS[name]
    else:
        mean = tuple(float(v) for v in x_tr.mean((0, 2, 3)))
        std = tuple(float(v) for v in x_tr.std((0, 2, 3)))
    num_classes = int(max(int(y_tr.max()), int(y_te.max())) + 1)
    return ImageData(name, x_tr, y_tr, x_val, y_val, x_te, y_te, num_classes, mean, std)
