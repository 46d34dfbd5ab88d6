"""Numeric hockey-stick and Rényi divergences against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privrepro.config import ConfigError
from privrepro.dp.gaussian import delta_for_epsilon, rdp_epsilon
from privrepro.dp.laplace import laplace_delta_for_epsilon, laplace_rdp_epsilon
from privrepro.dp.numeric import hockey_stick_divergence, renyi_divergence


def test_gaussian_profile_by_quadrature() -> None:
    # Closed form: Balle & Wang 2018 Thm 8 (dp.gaussian); the quadrature must agree within the
    # error it states (and the stated error must be small).
    sigma = 1.3
    p, q = stats.norm(1.0, sigma), stats.norm(0.0, sigma)
    eps = np.array([-2.0, -0.5, 0.0, 0.3, 1.0, 2.5])
    res = hockey_stick_divergence(p.pdf, q.pdf, eps, support=(-15.0, 16.0))
    exact = delta_for_epsilon(eps, sigma)
    assert np.all(np.abs(res.value - exact) <= res.error_bound + 1e-12)
    assert np.all(res.error_bound < 1e-8)


def test_laplace_profile_by_quadrature_with_breakpoints() -> None:
    b = 0.7
    p, q = stats.laplace(1.0, b), stats.laplace(0.0, b)
    eps = np.linspace(-2.0, 2.0, 9)
    tail = float(p.cdf(-30.0) + p.sf(31.0))  # exact P-mass outside the support
    res = hockey_stick_divergence(
        p.pdf, q.pdf, eps, support=(-30.0, 31.0), breakpoints=[0.0, 1.0], p_tail_mass=tail
    )
    exact = laplace_delta_for_epsilon(eps, b)
    assert np.all(np.abs(res.value - exact) <= res.error_bound + 1e-12)
    assert np.all(res.error_bound < 1e-8)


def test_atoms_and_tail_bound() -> None:
    # P = 0.999 N(0,1) + 0.001 δ_{10}, Q = N(0,1): δ(ε) = 0.001 for every ε ≥ 0 (the atom has no
    # Q-mass) plus 0 from the continuous part: exact.
    p = stats.norm(0, 1)
    res = hockey_stick_divergence(
        lambda x: 0.999 * p.pdf(x),
        p.pdf,
        [0.0, 1.0, 50.0],
        support=(-12.0, 12.0),
        p_atoms={10.0: 0.001},
    )
    assert np.allclose(res.value, 0.001, atol=1e-12)
    # A support that truncates P: the missing mass is reported in the bound.
    res2 = hockey_stick_divergence(p.pdf, stats.norm(5, 1).pdf, [0.0], support=(-1.0, 1.0))
    assert res2.tail_mass == pytest.approx(2 * p.sf(1.0), rel=1e-6)
    truth = delta_for_epsilon(0.0, 1.0, 5.0)
    assert abs(res2.value[0] - truth) <= res2.error_bound[0]


def test_renyi_gaussian_and_laplace() -> None:
    # Gaussian: D_α = αΔ²/2σ² (Mironov 2017, Prop. 7); Laplace: Mironov 2017, Prop. 6.
    alphas = np.array([1.5, 2.0, 5.0, 10.0])
    sigma = 1.7
    g = renyi_divergence(
        stats.norm(1, sigma).pdf,
        stats.norm(0, sigma).pdf,
        alphas,
        support=(-40.0, 40.0),
        log_p=stats.norm(1, sigma).logpdf,
        log_q=stats.norm(0, sigma).logpdf,
    )
    assert np.allclose(g.value, rdp_epsilon(alphas, sigma), rtol=1e-8)
    b = 0.8
    lap = renyi_divergence(
        stats.laplace(1, b).pdf,
        stats.laplace(0, b).pdf,
        alphas,
        support=(-60.0, 61.0),
        breakpoints=[0.0, 1.0],
    )
    assert np.allclose(lap.value, laplace_rdp_epsilon(alphas, b), rtol=1e-8)
    assert np.all(lap.error_bound < 1e-7)


def test_renyi_atom_without_q_mass_is_infinite() -> None:
    p = stats.norm(0, 1)
    r = renyi_divergence(
        lambda x: 0.5 * p.pdf(x), p.pdf, [2.0, 0.5], support=(-10.0, 10.0), p_atoms={3.0: 0.5}
    )
    assert r.value[0] == math.inf and np.isfinite(r.value[1])


def test_bad_support() -> None:
    with pytest.raises(ConfigError, match="support"):
        hockey_stick_divergence(stats.norm.pdf, stats.norm.pdf, [0.0], support=(1.0, 0.0))
    with pytest.raises(ConfigError, match="alpha"):
        renyi_divergence(stats.norm.pdf, stats.norm.pdf, [1.0], support=(0.0, 1.0))


def test_symmetric_profile_and_numeric_inverse() -> None:
    from privrepro.dp.gaussian import epsilon_for_delta
    from privrepro.dp.numeric import epsilon_for_delta_numeric, privacy_profile

    # Asymmetric pair: P = N(1, 1), Q = N(0, 2²). The symmetric profile is the max of both orders
    # (each checked against its own quadrature), and its inverse brackets the root.
    p, q = stats.norm(1, 1), stats.norm(0, 2)
    eps = np.array([0.0, 0.5, 1.0])
    prof = privacy_profile(p.pdf, q.pdf, eps, support=(-30.0, 30.0))
    a = hockey_stick_divergence(p.pdf, q.pdf, eps, support=(-30.0, 30.0)).value
    b = hockey_stick_divergence(q.pdf, p.pdf, eps, support=(-30.0, 30.0)).value
    assert np.array_equal(prof.value, np.maximum(a, b))
    # Gaussian pair: the numeric inverse matches the closed-form ε(δ) (Balle & Wang Thm 8).
    sigma = 1.5
    g0, g1 = stats.norm(0, sigma), stats.norm(1, sigma)
    res = epsilon_for_delta_numeric(
        lambda e: privacy_profile(g1.pdf, g0.pdf, e, support=(-20.0, 21.0)), 1e-5
    )
    exact = float(epsilon_for_delta(1e-5, sigma))
    assert res.epsilon_low <= exact <= res.epsilon_high
    assert res.epsilon == pytest.approx(exact, abs=1e-6)
