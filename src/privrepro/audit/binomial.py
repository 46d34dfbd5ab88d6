"""Exact (Clopper–Pearson) one-sided confidence bounds for a binomial proportion."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

__all__ = ["clopper_pearson_lower", "clopper_pearson_upper"]


def clopper_pearson_lower(k: ArrayLike, n: ArrayLike, alpha: float) -> NDArray[np.float64]:
    """p_L with Pr[p < p_L] ≤ α for k successes in n trials: the α-quantile of Beta(k, n−k+1)
    (Clopper & Pearson 1934); 0 when k = 0. Vectorised over k and n."""
    kk = np.asarray(k, dtype=float)
    nn = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        out = special.betaincinv(np.maximum(kk, 1e-300), nn - kk + 1.0, alpha)
    return np.asarray(np.where(kk <= 0, 0.0, out), dtype=float)


def clopper_pearson_upper(k: ArrayLike, n: ArrayLike, alpha: float) -> NDArray[np.float64]:
    """p_U with Pr[p > p_U] ≤ α: the (1−α)-quantile of Beta(k+1, n−k); 1 when k = n."""
    kk = np.asarray(k, dtype=float)
    nn = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        out = special.betaincinv(kk + 1.0, np.maximum(nn - kk, 1e-300), 1.0 - alpha)
    return np.asarray(np.where(kk >= nn, 1.0, out), dtype=float)
