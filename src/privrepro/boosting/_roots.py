"""The vectorised root finder of the boosting accountants: one Illinois step for every point.

Figs. 2, 3 and 6 invert monotone privacy profiles at hundreds of settings at once (σ from
(ε₀, δ), ε from δ, ε after T compositions); each step here is one numpy call for all of them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["illinois_decreasing", "smallest_epsilon"]


def illinois_decreasing(
    fn: Callable[[np.ndarray], np.ndarray],
    target: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    xtol: float,
    maxiter: int = 100,
) -> np.ndarray:
    """Vectorised Illinois (modified regula falsi) root of ``log fn(x) = log target`` for ``fn``
    non-increasing with ``fn(lo) > target ≥ fn(hi)``; falls back to bisection steps when the
    secant stalls, and stops when every bracket is narrower than ``xtol`` (relative to max(1, x)).

    Returns the upper end of the final bracket: a point that meets the target.
    """
    log_t = np.log(target)

    def g(x: np.ndarray) -> np.ndarray:
        return np.log(np.maximum(fn(x), 1e-300)) - log_t

    glo, ghi = g(lo), g(hi)
    side = np.zeros(lo.shape, int)
    for it in range(maxiter):
        width = hi - lo
        if np.all(width <= xtol * np.maximum(1.0, np.abs(hi))):
            break
        denom = glo - ghi
        secant = np.where(
            denom > 0, lo + width * glo / np.where(denom > 0, denom, 1.0), 0.5 * (lo + hi)
        )
        # a bisection step every 12th iteration guards against a stalled secant
        x = np.where(
            (it % 12 == 11) | ~np.isfinite(secant) | (secant <= lo) | (secant >= hi),
            0.5 * (lo + hi),
            secant,
        )
        gx = g(x)
        over = gx > 0
        lo = np.where(over, x, lo)
        glo = np.where(over, gx, np.where(side == -1, glo / 2, glo))
        hi = np.where(over, hi, x)
        ghi = np.where(over, np.where(side == 1, ghi / 2, ghi), gx)
        side = np.where(over, 1, -1)
    return hi


def smallest_epsilon(
    profile: Callable[[np.ndarray], np.ndarray], level: np.ndarray, xtol: float
) -> np.ndarray:
    """Smallest ``ε ≥ 0`` with ``profile(ε) ≤ level``, elementwise, for a non-increasing profile
    δ(ε) (0 where ``δ(0) ≤ level``): the upper bracket is doubled from 1, then
    :func:`illinois_decreasing` narrows it to ``xtol``."""
    hi = np.ones_like(level)
    for _ in range(60):
        big = profile(hi) > level
        if not big.any():
            break
        hi = np.where(big, hi * 2, hi)
    zero = np.zeros_like(hi)
    ok0 = profile(zero) <= level
    out = illinois_decreasing(profile, level, np.where(ok0, -1.0, zero), hi, xtol)
    return np.where(ok0, 0.0, out)
