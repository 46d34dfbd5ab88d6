"""Kernels: the Gaussian profile and calibrations against the note's check values, the Laplace
profile against quadrature, and the crossing points."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from privrepro.boosting import gaussian_mu
from privrepro.boosting.kernels import GaussianKernel, LaplaceKernel, log_interval_mass_std_normal


@pytest.mark.parametrize(
    ("eps", "expected"),
    [
        # note §5.1, σ = Δ = 1 (agrees with dp_accounting to 1e-13)
        (0.0, 0.3829249225480263),
        (0.5, 0.23842170813487656),
        (1.0, 0.12693673750664392),
        (2.0, 0.020923635821113763),
        (3.0, 0.0015371853694009577),
    ],
)
def test_gaussian_profile_matches_note(eps: float, expected: float) -> None:
    assert GaussianKernel(1.0).delta(eps, 1.0) == pytest.approx(expected, rel=1e-12)


def test_gaussian_profile_negative_eps_is_tv_identity() -> None:
    # δ(−ε) = 1 − e^{−ε} + e^{−ε} δ(ε) (hockey-stick symmetry of a symmetric pair)
    k = GaussianKernel(2.0)
    for e in (0.3, 1.0, 2.5):
        lhs = k.delta(-e, 1.0)
        rhs = 1 - math.exp(-e) + math.exp(-e) * k.delta(e, 1.0)
        assert lhs == pytest.approx(rhs, rel=1e-12)


def test_vector_and_scalar_profile_agree() -> None:
    k = GaussianKernel(3.0)
    eps = np.linspace(-3, 5, 17)
    vec = k.delta(eps, 1.5)
    assert np.allclose(vec, [k.delta(float(e), 1.5) for e in eps], rtol=1e-14, atol=0)


@pytest.mark.parametrize(
    ("eps0", "analytic", "classical"),
    [
        # note §5.1, δ = 1e-5
        (1.0, 3.730631634815949, 4.844805262605389),
        (0.1, 30.749566131977787, 48.44805262605389),
    ],
)
def test_calibrations_match_note(eps0: float, analytic: float, classical: float) -> None:
    assert gaussian_mu.analytic_sigma(eps0, 1e-5) == pytest.approx(analytic, rel=1e-9)
    assert gaussian_mu.classical_sigma(eps0, 1e-5) == pytest.approx(classical, rel=1e-12)


@pytest.mark.parametrize(("sigma", "expected"), [(1.0, 4.3771780957), (5.0, 0.7255217509)])
def test_gaussian_epsilon_matches_note(sigma: float, expected: float) -> None:
    assert gaussian_mu.gaussian_epsilon_mu(1e-5, 1 / sigma) == pytest.approx(expected, abs=1e-9)


def test_gaussian_composed_epsilon_matches_note() -> None:
    # note §5.1: σ = 5, T = 100, δ = 1e-5 → 9.997256146 (closed form; dp_accounting agrees)
    assert gaussian_mu.gaussian_epsilon_mu(1e-5, 0.2, compositions=100) == pytest.approx(
        9.997256146, abs=1e-8
    )


@pytest.mark.parametrize("eps", [-1.5, -0.2, 0.0, 0.4, 0.9, 2.0])
def test_laplace_profile_matches_quadrature(eps: float) -> None:
    k = LaplaceKernel(1.0 / 1.2)  # ε₀ = 1.2 at Δ = 1
    val, _ = integrate.quad(
        lambda y: max(k.pdf(y) - math.exp(eps) * k.pdf(y - 1.0), 0.0),
        -40,
        40,
        points=[0.0, 1.0],
        limit=200,
        epsabs=1e-13,
    )
    assert float(k.delta(eps, 1.0)) == pytest.approx(val, abs=1e-10)


def test_laplace_rdp_matches_quadrature() -> None:
    k = LaplaceKernel(1.0)
    a = 3.0
    val, _ = integrate.quad(
        lambda y: k.pdf(y) ** a * k.pdf(y - 1.0) ** (1 - a), -50, 50, points=[0.0, 1.0], limit=200
    )
    assert k.rdp(a, 1.0) == pytest.approx(math.log(val) / (a - 1), rel=1e-9)


@pytest.mark.parametrize("kernel", [GaussianKernel(1.7), LaplaceKernel(0.8)])
def test_crossing_solves_the_log_ratio(kernel: GaussianKernel | LaplaceKernel) -> None:
    c, c2 = 0.3, 1.1
    for level in (-0.5, 0.0, 0.4):
        y = float(kernel.crossing(c, c2, level))
        assert float(kernel.logpdf(y - c) - kernel.logpdf(y - c2)) == pytest.approx(
            level, abs=1e-12
        )


def test_log_interval_mass_far_tail() -> None:
    # Φ(−40) − Φ(−41) in log space: finite and close to log Φ(−40) (the upper end dominates)
    from scipy import special

    v = float(log_interval_mass_std_normal(-41.0, -40.0))
    assert v == pytest.approx(float(special.log_ndtr(-40.0)), abs=1e-6)
    assert float(log_interval_mass_std_normal(40.0, 41.0)) == pytest.approx(v, rel=1e-12)
