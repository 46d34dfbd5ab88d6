"""The privacy-loss distribution that composes PB-DP over the whole neighbouring relation.

T releases may each use a different neighbouring pair, so the composition is that of a
*dominating pair* (Zhu, Dong & Wang 2022, AISTATS, Prop. 8 and Thm. 10): the pair whose
hockey-stick curve is the supremum profile ``δ*(ε)`` over every neighbouring pair, both orders
(:func:`supremum_profile`), discretised pessimistically by connect-the-dots (Doroshenko et al.
2022) and composed by :func:`privrepro.dp.pld.compose_every_t`. Absolute region: the paper's pair
``(0, Δ)`` is every pair, so its composition is exact. Relative and fixed regions: exact at
T = 1, an upper bound at T > 1 (the T-fold composition of one pair is a lower bound).

Proofs and what is a bound: docs/pb.md, "Composing over every pair".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privrepro.boosting.exact import (
    exact_pld,
    exact_plds_connect_dots,
    exact_profile,
    first_crossing,
)
from privrepro.boosting.kernels import GaussianKernel
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.regions import AbsoluteRegion
from privrepro.dp.checks import check_range
from privrepro.dp.pld import DiscretePLD, connect_the_dots, from_profile

__all__ = [
    "checked_convex",
    "dominating_pld_dp_accounting",
    "dominating_plds",
    "supremum_profile",
]


def dominating_plds(
    mech: BoostedMechanism,
    sensitivity: float,
    interval: float = 1e-2,
    tail_mass: float = 1e-15,
    n_pairs: int = 9,
) -> tuple[DiscretePLD, ...]:
    """The privacy-loss distributions whose composition bounds PB-DP's composed ε over every
    neighbouring pair (module docstring), on the grid ``k · interval``.

    Args:
        mech: the mechanism (any kernel; the supremum is a full search only for the Gaussian).
        sensitivity: Δ, the largest distance of two neighbouring true values.
        interval: the loss grid (the result over-states ε by at most ``T · interval``).
        tail_mass: the profile level above which the grid ends (the rest goes to ``+∞``).
        n_pairs: starts of the relative region's near search (:meth:`Region.exact_pairs`).

    Returns:
        The absolute region: its pair ``(0, Δ)`` in both orders (exact, as before). Any other
        region: one distribution, the connect-the-dots discretisation of the supremum profile
        ``δ*`` on ``[−ε_top, ε_top]``, ``δ*(ε_top) = tail_mass``.
    """
    check_range("sensitivity", sensitivity, gt=0)
    check_range("interval", interval, gt=0, lt=1)
    if isinstance(mech.region, AbsoluteRegion):
        c, c2 = mech.region.paper_pair(sensitivity)
        return exact_plds_connect_dots(mech, c, c2, interval, tail_mass)
    profile = supremum_profile(mech, sensitivity, n_pairs)
    top = first_crossing(profile, tail_mass)
    return (checked_convex(from_profile(profile, interval, -top, max(top, interval))),)


DENSE_STEP = 0.25
"""Step, in kernel scales of the region end's distance, of the relative region's fixed pair grid
(twice as fine as the single-release search's :data:`~privrepro.boosting.worst_pairs.STEP`)."""
REFINED_EVERY = 4
"""The per-ε refined worst start of every this many ε of a profile joins the fixed pair set."""
BLOCK = 256
"""ε values per block of the fixed-pair evaluation (memory: block × pairs × 10 cells)."""


def supremum_profile(
    mech: BoostedMechanism, sensitivity: float, n_pairs: int = 9
) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
    """``δ*(ε)`` as a maximum over one *fixed* set of pairs for every ε (and, relative region,
    the tail bound beyond the reach), so that the result is convex in ``e^ε`` like the true
    supremum (a per-ε search that finds the worst pair at one ε and misses it at the next is
    not). The set, for a Gaussian kernel: the single-release search's grid
    (:func:`~privrepro.boosting.worst_pairs.pair_starts`), the same grid at step
    :data:`DENSE_STEP`, and the refined worst start
    (:meth:`~privrepro.boosting.exact_batch.GaussianPBBatch.worst_delta`'s search) at every
    :data:`REFINED_EVERY`-th ε asked for. Another kernel: :func:`exact_profile` (its pairs are
    already one fixed set)."""
    if not isinstance(mech.kernel, GaussianKernel):
        return exact_profile(mech, sensitivity, n_pairs)
    from privrepro.boosting.exact_batch import GaussianPBBatch
    from privrepro.boosting.pair_pieces import pair_deltas, prepare_pieces
    from privrepro.boosting.worst_pairs import relative_tail_delta

    one = GaussianPBBatch.from_mechanism(mech, sensitivity, n_pairs)
    dense = one.starts_for(one.reach, DENSE_STEP)

    def profile(eps: NDArray[np.float64]) -> NDArray[np.float64]:
        e = np.atleast_1d(np.asarray(eps, float))
        picked = e[::REFINED_EVERY]
        batch = GaussianPBBatch.from_mechanism(mech, sensitivity, n_pairs, copies=len(picked))
        values = pair_deltas(batch.pieces, batch.sigma, picked)

        def f(st: NDArray[np.float64]) -> NDArray[np.float64]:
            return np.asarray(np.max(pair_deltas(batch._at(st), batch.sigma, picked), axis=-1))

        refined: NDArray[np.float64] = (
            batch._refine_start(values, f)[0] if batch.starts.shape[1] > 1 else np.empty(0)
        )
        starts = np.unique(np.concatenate([one.starts[0], dense[0], np.asarray(refined)]))
        out = np.empty(len(e))
        for i in range(0, len(e), BLOCK):
            block = e[i : i + BLOCK]
            n = len(block)
            rows = np.ones(n)
            st = np.broadcast_to(starts, (n, len(starts)))
            pieces = prepare_pieces(
                one.case,
                one.sigma[0] * rows,
                one.q[0] * rows,
                one.size[0] * rows,
                one.theta[0] * rows,
                st,
                st + one.d[0],
            )
            out[i : i + n] = np.max(pair_deltas(pieces, one.sigma[0] * rows, block), axis=-1)
        if one.case == "relative":
            ones = np.ones(len(e))
            tail = relative_tail_delta(
                e,
                one.sigma[0] * ones,
                one.sensitivity[0] * ones,
                one.q[0] * ones,
                one.reach[0] * ones,
            )
            out = np.maximum(out, tail)
        return out

    return profile


CONVEXITY_SLACK = 1e-9
"""Largest total negative mass connect-the-dots may clip (round-off) before the profile counts as
not convex in ``e^ε``."""


def checked_convex(pld: DiscretePLD) -> DiscretePLD:
    """``pld`` unchanged if its masses sum to 1 within :data:`CONVEXITY_SLACK`; else an error.

    A supremum of hockey-stick curves is convex in ``e^ε``, so connect-the-dots on it has no
    negative mass. Negative mass (clipped to 0, so the masses sum above 1) means the computed
    profile dips below the supremum between its neighbours: the pair search missed the worst
    pair at some ε, and neither the profile nor its composition would be a valid bound.
    """
    excess = float(pld.probs.sum() + pld.infinity_mass - 1.0)
    if excess > CONVEXITY_SLACK:
        raise ArithmeticError(
            f"privacy profile not convex in e^ε (clipped mass {excess:.3g} > {CONVEXITY_SLACK:g}): "
            "the neighbouring-pair search missed the worst pair at some ε"
        )
    return pld


def dominating_pld_dp_accounting(
    mech: BoostedMechanism,
    sensitivity: float,
    interval: float = 1e-3,
    tail_mass: float = 1e-15,
    n_pairs: int = 9,
) -> Any:
    """The same dominating pair as a ``dp_accounting`` ``PrivacyLossDistribution`` (its own
    pessimistic connect-the-dots, ``pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap``, on
    the same profile), to check :func:`dominating_plds` composed by
    :func:`privrepro.dp.pld.compose_every_t`. The absolute region: ``dp_accounting``'s
    bucketing of the pair ``(0, Δ)`` (:func:`privrepro.boosting.exact.exact_pld`), as before."""
    check_range("sensitivity", sensitivity, gt=0)
    check_range("interval", interval, gt=0, lt=1)
    if isinstance(mech.region, AbsoluteRegion):
        c, c2 = mech.region.paper_pair(sensitivity)
        return exact_pld(mech, c, c2, interval, tail_mass)
    from dp_accounting.pld import pld_pmf
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    profile = supremum_profile(mech, sensitivity, n_pairs)
    top = first_crossing(profile, tail_mass)
    k_lo, k_hi = int(np.floor(-top / interval)), int(np.ceil(max(top, interval) / interval))
    grid = np.asarray(np.arange(k_lo, k_hi + 1) * interval, dtype=np.float64)
    deltas = np.minimum.accumulate(np.clip(np.asarray(profile(grid), float), 0.0, 1.0))
    checked_convex(
        connect_the_dots(interval, k_lo, deltas)
    )  # the same masses, before dp_accounting's
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(interval, k_lo, k_hi, deltas)
    return PrivacyLossDistribution(pmf)
