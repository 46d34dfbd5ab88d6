"""The auditor refutes mis-calibrated mechanisms and leaves calibrated ones standing.

Every test uses a fixed seed, so it is deterministic; the statistical guarantee (a false
refutation has probability ≤ 1 − confidence = 1%) is what makes the seeds unimportant.
Each run uses 1e6 draws in total (2.5e5 per input for the search, 2.5e5 for evaluation).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from privrepro.audit import audit, clopper_pearson_lower, clopper_pearson_upper
from privrepro.config import ConfigError
from privrepro.dp.gaussian import analytic_sigma, epsilon_for_delta
from privrepro.dp.laplace import laplace_scale

N = 500_000  # draws per input (search + evaluation): 1e6 in total


def gauss(mean: float, sigma: float):
    return lambda n, rng: rng.normal(mean, sigma, n)


def lap(mean: float, b: float):
    return lambda n, rng: rng.laplace(mean, b, n)


SIGMA = analytic_sigma(1.0, 1e-5)  # ≈ 3.7306 (cl note check 5)


def test_gaussian_half_sigma_is_refuted() -> None:
    # σ/2 doubles μ: the exact ε at δ=1e-5 is epsilon_for_delta(1e-5, σ/2) ≈ 2.4 > 1.
    r = audit(
        gauss(1.0, SIGMA / 2),
        gauss(0.0, SIGMA / 2),
        1.0,
        1e-5,
        N,
        np.random.default_rng(11),
        progress=False,
    )
    assert r.refuted and r.confidence == 0.99 and r.n_samples == 2 * N
    assert 1.0 < r.epsilon_lower_bound <= float(epsilon_for_delta(1e-5, SIGMA / 2))


def test_calibrated_gaussian_is_not_refuted() -> None:
    r = audit(
        gauss(1.0, SIGMA),
        gauss(0.0, SIGMA),
        1.0,
        1e-5,
        N,
        np.random.default_rng(12),
        progress=False,
    )
    assert not r.refuted and r.epsilon_lower_bound <= 1.0


def test_laplace_half_scale_is_refuted() -> None:
    b = laplace_scale(1.0)  # b = Δ/ε = 1; half of it is (2, 0)-DP
    r = audit(
        lap(1.0, b / 2), lap(0.0, b / 2), 1.0, 0.0, N, np.random.default_rng(13), progress=False
    )
    assert r.refuted and 1.0 < r.epsilon_lower_bound <= 2.0


def test_calibrated_laplace_is_not_refuted() -> None:
    b = laplace_scale(1.0)
    r = audit(
        stats.laplace(1.0, b),
        stats.laplace(0.0, b),
        1.0,
        0.0,
        N,
        np.random.default_rng(14),
        progress=False,
    )
    assert not r.refuted and r.epsilon_lower_bound <= 1.0


def _leaky(sigma: float, p_leak: float):
    def sample(n: int, rng: np.random.Generator) -> np.ndarray:
        x = rng.normal(1.0, sigma, n)
        x[rng.random(n) < p_leak] = np.inf  # a marker output, only on this input
        return x

    return sample


def test_rare_event_leak_is_refuted() -> None:
    # Claimed (1, 1e-6) with the calibrated σ, but a marker with probability 1e-3 on one input:
    # the true δ(1) is ≥ 1e-3.
    s = analytic_sigma(1.0, 1e-6)
    r = audit(
        _leaky(s, 1e-3), gauss(0.0, s), 1.0, 1e-6, N, np.random.default_rng(15), progress=False
    )
    # The set found is the tail holding the markers (any threshold above all Gaussian draws).
    assert r.refuted and r.side == "upper" and r.direction == "P/Q" and r.q_hat == 0.0
    assert r.p_hat == pytest.approx(1e-3, rel=0.2)  # 250 expected markers: ±4 s.e. is ±25%
    assert 0 < r.delta_lower_bound <= 1e-3
    # The same mechanism honestly accounted (δ = 1e-3 + 1e-6 covers the leak) stands.
    r2 = audit(
        _leaky(s, 1e-3),
        gauss(0.0, s),
        1.0,
        1e-3 + 1e-6,
        N,
        np.random.default_rng(16),
        progress=False,
    )
    assert not r2.refuted


def test_bound_is_below_the_truth_over_seeds() -> None:
    # Coverage: over 8 seeds the lower bound never exceeds the exact ε(δ) (each fails w.p. ≤ 1%).
    sigma = 1.0
    truth = float(epsilon_for_delta(1e-3, sigma))
    for seed in range(8):
        r = audit(
            gauss(1.0, sigma),
            gauss(0.0, sigma),
            truth,
            1e-3,
            40_000,
            np.random.default_rng(seed),
            progress=False,
        )
        assert r.epsilon_lower_bound <= truth and not r.refuted


def test_vector_outputs_need_a_statistic() -> None:
    def two_d(mean: float):
        return lambda n, rng: rng.normal(mean, 1.0, (n, 2))

    with pytest.raises(ConfigError, match="statistic"):
        audit(two_d(1.0), two_d(0.0), 1.0, 1e-5, 1000, np.random.default_rng(0), progress=False)
    r = audit(
        two_d(1.0),
        two_d(0.0),
        1.0,
        1e-5,
        1000,
        np.random.default_rng(0),
        statistic=lambda x: x.sum(axis=1),
        progress=False,
    )
    assert np.isfinite(r.threshold)


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="delta"):
        audit(gauss(0, 1), gauss(0, 1), 1.0, 1.0, 1000, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="n_samples"):
        audit(gauss(0, 1), gauss(0, 1), 1.0, 0.1, 10, np.random.default_rng(0))


def test_clopper_pearson_reference() -> None:
    # scipy.stats.binomtest(k, n).proportion_ci(0.98, "exact") gives the two one-sided 1% bounds.
    for k, n in [(0, 100), (5, 100), (100, 100), (250, 250_000)]:
        ci = stats.binomtest(k, n).proportion_ci(0.98, method="exact")
        assert clopper_pearson_lower(k, n, 0.01) == pytest.approx(ci.low, abs=1e-12)
        assert clopper_pearson_upper(k, n, 0.01) == pytest.approx(ci.high, abs=1e-12)


def test_neighbour_samplers_with_a_mechanism_object() -> None:
    # ip-style use: GaussianMechanism on two query values at distance Δ = 0.1 with the classical
    # σ for (1, 1e-5) at α = 0.1 (ip note §7: σ = 0.4844805263), audited at σ/3: refuted.
    from privrepro.audit import neighbour_samplers
    from privrepro.dp.gaussian import GaussianMechanism

    m = GaussianMechanism.classical(1.0, 1e-5, 0.1)
    weak = GaussianMechanism(m.sigma / 3, 0.1)
    sp, sq = neighbour_samplers(weak.sample, 0.1, 0.0)
    assert audit(sp, sq, 1.0, 1e-5, 200_000, np.random.default_rng(21), progress=False).refuted
    sp, sq = neighbour_samplers(m.sample, 0.1, 0.0)
    assert not audit(sp, sq, 1.0, 1e-5, 200_000, np.random.default_rng(22), progress=False).refuted
