"""Examples 2 and 3's mechanisms: Monte-Carlo samples against their exact covariances."""

from __future__ import annotations

import numpy as np
import pytest

from privrepro.pac.algorithms import spectrum
from privrepro.pac.mechanisms import (
    local_publishing_samples,
    local_publishing_spectrum,
    poisson_mean_samples,
    poisson_mean_spectrum,
    smooth_image_pool,
)


@pytest.fixture(scope="module")
def pool() -> np.ndarray:
    return np.random.default_rng(0).uniform(size=(300, 5)) ** 2


def test_local_publishing_spectrum_is_the_pool_covariance(pool: np.ndarray) -> None:
    ref = np.sort(np.linalg.eigvalsh(np.cov(pool.T, bias=True)))[::-1]  # numpy, divisor N
    assert local_publishing_spectrum(pool) == pytest.approx(ref, rel=1e-10)
    lam_hat, _ = spectrum(local_publishing_samples(pool, 20000, np.random.default_rng(1)))
    assert lam_hat.sum() == pytest.approx(ref.sum(), rel=0.03)  # MC trace, m = 20,000 (~1% SE)


def test_poisson_mean_is_unbiased_with_the_uncentred_covariance(pool: np.ndarray) -> None:
    # Σ_M = p(1-p)/(pN)^2 Σ u uᵀ (pac note, Example 3 consistency note); E M(X) = pool mean
    y = poisson_mean_samples(pool, 20000, np.random.default_rng(2), inclusion=0.5)
    assert y.mean(axis=0) == pytest.approx(
        pool.mean(axis=0), abs=4 * np.sqrt(poisson_mean_spectrum(pool).max() / 20000)
    )
    exact = poisson_mean_spectrum(pool)
    ref = np.sort(np.linalg.eigvalsh(0.25 / 150**2 * pool.T @ pool))[::-1]
    assert exact == pytest.approx(ref, rel=1e-10)
    lam_hat, _ = spectrum(y)
    assert lam_hat.sum() == pytest.approx(exact.sum(), rel=0.05)  # MC trace, m = 20,000


def test_smooth_pool_range_and_scaling() -> None:
    rng = np.random.default_rng(3)
    small = smooth_image_pool(rng, 500, 4, pixel_noise=0.0)
    big = smooth_image_pool(rng, 500, 16, pixel_noise=0.0)
    assert small.min() >= 0 and big.max() <= 1 and big.shape == (500, 256)
    # resolution-free field: Σ sqrt(λ) grows ~ sqrt(d) (×4 here), far below d (×16)
    ratio = (
        np.sqrt(local_publishing_spectrum(big)).sum()
        / np.sqrt(local_publishing_spectrum(small)).sum()
    )
    assert 2.0 < ratio < 8.0
