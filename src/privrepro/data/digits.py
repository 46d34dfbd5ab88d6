"""scikit-learn's bundled handwritten digits (8×8, 1,797 images): real data that ships with the code.

The UCI "Optical Recognition of Handwritten Digits" test set as bundled by scikit-learn (pixel
values 0–16). The train/test split is part of the dataset's definition here: a stratified split
with a fixed seed, so every run and every user gets the same one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from privrepro.config.validation import ConfigError
from privrepro.data.arrays import ArrayDataset
from privrepro.data.registry import register_dataset
from privrepro.seeding import python_random_kept

__all__ = ["load_digits"]

_SPLIT_SEED = 20240101  # fixed: the split belongs to the dataset, not to a run
_TEST_FRACTION = 0.25


@register_dataset(
    "digits",
    description="scikit-learn digits, 8×8 grey, 10 classes (embedded)",
    source="sklearn.datasets.load_digits (UCI optdigits test set)",
)
def load_digits(
    root: Path | None = None, split: str = "train", download: bool = False
) -> ArrayDataset:
    """The digits as float32 ``[N, 8, 8]`` in [0, 1]; ``split`` is train, test or all."""
    with python_random_kept():  # scikit-learn imports rich, which draws from Python's random
        from sklearn.datasets import load_digits as sk_load_digits

    if split not in ("train", "test", "all"):
        raise ConfigError("dataset.split", split, "must be one of ['train', 'test', 'all']")
    bunch = sk_load_digits()
    x = (bunch.images / 16.0).astype(np.float32)
    y = bunch.target.astype(np.int64)
    if split != "all":
        rng = np.random.default_rng(_SPLIT_SEED)
        test = np.zeros(len(y), dtype=bool)
        for c in np.unique(y):
            idx = np.flatnonzero(y == c)
            test[rng.choice(idx, size=round(len(idx) * _TEST_FRACTION), replace=False)] = True
        keep = test if split == "test" else ~test
        x, y = x[keep], y[keep]
    return ArrayDataset(
        x,
        y,
        [str(i) for i in range(10)],
        f"digits/{split}",
        {"source": "sklearn.datasets.load_digits"},
    )
