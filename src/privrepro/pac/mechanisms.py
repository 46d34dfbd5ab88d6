"""The mechanisms of the pac Examples 2 and 3 on a data pool, vectorised.

Example 2 (local publishing): ``M(x) = x`` for one ``x`` drawn uniformly from the pool ``U``.
Example 3 (membership from a mean): each ``u_i`` joins ``X`` independently with probability
``p`` (the paper's 1/2), ``M(X) = sum(X) / (p N)`` (an unbiased mean; the paper's
``sum(X) / 30,000``).

Each mechanism comes with its Monte-Carlo sampler (what Algorithm 1, lines 2–4, draws) and the
exact spectrum of ``Sigma_M(X)`` that the samples estimate.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from privrepro.config.validation import ConfigError
from privrepro.loops import PLAIN, Loops

__all__ = [
    "local_publishing_samples",
    "local_publishing_spectrum",
    "poisson_mean_samples",
    "poisson_mean_spectrum",
    "smooth_image_pool",
]


def _gram(x: NDArray[np.floating], loops: Loops, chunk: int = 8192) -> NDArray[np.float64]:
    """``x^T x`` in float64, accumulated over row chunks (a 60,000 x 3,072 pool in ~1.5 GB less)."""
    d = x.shape[1]
    g = np.zeros((d, d))
    for s in loops(range(0, x.shape[0], chunk), "gram chunks"):  # all, unless ``loops`` cuts it
        block = np.asarray(x[s : s + chunk], dtype=np.float64)
        g += block.T @ block
    return g


def local_publishing_samples(
    pool: NDArray[np.floating], m: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """``m`` outputs of Example 2's ``M(x) = x``, ``x`` uniform over the pool's rows."""
    return np.asarray(pool[rng.integers(0, pool.shape[0], size=m)], dtype=np.float64)


def local_publishing_spectrum(
    pool: NDArray[np.floating], loops: Loops = PLAIN
) -> NDArray[np.float64]:
    """Eigenvalues (descending) of the pool covariance (divisor N): exact ``Sigma_M`` of Ex. 2
    (``loops``: the Gram matrix's row chunks, :mod:`privrepro.loops`)."""
    n = pool.shape[0]
    mean = np.asarray(pool, dtype=np.float64).mean(axis=0)
    cov = _gram(pool, loops) / n - np.outer(mean, mean)
    return np.clip(np.linalg.eigvalsh(cov)[::-1], 0.0, None)


def poisson_mean_samples(
    pool: NDArray[np.floating],
    m: int,
    rng: np.random.Generator,
    inclusion: float = 0.5,
    chunk: int = 256,
    loops: Loops = PLAIN,
) -> NDArray[np.float64]:
    """``m`` outputs of Example 3's ``sum(X) / (p N)`` with Poisson(``p``) membership
    (``loops``: their chunks, :mod:`privrepro.loops`)."""
    n = pool.shape[0]
    x = np.asarray(pool, dtype=np.float64)
    out = []
    for s in loops(range(0, m, chunk), "sampling chunks"):  # all, unless ``loops`` cuts it
        masks = rng.random((min(chunk, m - s), n)) < inclusion
        out.append(masks.astype(np.float64) @ x / (inclusion * n))
    return np.concatenate(out)


def poisson_mean_spectrum(
    pool: NDArray[np.floating], inclusion: float = 0.5, loops: Loops = PLAIN
) -> NDArray[np.float64]:
    """Exact ``Sigma_M`` eigenvalues of Example 3: ``p(1-p) / (pN)^2 * sum_i u_i u_i^T``
    (an *uncentred* second moment: membership indicators are independent Bernoulli(p))."""
    n = pool.shape[0]
    scale = inclusion * (1.0 - inclusion) / (inclusion * n) ** 2
    return np.clip(np.linalg.eigvalsh(scale * _gram(pool, loops))[::-1], 0.0, None)


def smooth_image_pool(
    rng: np.random.Generator,
    n: int,
    side: int,
    frequencies: int = 6,
    amplitude: float = 0.15,
    pixel_noise: float = 0.02,
) -> NDArray[np.float64]:
    """``n`` grey ``side x side`` images in [0, 1], flattened: a random smooth field plus pixel noise.

    ``x = clip(0.5 + amplitude * sum_{k,l < F} z_kl / (1 + k + l) cos(pi k s) cos(pi l t)
    + pixel_noise * e, 0, 1)`` on the pixel centres ``s, t`` in (0, 1). The field does not depend
    on the resolution, so its covariance has ``~F^2`` leading eigenvalues growing like ``d``:
    ``sum_j sqrt(lambda_j)`` grows like ``sqrt(d)`` (plus ``d * pixel_noise`` from the noise),
    against the ``Theta(d)`` of local DP — the contrast drawn by ``curves_dimension``.
    """
    for key, value, low in (("n", n, 2), ("side", side, 1), ("frequencies", frequencies, 1)):
        if value < low:
            raise ConfigError(key, value, f"must lie in [{low}, inf)")
    t = (np.arange(side) + 0.5) / side
    k = np.arange(frequencies)
    basis = np.cos(np.pi * k[:, None] * t[None, :])  # [F, side]
    weights = 1.0 / (1.0 + k[:, None] + k[None, :])  # [F, F]
    z = rng.standard_normal((n, frequencies, frequencies)) * weights
    field = np.einsum("nkl,ks,lt->nst", z, basis, basis).reshape(n, side * side)
    x = 0.5 + amplitude * field + pixel_noise * rng.standard_normal((n, side * side))
    return np.clip(x, 0.0, 1.0)
