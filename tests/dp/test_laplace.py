"""Laplace mechanism: closed forms against direct integration and reference values."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from privrepro.dp.laplace import (
    LaplaceMechanism,
    laplace_delta_for_epsilon,
    laplace_epsilon_for_delta,
    laplace_rdp_epsilon,
    laplace_scale,
)


def test_scale_reference() -> None:
    # ip note §7: b(ε=1, α=0.1) = 0.1, b(ε=0.5, α=0.1) = 0.2, b(ε=1, α=0.2, μ=3) = 0.6.
    assert laplace_scale(1.0, 0.1) == pytest.approx(0.1)
    assert laplace_scale(0.5, 0.1) == pytest.approx(0.2)
    assert laplace_scale(1.0, 0.6) == pytest.approx(0.6)


@pytest.mark.parametrize("eps", [-3.0, -1.5, -0.2, 0.0, 0.4, 1.2, 2.5])
def test_profile_matches_quadrature(eps: float) -> None:
    # ∫ (p − e^ε q)_+ with scipy.integrate.quad on the kinks' pieces; quad's error ≲ 1e-12.
    b, sens = 0.8, 1.5
    p, q = stats.laplace(0, b), stats.laplace(sens, b)

    def f(x: float) -> float:
        return max(p.pdf(x) - math.exp(eps) * q.pdf(x), 0.0)

    edges = [-60.0, 0.0, sens / 2, sens, 60.0]
    val = sum(
        integrate.quad(f, lo, hi, epsabs=1e-14, limit=200)[0]
        for lo, hi in itertools.pairwise(edges)
    )
    assert laplace_delta_for_epsilon(eps, b, sens) == pytest.approx(val, abs=1e-10)


def test_inverse_and_pure_dp() -> None:
    m = LaplaceMechanism.calibrated(1.0)
    assert m.delta(1.0) == 0.0 and m.delta(0.999) > 0
    eps = np.linspace(-3, 0.99, 40)
    d = m.delta(eps)
    assert np.allclose(m.epsilon(d), eps, atol=1e-12)
    assert m.epsilon(0.0) == pytest.approx(1.0)
    assert laplace_epsilon_for_delta(1.0, 1.0) == -np.inf


def test_rdp_limits() -> None:
    # Mironov 2017 Prop. 6: RDP → ε₀ as α → ∞, and at α = 2 it equals log(2/3 e^{ε₀} + 1/3 e^{−2ε₀}).
    assert laplace_rdp_epsilon(1e6, 1.0) == pytest.approx(1.0, abs=1e-5)
    assert laplace_rdp_epsilon(2.0, 1.0) == pytest.approx(
        math.log(2 / 3 * math.e + 1 / 3 * math.exp(-2))
    )
    assert np.isfinite(laplace_rdp_epsilon(1e4, 1e-3))


@settings(max_examples=100, deadline=None)
@given(st.floats(-10, 10), st.floats(0, 3), st.floats(0.05, 20), st.floats(0.1, 5))
def test_laplace_profile_properties(eps: float, step: float, b: float, sens: float) -> None:
    # Decreasing in ε; decreasing in the scale for ε ≥ 0; round trip through the inverse.
    d = laplace_delta_for_epsilon(eps, b, sens)
    assert 0 <= d <= 1
    assert laplace_delta_for_epsilon(eps + step, b, sens) <= d + 1e-15
    if eps >= 0:
        assert laplace_delta_for_epsilon(eps, b * 1.5, sens) <= d + 1e-15
    # Near δ = 1 the input 1 − δ itself carries ~1e-16/(1 − δ) relative error: stay below 0.99.
    if 1e-12 < d < 0.99:
        assert laplace_epsilon_for_delta(d, b, sens) == pytest.approx(eps, abs=1e-9)
