"""Shared label arrays of the cl benchmarks' shapes (labels only: cheap)."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture(scope="session")
def cifar_labels() -> tuple[np.ndarray, np.ndarray]:
    """CIFAR-100's label layout: 500 train and 100 test samples per class, shuffled."""
    rng = np.random.default_rng(123)
    return (rng.permutation(np.repeat(np.arange(100), 500)),
            rng.permutation(np.repeat(np.arange(100), 100)))
