"""Grid privacy-loss distributions composed for every T: against dp_accounting's construction and
composition, the Gaussian's closed-form composition (μ√T), a no-cut FFT power, and brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privrepro.config import ConfigError
from privrepro.dp.gaussian import delta_for_epsilon, epsilon_for_delta
from privrepro.dp.pld import (
    DiscretePLD,
    compose_every_t,
    compose_power,
    connect_the_dots,
    from_profile,
)

SIGMA = 2.0  # a Gaussian mechanism with sensitivity 1: μ = 0.5 per release


def _gaussian_pld(h: float) -> DiscretePLD:
    """Connect-the-dots of the closed-form Gaussian profile (the loss is N(μ²/2, μ²))."""
    return from_profile(lambda e: delta_for_epsilon(e, SIGMA), h, -12.0, 12.0)


def test_connect_the_dots_is_dp_accountings_construction() -> None:
    # Same deltas into dp_accounting's create_pmf_pessimistic_connect_dots_fixed_gap: the same
    # probabilities (both compute the formulas of Doroshenko et al. 2022, Algorithm 1) to 1e-15.
    from dp_accounting.pld import pld_pmf

    h, lo = 1e-2, -1200
    grid = (lo + np.arange(2401)) * h
    deltas = np.asarray(delta_for_epsilon(grid, SIGMA))
    ours = connect_the_dots(h, lo, deltas)
    theirs = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(
        h, lo, lo + 2400, deltas
    ).to_dense_pmf()
    assert theirs._lower_loss == ours.offset
    np.testing.assert_allclose(ours.probs, theirs._probs, rtol=0, atol=1e-15)
    assert ours.infinity_mass == pytest.approx(theirs._infinity_mass, abs=1e-18)
    # a distribution: total mass 1, up to the round-off clipped to 0 (≤ 2401 × ~1e-15)
    assert ours.probs.sum() + ours.infinity_mass == pytest.approx(1.0, abs=1e-11)


def test_every_t_bounds_the_gaussians_closed_form_composition() -> None:
    # T releases of the Gaussian are one Gaussian with μ√T (closed form, exact). The curve is
    # pessimistic (never below it, 1e-9 for floating point), within the stated T·h, and in fact
    # within 1e-4 relative (connect-the-dots' error is O(h²) for this smooth loss).
    h, t_max = 1e-2, 300
    eps = compose_every_t([_gaussian_pld(h)], t_max, [1e-5, 1e-8])
    T = np.arange(1, t_max + 1)
    for j, delta in enumerate((1e-5, 1e-8)):
        exact = np.asarray(epsilon_for_delta(delta, SIGMA / np.sqrt(T)))
        assert np.all(eps[:, j] >= exact - 1e-9)
        assert np.all(eps[:, j] <= exact + T * h)
        np.testing.assert_allclose(eps[:, j], exact, rtol=1e-4)


def test_every_t_equals_a_no_cut_fft_power() -> None:
    # The tail cuts (1e-15 of mass per side per step) and the top-only ε read-out change nothing
    # visible: the same T-fold compositions by one FFT power each, whole support, agree to 1e-9.
    pld = _gaussian_pld(2e-2)
    eps = compose_every_t([pld], 200, [1e-5])[:, 0]
    for t in (1, 7, 60, 200):
        ref = compose_power(pld, t).epsilon_for_delta([1e-5])[0]
        assert eps[t - 1] == pytest.approx(ref, rel=1e-9)


def test_the_infinity_mass_is_composed() -> None:
    """A release that, with probability q, reveals the record (an infinite loss) and otherwise
    loses ε₀: T releases lose T·ε₀ with probability (1 − q)^T and ∞ with 1 − (1 − q)^T, so
    δ_T(ε) = 1 − (1 − q)^T e^{ε − Tε₀} below Tε₀ (closed form), and ε_T(δ) = ∞ as soon as
    1 − (1 − q)^T > δ. With q = 0.01, δ = 0.05 that is T ≥ 6 (1 − 0.99⁶ = 0.0585 against
    1 − 0.99⁵ = 0.0490): a composition that drops the ∞-mass keeps ε finite for every T."""
    q, eps0, delta, t_max = 0.01, 0.1, 0.05, 10
    pld = DiscretePLD(eps0, 1, np.array([1.0 - q]), q)
    T = np.arange(1, t_max + 1)
    finite = T * eps0 + math.log(1 - delta) - T * math.log(1 - q)
    expected = np.where(1 - (1 - q) ** T > delta, np.inf, finite)
    assert list(np.isinf(expected)) == [False] * 5 + [True] * 5
    every = compose_every_t([pld], t_max, [delta])[:, 0]
    np.testing.assert_allclose(every, expected, rtol=1e-12)
    for t in (1, 5, 6, 10):
        power = compose_power(pld, t)
        assert power.infinity_mass == pytest.approx(1 - (1 - q) ** t, rel=1e-12)
        assert power.epsilon_for_delta([delta])[0] == pytest.approx(expected[t - 1], rel=1e-12)


def test_epsilon_read_out_is_exact_for_the_grid_distribution() -> None:
    # ε(δ) in closed form between grid points against bisection on the profile δ(ε) itself.
    rng = np.random.default_rng(0)
    probs = rng.random(400) ** 4
    pld = DiscretePLD(0.05, -150, probs / probs.sum() * (1 - 1e-7), 1e-7)
    for delta in (1e-2, 1e-4, 1e-6):
        eps = pld.epsilon_for_delta([delta])[0]
        lo, hi = 0.0, 50.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if pld.delta_for_epsilon([mid])[0] > delta else (lo, mid)
        assert eps == pytest.approx(hi, abs=1e-10)
        assert pld.delta_for_epsilon([eps])[0] == pytest.approx(delta, rel=1e-9)
    assert math.isinf(pld.epsilon_for_delta([1e-8])[0])  # the ∞-mass alone exceeds δ


def test_dp_accountings_delta_at_our_epsilon() -> None:
    # dp_accounting composes the same distribution (its own FFT and truncation): its δ at the ε
    # we return for T = 150 is the target δ to 1e-6 relative.
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution

    pld = _gaussian_pld(1e-2)
    eps = compose_every_t([pld], 150, [1e-5])[-1, 0]
    pmf = pld_pmf.create_pmf(
        dict(zip(range(pld.offset, pld.offset + len(pld.probs)), pld.probs.tolist(), strict=True)),
        pld.interval,
        pld.infinity_mass,
        pessimistic_estimate=True,
    )
    composed = privacy_loss_distribution.PrivacyLossDistribution(pmf).self_compose(150)
    assert composed.get_delta_for_epsilon(eps) == pytest.approx(1e-5, rel=1e-6)


def test_symmetric_directions_are_composed_once_and_asymmetric_ones_both() -> None:
    pld = _gaussian_pld(2e-2)
    twin = DiscretePLD(pld.interval, pld.offset, pld.probs * (1 + 1e-15), pld.infinity_mass)
    one = compose_every_t([pld], 50, [1e-5])
    # composed once, as the pointwise maximum (here: the twin)
    assert np.array_equal(
        compose_every_t([pld, twin], 50, [1e-5]), compose_every_t([twin], 50, [1e-5])
    )
    np.testing.assert_allclose(compose_every_t([pld, twin], 50, [1e-5]), one, rtol=1e-9)
    shifted = DiscretePLD(pld.interval, pld.offset + 3, pld.probs, pld.infinity_mass)
    both = compose_every_t([pld, shifted], 50, [1e-5])
    np.testing.assert_array_equal(both, compose_every_t([shifted], 50, [1e-5]))
    assert np.all(both > one)


@pytest.mark.parametrize(
    ("key", "call"),
    [
        ("t_max", lambda p: compose_every_t([p], 0, [1e-5])),
        ("deltas", lambda p: compose_every_t([p], 5, [0.0])),
        ("tail_mass", lambda p: compose_every_t([p], 5, [1e-5], tail_mass=1.0)),
        ("plds", lambda p: compose_every_t([], 5, [1e-5])),
        ("plds", lambda p: compose_every_t([p, DiscretePLD(0.5, 0, p.probs)], 5, [1e-5])),
        ("interval", lambda p: connect_the_dots(0.0, 0, [1.0, 0.5])),
        ("deltas", lambda p: connect_the_dots(0.1, 0, [0.5])),
        ("epsilon_high", lambda p: from_profile(lambda e: e, 0.1, 1.0, 0.0)),
    ],
)
def test_bad_arguments_name_the_key(key: str, call: object) -> None:
    with pytest.raises(ConfigError, match=key):
        call(_gaussian_pld(0.1))  # type: ignore[operator]
