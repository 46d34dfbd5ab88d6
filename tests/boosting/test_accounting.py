"""The paper's accounting at fixed ε₀: the note's regression values (§5.2), Algorithm 1 against
Prop. 1 and against its literal double loop, and the composition curve."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privrepro.boosting import gaussian_mu
from privrepro.boosting.accounting import (
    algorithm1_double_loop,
    appendix_d_epsilon,
    composition_delta,
    composition_epsilon_curve,
    composition_pmf,
    epsilon_for_delta,
    profile_delta,
    rdp_epsilon,
)
from privrepro.boosting.design import PBSetting
from privrepro.boosting.kernels import GaussianKernel
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.regions import AbsoluteRegion, FixedRegion, PaperTerms


def _setting_a() -> tuple[BoostedMechanism, PaperTerms]:
    # note §5.2 setting A: absolute, ε₀ = 1, δ = 1e-5 (analytic σ), τ = 5, Δ = 1, ρ = 0.9
    mech = PBSetting("absolute", 0.9, 1.0, 10.0).mechanism(1.0)
    return mech, mech.paper_terms(1.0)


def test_setting_a_terms_match_note() -> None:
    mech, t = _setting_a()
    assert mech.kernel.scale == pytest.approx(3.73063163482, rel=1e-10)
    assert mech.region.min_coverage(mech.kernel) == pytest.approx(0.819837744204, rel=1e-10)
    assert t.q == pytest.approx(0.494383092137, rel=1e-10)
    assert t.L2 == pytest.approx(0.681975995525, rel=1e-10)
    assert t.W1 == t.W2 == pytest.approx(0.0517329685349, rel=1e-10)
    assert t.L1 == 0.0


def test_setting_a_profile_and_epsilon_match_note() -> None:
    mech, t = _setting_a()
    kd = lambda e: mech.kernel.delta(e, 1.0)  # noqa: E731
    assert float(profile_delta(t, kd, 1.3)) == pytest.approx(6.75876366493e-05, rel=1e-9)
    eps = epsilon_for_delta(lambda e: float(profile_delta(t, kd, e)), 1e-5)
    assert eps == pytest.approx(1.46698484111, abs=1e-9)


@pytest.mark.parametrize(
    ("alpha", "eps0", "total"), [(2.0, 0.1, 0.100971431809), (10.0, 0.5, 0.50961843583)]
)  # note §5.2, σ = 3.16227766017
def test_absolute_rdp_matches_note(alpha: float, eps0: float, total: float) -> None:
    s = PBSetting("absolute", 0.9, 1.0, 10.0, notion="rdp", alpha=alpha)
    mech = s.mechanism(eps0)
    assert mech.kernel.scale == pytest.approx(3.16227766017, rel=1e-10)
    t = mech.paper_terms(1.0)
    assert t.q == pytest.approx(0.135136370987, rel=1e-9)
    assert t.W1 == pytest.approx(0.0460284563627, rel=1e-9)
    assert s.epsilon(eps0) == pytest.approx(total, abs=1e-10)


def test_relative_matches_note() -> None:
    # note §5.2, θ = 0.05 (assumed), ε₀ = 1, δ = 1e-5, τ = 5, Δ = 1, ρ = 0.9
    s = PBSetting("relative", 0.9, 1.0, 10.0, theta=0.05)
    t = s.mechanism(1.0).paper_terms(1.0)
    assert t.L1 == pytest.approx(0.00234008493167, rel=1e-8)
    assert t.W1 == pytest.approx(0.00215839862835, rel=1e-8)
    assert t.W2 == pytest.approx(0.00219751934397, rel=1e-8)
    assert s.epsilon(1.0) == pytest.approx(1.17820570118, abs=1e-9)
    r = PBSetting("relative", 0.9, 1.0, 10.0, notion="rdp", alpha=10.0)
    assert r.mechanism(0.5).paper_terms(1.0).L1 == pytest.approx(0.000489785535446, rel=1e-8)
    assert r.epsilon(0.5) == pytest.approx(0.500875027999, abs=1e-10)


def test_fixed_region_matches_note() -> None:
    # note §5.2: σ = 10, [−10, 10], Δ = 1, ρ = 0.9
    k = GaussianKernel(10.0)
    region = FixedRegion(-10.0, 10.0)
    assert float(region.coverage(k, -10.0)) == pytest.approx(0.477249868052, rel=1e-10)
    assert float(region.coverage(k, -9.0)) == pytest.approx(0.511111277461, rel=1e-10)
    t = region.paper_terms(k, 0.9, 1.0)
    assert t.q == pytest.approx(0.898560019642, rel=1e-10)
    assert t.L1 == pytest.approx(0.055792684715, rel=1e-9)
    assert (t.W1, t.W2, t.L2) == (0.0, 0.0, 0.0)
    d = float(profile_delta(t, lambda e: k.delta(e, 1.0), 0.5))
    assert d == pytest.approx(1.14788745812e-07, rel=1e-8)


@pytest.mark.parametrize(
    ("width", "delta_q", "expected"),
    [
        # note §5.2: L1(ρ) at σ = 10 for ρ = 0.7, 0.8, 0.9, 0.95, 0.99 (4 printed decimals)
        (20.0, 1.0, [0.0298, 0.0429, 0.0558, 0.0622, 0.0673]),
        (100.0, 1.0, [0.0314, 0.0467, 0.0618, 0.0692, 0.0752]),
        (100.0, 30.0, [0.3357, 0.4690, 0.5866, 0.6406, 0.6818]),
    ],
)
def test_fixed_region_l1_curve_matches_note(
    width: float, delta_q: float, expected: list[float]
) -> None:
    k = GaussianKernel(10.0)
    region = FixedRegion(-width / 2, width / 2)
    got = [region.paper_terms(k, r, delta_q).L1 for r in (0.7, 0.8, 0.9, 0.95, 0.99)]
    assert np.allclose(got, expected, atol=6e-5)  # printed to 4 decimals


def test_fixed_region_paper_pair_goes_negative_when_delta_exceeds_width() -> None:
    # note §2.3(b): [−10, 10], Δ = 30, σ = 10, ρ = 0.9 → L1 = −0.78 under the paper's pair
    k = GaussianKernel(10.0)
    assert FixedRegion(-10, 10).paper_terms(k, 0.9, 30.0).L1 == pytest.approx(-0.78, abs=0.01)
    worst = FixedRegion(-10, 10, pair_rule="worst").paper_terms(k, 0.9, 30.0).L1
    assert worst > 0


def test_q_zero_gives_the_gaussian_profile() -> None:
    k = GaussianKernel(2.0)
    mech = BoostedMechanism(k, AbsoluteRegion(10.0), 0.9)
    t = mech.paper_terms(1.0)
    assert t.q == 0.0 and t.L2 == 0.0
    eps = np.linspace(-1, 3, 9)
    assert np.allclose(
        profile_delta(t, lambda e: k.delta(e, 1.0), eps), k.delta(eps, 1.0), rtol=1e-14, atol=0
    )


def test_algorithm1_at_t1_equals_prop1() -> None:
    mech, t = _setting_a()
    kd = lambda e: mech.kernel.delta(e, 1.0)  # noqa: E731
    eps = np.linspace(-0.5, 3.0, 15)
    assert np.allclose(
        composition_delta(t, kd, eps, 1), profile_delta(t, kd, eps), rtol=1e-13, atol=1e-300
    )
    assert algorithm1_double_loop(t, kd, 1.3, 1) == pytest.approx(
        float(profile_delta(t, kd, 1.3)), rel=1e-13
    )


@pytest.mark.parametrize("T", [2, 7, 25])
def test_algorithm1_fast_equals_double_loop(T: int) -> None:
    # corrected O(T) convolution = literal double loop (note §3: 5.6e-17 at T = 10)
    terms = PaperTerms(L1=0.01, L2=0.7, W1=0.05, W2=0.03, q=0.5)
    k = GaussianKernel(4.0)
    kdT = lambda e: k.delta(e, 1.0, compositions=T)  # noqa: E731
    for eps in (0.5, 2.0, 4.0):
        fast = float(composition_delta(terms, kdT, eps, T))
        slow = algorithm1_double_loop(terms, kdT, eps, T)
        assert fast == pytest.approx(slow, rel=1e-12, abs=1e-18)


def test_composition_pmf_is_a_distribution_with_the_right_mean() -> None:
    pmf = composition_pmf(0.1, 0.05, 40)
    k = np.arange(-40, 41)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-13)
    assert (pmf * k).sum() == pytest.approx(40 * (0.1 - 0.05), rel=1e-12)


def test_composition_curve_matches_note_fig6() -> None:
    # note §5.2, Fig. 6 style: absolute, τ = 5, Δ = 3, ρ = 0.9, δ = 1e-5, ε₀* = 1.710651 fixed
    s = PBSetting("absolute", 0.9, 3.0, 10.0)
    mech = s.mechanism(1.710651)
    t = mech.paper_terms(3.0)
    assert mech.kernel.scale == pytest.approx(6.882208, abs=2e-6)
    assert t.q == pytest.approx(0.873453, abs=2e-6)
    sig = mech.kernel.scale
    Ts = np.array([1, 2, 5, 10, 100, 1000])
    curve = composition_epsilon_curve(
        t, lambda e, T: gaussian_mu.gaussian_delta_mu(e, 3.0 * np.sqrt(T) / sig), Ts, 1e-5
    )
    # printed to 4 decimals; ε₀* itself printed to 6 digits
    assert np.allclose(curve, [3.5687, 6.0355, 11.4025, 16.7803, 60.7397, 258.6148], atol=5e-4)
    # vectorised curve = one root-find per T on Prop. 3
    kdT = lambda e: gaussian_mu.gaussian_delta_mu(e, 3.0 * math.sqrt(10) / sig)  # noqa: E731
    single = epsilon_for_delta(lambda e: float(composition_delta(t, kdT, e, 10)), 1e-5)
    assert curve[3] == pytest.approx(single, abs=1e-8)


def test_fixed_eps0_composition_matches_note() -> None:
    # note §5.2: ε₀ = 1 fixed → ε_T = 3.676376, 18.301077, 59.04844, 211.4522 at T = 1, 10, 100, 1000
    s = PBSetting("absolute", 0.9, 3.0, 10.0)
    mech = s.mechanism(1.0)
    t = mech.paper_terms(3.0)
    sig = mech.kernel.scale
    curve = composition_epsilon_curve(
        t,
        lambda e, T: gaussian_mu.gaussian_delta_mu(e, 3.0 * np.sqrt(T) / sig),
        np.array([1, 10, 100, 1000]),
        1e-5,
    )
    assert np.allclose(curve, [3.676376, 18.301077, 59.04844, 211.4522], rtol=2e-7, atol=1e-4)


def test_appendix_d_bound() -> None:
    # ε₀ − 2 log(1 − q): at q = 1 − e^{−1} the bound adds exactly 2
    assert appendix_d_epsilon(1.0, 1 - math.exp(-1)) == pytest.approx(3.0, abs=1e-14)


def test_rdp_reduces_to_kernel_without_boosting() -> None:
    t = PaperTerms(L1=0.0, L2=0.0, W1=0.0, W2=0.0, q=0.0)
    assert rdp_epsilon(t, 0.37, 4.0) == pytest.approx(0.37, abs=1e-15)


def test_unchecked_profile_is_the_shared_core():
    """``gaussian_mu.gaussian_delta_mu`` (the root finders' unchecked profile) is the exact Gaussian
    profile of ``privrepro.dp.gaussian.delta_for_epsilon`` (Balle & Wang 2018, Thm. 8), scalar
    and vectorised, μ = 0 included; 1e-14 absolute covers the two evaluation orders."""
    from privrepro.dp.gaussian import delta_for_epsilon

    rng = np.random.default_rng(0)
    eps, mu = rng.uniform(-2, 30, 5000), rng.uniform(0.01, 20, 5000)
    np.testing.assert_allclose(
        gaussian_mu.gaussian_delta_mu(eps, mu), delta_for_epsilon(eps, 1.0, mu), rtol=0, atol=1e-14
    )
    for e, m in ((0.5, 1.0), (-0.3, 0.0), (0.3, 0.0), (12.0, 4.0)):
        assert abs(gaussian_mu.gaussian_delta_mu(e, m) - delta_for_epsilon(e, 1.0, m)) <= 1e-14
