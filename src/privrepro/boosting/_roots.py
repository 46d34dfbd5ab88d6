"""The vectorised root finder of the boosting accountants, on SciPy's elementwise root finder.

Figs. 2, 3 and 6 invert monotone privacy profiles at hundreds of settings at once (σ from
(ε₀, δ), ε from δ, ε after T compositions). :func:`scipy.optimize.elementwise.find_root`
(Chandrupatla's bracketing method, SciPy ≥ 1.15) solves all of them in one loop of numpy calls.
Two things are added here: the profiles are closures over arrays of the full shape, while
``find_root`` evaluates only the points still running (so each evaluation scatters them into a
full-shape array and evaluates every point, as a plain vectorised loop does); and a privacy
accountant needs a point that *meets* the target (``fn(x) ≤ target``), not the point nearest the
root, so the result is the smallest point of the final bracket that meets it.

Speed, against the vectorised Illinois loop this replaced (``benchmarks/bench_roots.py``, each
root find of pb Figs. 2, 3 and 6 in ``smoke`` run by both back to back): faster on the large
calls (Fig. 6's curve, every T ≤ 1000) and over the figures as a whole, slower on calls of a
few points, where SciPy's fixed cost per call (about 2 ms) dominates.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import elementwise

__all__ = ["decreasing_root", "smallest_epsilon"]

_FLOOR = 1e-300  # log of a profile that underflowed to 0: far below any target
ROW_SHARE = 0.7
"""With ``rows`` given, the points still running are evaluated alone once they are fewer than
this share of all (below it, gathering their rows costs less than evaluating every point)."""

Rows = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``rows(x, index)``: the profile at ``x`` of the flat points ``index`` only (``x[i]`` for
point ``index[i]``), the same numbers as the full-shape profile gives there."""


def decreasing_root(
    fn: Callable[[np.ndarray], np.ndarray],
    target: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    xtol: float,
    maxiter: int = 100,
    rows: Rows | None = None,
) -> np.ndarray:
    """The root of ``log fn(x) = log target``, elementwise, for ``fn`` non-increasing with
    ``fn(lo) > target ≥ fn(hi)``, to within ``xtol`` relative to ``max(1, |x|)``.

    Args:
        fn: the profile, called with an array of ``lo``'s shape.
        target: the level to reach (broadcast to ``lo``'s shape).
        lo, hi: a bracket of every root.
        xtol: the final bracket's width, relative to ``max(1, |x|)``.
        maxiter: at most this many steps.
        rows: ``fn`` on some points only (:data:`Rows`), used once few points still run.

    Returns:
        A point with ``fn(x) ≤ target`` within ``xtol`` of the root (``hi`` for a bad bracket).
    """
    lo, hi = np.broadcast_arrays(np.asarray(lo, float), np.asarray(hi, float))
    shape = lo.shape
    log_t = np.broadcast_to(np.log(np.asarray(target, float)), shape).reshape(-1)
    points = np.array(hi, dtype=float)  # every point's current abscissa, full shape
    flat = points.reshape(-1)

    def g(x: np.ndarray, index: np.ndarray, level: np.ndarray) -> np.ndarray:
        flat[index] = x
        if rows is not None and len(index) < ROW_SHARE * flat.size:
            values = np.asarray(rows(x, index), float).reshape(-1)
        else:
            values = np.asarray(fn(points), float).reshape(-1)[index]
        return np.log(np.maximum(values, _FLOOR)) - level

    res = elementwise.find_root(
        g,
        (lo.reshape(-1), hi.reshape(-1)),
        args=(np.arange(lo.size), log_t),
        # |xr − xl| < xatol + |x|·xrtol = xtol·(1 + |x|)/2 ≤ xtol·max(1, |x|)
        tolerances={"xatol": xtol / 2, "xrtol": xtol / 2, "fatol": 0.0, "frtol": 0.0},
        maxiter=maxiter,
    )
    (xl, xr), g_xl = res.bracket, res.f_bracket[0]
    # the root where it was hit (g ≤ 0 there), else the bracket's end on the target's side
    meets = np.where(res.f_x <= 0, res.x, np.where(g_xl <= 0, xl, xr))
    ok = np.isfinite(meets) & (res.status != -1)
    return np.where(ok, meets, hi.reshape(-1)).reshape(shape)


def smallest_epsilon(
    profile: Callable[[np.ndarray], np.ndarray],
    level: np.ndarray,
    xtol: float,
    rows: Rows | None = None,
) -> np.ndarray:
    """Smallest ``ε ≥ 0`` with ``profile(ε) ≤ level``, elementwise, for a non-increasing profile
    δ(ε) (0 where ``δ(0) ≤ level``): the upper bracket is doubled from 1, then
    :func:`decreasing_root` narrows it to ``xtol`` (``rows``: the profile on some points only,
    :data:`Rows`)."""
    hi = np.ones_like(level)
    for _ in range(60):
        big = profile(hi) > level
        if not big.any():
            break
        hi = np.where(big, hi * 2, hi)
    zero = np.zeros_like(hi)
    ok0 = profile(zero) <= level
    out = decreasing_root(profile, level, np.where(ok0, -1.0, zero), hi, xtol, rows=rows)
    return np.where(ok0, 0.0, out)
