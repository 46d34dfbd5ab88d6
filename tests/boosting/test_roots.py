"""The boosting accountants' root finder (SciPy's elementwise find_root) against closed forms and
SciPy's scalar brentq, and the side it lands on (a point that meets the target)."""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from privrepro.boosting._roots import decreasing_root, smallest_epsilon
from privrepro.boosting.gaussian_mu import gaussian_delta_mu


def test_a_closed_form_root_to_the_tolerance_on_the_target_side() -> None:
    # fn(x) = exp(−x) reaches exp(−r) at x = r exactly (closed form)
    roots = np.array([0.5, 2.0, 7.25, 40.0])
    out = decreasing_root(
        lambda x: np.exp(-x), np.exp(-roots), np.zeros(4), np.full(4, 64.0), 1e-12
    )
    assert np.all(np.abs(out - roots) <= 1e-12 * np.maximum(1.0, roots))
    assert np.all(np.exp(-out) <= np.exp(-roots) * (1 + 1e-15))  # meets the target


def test_gaussian_sigma_agrees_with_scalar_brentq_and_meets_delta() -> None:
    """σ with exact Gaussian δ(ε₀) = δ on a grid of ε₀ (pb Figs. 2–3's calibration), in log σ,
    against brentq point by point (xtol 1e-15)."""
    eps0 = np.linspace(0.05, 6.0, 301)
    delta = np.full_like(eps0, 1e-6)
    lo, hi = np.full_like(eps0, -25.0), np.full_like(eps0, 25.0)

    def fn(x: np.ndarray) -> np.ndarray:
        return gaussian_delta_mu(eps0, 1.0 / np.exp(x))

    out = decreasing_root(fn, delta, lo, hi, 1e-12)
    for i in range(0, eps0.size, 20):
        ref = brentq(
            lambda x, i=i: float(
                np.log(max(gaussian_delta_mu(eps0[i], 1.0 / np.exp(x)), 1e-300)) - np.log(1e-6)
            ),
            -25.0,
            25.0,
            xtol=1e-15,
            rtol=1e-15,
        )
        assert abs(out[i] - ref) <= 1e-12 * max(1.0, abs(ref)), (i, out[i], ref)
    assert np.all(fn(out) <= delta * (1 + 1e-12))


def test_smallest_epsilon_is_zero_where_the_profile_starts_below_the_level() -> None:
    mu = np.array([0.01, 1.0, 3.0])
    level = np.array([0.5, 1e-5, 1e-5])  # δ(0) of μ = 0.01 is ≈ 0.004 < 0.5
    out = smallest_epsilon(lambda e: gaussian_delta_mu(e, mu), level, 1e-13)
    assert out[0] == 0.0
    for m, lv, e in zip(mu[1:], level[1:], out[1:], strict=True):
        ref = brentq(
            lambda x, m=m, lv=lv: float(gaussian_delta_mu(x, m)) - lv, 0.0, 50.0, xtol=1e-15
        )
        assert abs(e - ref) <= 1e-12 * max(1.0, ref)
        assert gaussian_delta_mu(e, m) <= lv * (1 + 1e-12)


def test_evaluating_the_running_points_alone_lands_on_the_same_roots() -> None:
    """``rows`` (the profile of the points still running only) changes the work, not the
    result: the roots equal those of the full-shape profile (the Gaussian profile, Balle & Wang
    2018, Thm. 8, at 400 shifts μ whose roots converge at different steps)."""
    mu = np.linspace(0.05, 8.0, 400)
    level = np.full_like(mu, 1e-5)
    calls: list[int] = []

    def rows(e: np.ndarray, index: np.ndarray) -> np.ndarray:
        calls.append(len(index))
        return gaussian_delta_mu(e, mu[index])

    full = smallest_epsilon(lambda e: gaussian_delta_mu(e, mu), level, 1e-12)
    alone = smallest_epsilon(lambda e: gaussian_delta_mu(e, mu), level, 1e-12, rows=rows)
    assert calls and max(calls) < mu.size  # the running points were evaluated alone
    np.testing.assert_allclose(alone, full, rtol=1e-15, atol=0.0)
