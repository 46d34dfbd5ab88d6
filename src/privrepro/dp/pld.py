"""Privacy-loss distributions on a grid, and their T-fold composition for every T in one pass.

A mechanism's privacy loss ``L = log(p(Y)/q(Y))``, ``Y ~ P``, determines its privacy profile
``δ(ε) = E[(1 − e^{ε − L})_+]``, and the loss of T independent releases is the sum of T losses,
so composition is convolution (Dwork & Rothblum 2016; Koskela, Jälkö & Honkela 2020). A loss
distribution lives on the grid ``k·h`` (:class:`DiscretePLD`): :func:`connect_the_dots` builds it
from a mechanism's exact profile (Doroshenko et al. 2022, Algorithm 1 with a fixed gap: a
pessimistic discretisation); :func:`compose_every_t` composes it for T = 1 … t_max by successive
FFT convolutions with pessimistic tail cuts and reads ε at each δ of every T exactly. Every ε
returned is an upper bound on the true composed ε, over-stating it by at most ``T·h`` (the error
and why: ``docs/dp.md``, "privrepro.dp.pld").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privrepro.config import ConfigError
from privrepro.dp.checks import check_range
from privrepro.loops import PLAIN, Loops

__all__ = [
    "DiscretePLD",
    "compose_every_t",
    "compose_power",
    "connect_the_dots",
    "from_profile",
]


@dataclass(frozen=True)
class DiscretePLD:
    """A privacy-loss distribution on the grid ``(offset + i) · interval``, ``i = 0 … len−1``.

    ``probs[i]`` is the probability of loss ``(offset + i) · interval`` under the first
    distribution of the pair; ``infinity_mass`` the probability of an infinite loss (an output
    the second distribution cannot produce). One direction of a neighbouring pair: the other
    direction (add vs remove) is a second ``DiscretePLD``.
    """

    interval: float
    offset: int
    probs: NDArray[np.float64] = field(repr=False)
    infinity_mass: float = 0.0

    @property
    def losses(self) -> NDArray[np.float64]:
        """The grid of losses ``(offset + i) · interval``."""
        return np.asarray((self.offset + np.arange(len(self.probs))) * self.interval, float)

    def delta_for_epsilon(self, epsilon: ArrayLike) -> NDArray[np.float64]:
        """``δ(ε) = ∞-mass + Σ_k p_k (1 − e^{ε − l_k})_+`` at each ε (any real ε)."""
        eps = np.atleast_1d(np.asarray(epsilon, float))
        losses = self.losses
        with np.errstate(over="ignore"):
            terms = np.clip(-np.expm1(eps[:, None] - losses[None, :]), 0.0, None)
        return np.asarray(self.infinity_mass + terms @ self.probs)

    def epsilon_for_delta(self, delta: ArrayLike) -> NDArray[np.float64]:
        """Smallest ``ε ≥ 0`` with ``δ(ε) ≤ delta``, for each δ (``inf`` when the ∞-mass exceeds
        it); exact for the grid distribution (no search)."""
        return _epsilon_for_delta(
            self.probs, self.offset, self.interval, self.infinity_mass, np.atleast_1d(delta)
        )


def connect_the_dots(interval: float, offset: int, deltas: ArrayLike) -> DiscretePLD:
    """The pessimistic connect-the-dots distribution (Doroshenko et al. 2022, Algorithm 1, fixed
    gap) from a mechanism's exact profile ``deltas[i] = δ((offset + i) · interval)``.

    With ``d = interval`` and ``δ_1 … δ_n`` the profile on the grid: mass
    ``1 − δ_1 + (δ_2 − δ_1)/(e^d − 1)`` at the first point, ``((δ_{i+1} − δ_i) − e^d (δ_i −
    δ_{i−1}))/(e^d − 1)`` inside, ``(δ_n − δ_{n−1})/(e^{−d} − 1)`` at the last, ``δ_n`` at ``+∞``
    (the same formulas as ``dp_accounting.pld.pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap``;
    negative round-off clipped to 0 as there). Any range is pessimistic; a range whose ends carry
    little mass (``δ_n`` small, little loss below the first point) keeps it tight.
    """
    h = float(check_range("interval", interval, gt=0))
    d = np.minimum.accumulate(np.asarray(deltas, float))
    if d.ndim != 1 or d.size < 2:
        raise ConfigError("deltas", f"{d.size} values", "need at least 2 grid points")
    if np.any(d < 0) or np.any(d > 1):
        raise ConfigError("deltas", "outside [0, 1]", "must lie in [0, 1]")
    diff = np.diff(d)
    probs = np.empty_like(d)
    probs[0] = 1.0 - d[0] + diff[0] / math.expm1(h)
    probs[1:-1] = (diff[1:] - diff[:-1] * math.exp(h)) / math.expm1(h)
    probs[-1] = diff[-1] / math.expm1(-h)
    return DiscretePLD(h, int(offset), np.maximum(probs, 0.0), float(d[-1]))


def from_profile(
    profile: Callable[[NDArray[np.float64]], ArrayLike],
    interval: float,
    epsilon_low: float,
    epsilon_high: float,
) -> DiscretePLD:
    """:func:`connect_the_dots` of ``profile`` (δ as a vectorised function of ε) on the grid
    points of ``[epsilon_low, epsilon_high]`` (ends rounded outwards to the grid)."""
    h = float(check_range("interval", interval, gt=0))
    if not epsilon_high > epsilon_low:
        raise ConfigError("epsilon_high", epsilon_high, f"must exceed epsilon_low = {epsilon_low}")
    k_lo, k_hi = math.floor(epsilon_low / h), math.ceil(epsilon_high / h)
    grid = np.asarray(np.arange(k_lo, k_hi + 1) * h, float)
    return connect_the_dots(h, k_lo, np.clip(np.asarray(profile(grid), float), 0.0, 1.0))


def compose_every_t(
    plds: Sequence[DiscretePLD],
    t_max: int,
    deltas: ArrayLike,
    tail_mass: float = 1e-15,
    loops: Loops = PLAIN,
) -> NDArray[np.float64]:
    """ε at each δ of the T-fold composition, for every T = 1 … ``t_max``, in one pass.

    Args:
        plds: the directions of the neighbouring relation (e.g. remove and add); the ε of a T is
            the largest over them. All on the same grid interval.
        deltas: the δ values to read ε at.
        tail_mass: the mass cut from each tail after each convolution (pessimistically: the
            lower tail moved up to the window, the upper tail to ``+∞``); adds at most
            ``2·T·tail_mass`` to δ.
        loops: runs the loop over T (``"exact PLD at every T"``; :mod:`privrepro.loops`);
            loops that stop early shorten the result to the T they ran.

    Returns:
        ``[t_max, len(deltas)]`` upper bounds on the composed ε (module docstring: error); fewer
        rows (T = 1 … the last T reached) when ``loops`` stopped the loop early.
    """
    check_range("t_max", t_max, ge=1)
    check_range("tail_mass", tail_mass, ge=0, lt=1)
    d = np.atleast_1d(check_range("deltas", deltas, gt=0, lt=1))
    if not plds:
        raise ConfigError("plds", "[]", "need at least one direction")
    h = plds[0].interval
    if any(not math.isclose(p.interval, h, rel_tol=1e-12) for p in plds):
        raise ConfigError("plds", [p.interval for p in plds], "must share one grid interval")
    out = np.full((int(t_max), len(d)), -np.inf)
    reached = int(t_max)
    for pld in _merge_close(list(plds)):
        one = _compose_one(pld, int(t_max), d, tail_mass, loops)
        reached = min(reached, len(one))
        out[: len(one)] = np.maximum(out[: len(one)], one)
    return out[:reached]


MERGE_TOLERANCE = 1e-12
"""Directions whose probabilities differ by at most this in total are composed once, as their
pointwise maximum (more mass everywhere: pessimistic for both; adds at most
``(1 + 1e-12)^T − 1`` to δ)."""


def _merge_close(plds: list[DiscretePLD]) -> list[DiscretePLD]:
    """Directions that are the same up to round-off (a symmetric pair) as one, pessimistically."""
    out: list[DiscretePLD] = []
    for p in plds:
        for i, q in enumerate(out):
            if p.offset == q.offset and len(p.probs) == len(q.probs):
                gap = float(
                    np.abs(p.probs - q.probs).sum() + abs(p.infinity_mass - q.infinity_mass)
                )
                if gap <= MERGE_TOLERANCE:
                    out[i] = DiscretePLD(
                        q.interval,
                        q.offset,
                        np.maximum(p.probs, q.probs),
                        max(p.infinity_mass, q.infinity_mass),
                    )
                    break
        else:
            out.append(p)
    return out


def compose_power(pld: DiscretePLD, t: int) -> DiscretePLD:
    """The T-fold composition by one FFT power, no tail cut: a reference for one T (its support,
    ``T·(len − 1) + 1`` points, is held whole; the FFT round-off is the only error)."""
    from scipy import fft

    check_range("t", t, ge=1)
    n = int(t) * (len(pld.probs) - 1) + 1
    size = fft.next_fast_len(n, real=True)
    probs = fft.irfft(fft.rfft(pld.probs, size) ** int(t), size)[:n]
    inf = 1.0 - (1.0 - pld.infinity_mass) ** int(t)
    return DiscretePLD(pld.interval, int(t) * pld.offset, np.maximum(probs, 0.0), inf)


def _compose_one(
    pld: DiscretePLD,
    t_max: int,
    deltas: NDArray[np.float64],
    tail_mass: float,
    loops: Loops,
) -> NDArray[np.float64]:
    from scipy import fft

    base = np.asarray(pld.probs, float)
    base_inf = pld.infinity_mass
    spectra: dict[int, NDArray[np.complex128]] = {}
    probs, offset, inf = _cut_tails(base.copy(), pld.offset, base_inf, tail_mass)
    out = np.empty((t_max, len(deltas)))
    out[0] = _epsilon_for_delta(probs, offset, pld.interval, inf, deltas)
    reached = 1
    for t in loops(range(2, t_max + 1), "exact PLD at every T", t_max - 1):
        reached = t
        n = len(probs) + len(base) - 1
        size = fft.next_fast_len(n, real=True)
        if size not in spectra:
            spectra[size] = fft.rfft(base, size)
        conv = fft.irfft(fft.rfft(probs, size) * spectra[size], size)[:n]
        np.maximum(conv, 0.0, out=conv)  # FFT round-off below zero: clipped (adds mass only)
        inf = 1.0 - (1.0 - inf) * (1.0 - base_inf)
        probs, offset, inf = _cut_tails(conv, offset + pld.offset, inf, tail_mass)
        out[t - 1] = _epsilon_for_delta(probs, offset, pld.interval, inf, deltas)
    return out[:reached]


def _cut_tails(
    probs: NDArray[np.float64], offset: int, inf: float, tail_mass: float, scan: int = 1024
) -> tuple[NDArray[np.float64], int, float]:
    """Move the lowest ``tail_mass`` up to the first kept point and the highest to ``+∞``.

    Only the ends are summed (``scan`` points, doubled until the mass exceeds ``tail_mass``): each
    convolution widens the tails by one base support, so the cut lies near the ends.
    """
    n = len(probs)
    if tail_mass <= 0 or n < 3:
        return probs, offset, inf
    low = _end_cumsum(probs, tail_mass, scan)
    high = _end_cumsum(probs[::-1], tail_mass, scan)
    lo = int(np.searchsorted(low, tail_mass, side="right"))  # probs[:lo] sum to <= tail_mass
    n_hi = int(np.searchsorted(high, tail_mass, side="right"))  # the last n_hi likewise
    hi = n - n_hi
    if hi - lo < 2:
        return probs, offset, inf
    kept = probs[lo:hi].copy()
    kept[0] += low[lo - 1] if lo > 0 else 0.0
    return kept, offset + lo, inf + (high[n_hi - 1] if n_hi > 0 else 0.0)


def _end_cumsum(x: NDArray[np.float64], level: float, scan: int) -> NDArray[np.float64]:
    """Cumulative sums of a prefix of ``x`` long enough to pass ``level`` (or all of ``x``)."""
    k = min(scan, len(x))
    while True:
        c = np.cumsum(x[:k])
        if c[-1] > level or k == len(x):
            return c
        k = min(2 * k, len(x))


def _discounted_suffix_sums(p: NDArray[np.float64], h: float) -> NDArray[np.float64]:
    """``S_m = Σ_{k≥m} p_k e^{−(k−m)h}`` for every m, in blocks short enough that no factor
    ``e^{±(k−m)h}`` overflows (the recursion ``S_m = p_m + e^{−h} S_{m+1}``, vectorised)."""
    n = len(p)
    block = max(1, int(300.0 / h))
    out = np.empty(n)
    carry = 0.0  # S at the first index of the block above
    for end in range(n, 0, -block):
        start = max(0, end - block)
        j = np.arange(end - start)
        w = np.exp(-j * h)
        local = np.cumsum((p[start:end] * w)[::-1])[::-1] / w
        out[start:end] = local + carry * np.exp(-(end - start - j) * h)
        carry = float(out[start])
    return out


def _epsilon_for_delta(
    probs: NDArray[np.float64],
    offset: int,
    h: float,
    inf: float,
    deltas: NDArray[np.float64],
    scan: int = 4096,
) -> NDArray[np.float64]:
    """Exact smallest ε ≥ 0 with ``δ(ε) ≤ δ`` for a grid distribution, for each δ.

    With ``S0_m = Σ_{k≥m} p_k`` and ``S1_m = Σ_{k≥m} p_k e^{l_m − l_k}`` (a first-order recursion
    from the top, no overflow), on ``(l_{m−1}, l_m]`` the profile is ``∞-mass + S0_m −
    e^{ε − l_m} S1_m``; the first grid point whose δ meets the target fixes the interval, solved
    in closed form. Both sums over ``k ≥ m`` need only the points above ``m``: a top part of
    ``scan`` points is summed, doubled until its lowest point's δ exceeds every target.
    """
    p = np.asarray(probs, float)
    n = len(p)
    a = math.exp(-h)
    top = float(np.max(deltas))
    k = min(scan, n)
    while True:
        tail = p[n - k :]
        s1 = _discounted_suffix_sums(tail, h)
        s0 = np.cumsum(tail[::-1])[::-1]
        # δ at the grid point l_m counts only k > m: S0_{m+1} − e^{-h} S1_{m+1}
        delta_at = inf + np.append(s0[1:], 0.0) - a * np.append(s1[1:], 0.0)
        if delta_at[0] > top or k == n:
            break
        k = min(4 * k, n)
    first = n - k  # index in probs of s0[0]
    out = np.empty(len(deltas))
    for j, target in enumerate(np.asarray(deltas, float)):
        if inf > target:
            out[j] = math.inf
            continue
        meets = np.flatnonzero(delta_at <= target)
        m = int(meets[0]) if meets.size else k - 1
        num = inf + s0[m] - target
        eps = (offset + first + m) * h + (
            math.log(num / s1[m]) if num > 0 and s1[m] > 0 else -math.inf
        )
        out[j] = max(eps, 0.0)
    return out
