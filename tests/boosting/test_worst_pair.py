"""The exact accountant is the supremum over every neighbouring pair, for each region of the pb
paper (Sec. 4): its ε at δ and its Rényi ε against a brute-force maximum of the scalar per-pair
divergences (:func:`exact_delta_pair`, :func:`exact_renyi_pair`, an implementation of their own)
over a wide grid of pairs, at the best design and at Algorithm 2's design.

The grid: starts ``s`` of pairs ``(s, s + d)`` in both orders, negative and positive, with the
relative region's end ``θ|s| + τ`` up to 40 kernel scales plus the Rényi-tilted centre's reach
``αΔ`` (thousands of σ and of |S|: the worst pair of a relative region lies far from 0), the
distance ``d = Δ`` and, on a coarser grid, ``d = Δ/2`` (the accountant takes pairs at the
largest distance). A fixed region's true values lie in ``S``.
"""

from __future__ import annotations

import numpy as np
import pytest

from privrepro.boosting import exact
from privrepro.boosting.design import PBSetting, optimise_eps0
from privrepro.boosting.exact_design import best_design
from privrepro.boosting.mechanism import BoostedMechanism

RHO, DELTA_ = 0.9, 1.0


def _starts(case: str, mech: BoostedMechanism, d: float, reach: float, n: int) -> np.ndarray:
    size = mech.region.size()
    if case == "fixed":
        lo, hi = -size / 2, size / 2 - min(d, size)
        return np.linspace(lo, hi, n)
    if case == "absolute":  # translation invariant: a few positions far apart suffice
        return np.linspace(-50 * size, 50 * size, 7)
    sigma, tau, theta = mech.kernel.scale, size / 2, 0.05
    z = np.linspace(0.0, reach, n)
    far = np.maximum((sigma * z - tau) / theta, 0.0)
    return np.concatenate([np.linspace(-2 * d, d, 13), far, -far - d])


def _brute(
    case: str, mech: BoostedMechanism, epsilon: float, alpha: float
) -> tuple[np.ndarray, float]:
    """Largest δ at ``epsilon`` and at ``epsilon − 1e-3``, and largest Rényi divergence of
    order α, over the grid."""
    sigma = mech.kernel.scale
    worst_delta, worst_renyi = np.zeros(2), -np.inf
    eps = np.array([epsilon, max(epsilon - 1e-3, 0.0)])
    for d, n in ((DELTA_, 240), (DELTA_ / 2, 40)):
        reach = 40.0 + alpha * d / sigma
        for s in _starts(case, mech, d, reach, n):
            for a, b in ((s, s + d), (s + d, s)):
                worst_delta = np.maximum(worst_delta, exact.exact_delta_pair(mech, a, b, eps))
                worst_renyi = max(worst_renyi, exact.exact_renyi_pair(mech, a, b, alpha))
    return worst_delta, worst_renyi


def _designs(case: str, alpha: float) -> list[tuple[str, BoostedMechanism]]:
    dp = PBSetting(case, RHO, DELTA_, 10.0, delta=1e-5, exact_pairs=5)
    rdp = PBSetting(case, RHO, DELTA_, 10.0, notion="rdp", alpha=alpha, exact_pairs=5)
    return [
        ("best design (δ)", dp.mechanism_sigma(best_design(dp).sigma)),
        ("Algorithm 2 (α)", rdp.mechanism(optimise_eps0(rdp).eps0)),
    ]


@pytest.mark.parametrize(
    ("case", "alpha"), [("relative", 100.0), ("fixed", 10.0), ("absolute", 10.0)]
)
def test_the_exact_accountant_is_the_supremum_over_every_pair(case: str, alpha: float) -> None:
    """Fig. 2's setting (ρ = 0.9, Δ = 1, |S| = 10, δ = 1e-5; α = 100 for the relative region,
    where the worst pair is furthest out), at the best design for δ and at Algorithm 2's design
    for α (both notions checked at each). The accountant's ε is valid (no pair of the grid
    has δ above 1e-5 there, up to 1e-6 relative: the root finder's tolerance) and tight (some
    pair exceeds 1e-5 at ε − 1e-3: the grid reaches it); its Rényi ε is at least the grid's
    maximum (up to rounding, 1e-9) and within 1e-3 of it (the grid samples what the
    accountant refines)."""
    for label, mech in _designs(case, alpha):
        eps = exact.exact_epsilon(mech, DELTA_, 1e-5, 5)
        rdp = exact.exact_rdp(mech, DELTA_, alpha, 5)
        (top_delta, below), top_renyi = _brute(case, mech, eps, alpha)
        assert top_delta <= 1e-5 * (1 + 1e-6), (label, eps, top_delta)
        if eps > 1e-3:
            assert below > 1e-5, (label, eps, below)
        assert rdp >= top_renyi - 1e-9, (label, rdp, top_renyi)
        assert rdp <= top_renyi + 1e-3 * abs(top_renyi) + 1e-12, (label, rdp, top_renyi)


def test_the_worst_relative_pair_lies_far_from_zero() -> None:
    """The premise that the worst pairs straddle 0 fails: Fig. 2(a)'s relative setting at
    σ = 8 (q = 0.90), the worst pair of the grid starts hundreds of units out, and the pairs in
    ``[−Δ, 0]`` alone understate the ε."""
    s = PBSetting("relative", RHO, DELTA_, 10.0, delta=1e-5, exact_pairs=5)
    mech = s.mechanism_sigma(8.0)
    eps = exact.exact_epsilon(mech, DELTA_, 1e-5, 5)
    near = max(
        exact.first_crossing(lambda e, a=a, b=b: exact.exact_delta_pair(mech, a, b, e), 1e-5)
        for a0 in np.linspace(-1.0, 0.0, 5)
        for a, b in ((a0, a0 + 1.0), (a0 + 1.0, a0))
    )
    assert eps > near + 0.1
    assert float(exact.exact_delta_pair(mech, 430.0, 431.0, near)) > 1e-5
