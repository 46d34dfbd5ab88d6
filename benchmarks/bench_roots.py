"""The boosting accountants' root finder: SciPy's elementwise ``find_root`` (Chandrupatla) in
:func:`privrepro.boosting._roots.decreasing_root` against the vectorised Illinois loop it
replaced (kept here as the baseline, straw man), on the pb figures' own calls.

Rows (best of ``repeats`` each, both on the same inputs, side by side):

- Fig. 6's paper curve: ε at δ = 1e-5 after T compositions, every T ≤ 1000, one root per T;
- pb Figs. 2–3's grid: the paper's ε (Prop. 1, analytic σ: two root finds per point) at 300 ρ ×
  20 |S|;
- a small call: the same at 6 points (SciPy's per-call overhead dominates there);

each with the largest difference between the two roots, relative to ``max(1, |ε|)`` (both stop
at a bracket narrower than the caller's ``xtol``, 1e-10 to 1e-13).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from privrepro.benchmark_harness import row
from privrepro.boosting import _roots, accounting, batch
from privrepro.boosting.design import PBSetting, optimise_eps0
from privrepro.boosting.gaussian_mu import gaussian_delta_mu


def illinois_decreasing(
    fn: Callable[[np.ndarray], np.ndarray],
    target: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    xtol: float,
    maxiter: int = 100,
    rows: object = None,
) -> np.ndarray:
    """The former root finder: vectorised Illinois (modified regula falsi) on ``log fn``, a
    bisection step every 12th iteration; returns the upper end of the final bracket. ``rows``
    (the profile on some points only) is ignored: it evaluates every point each step."""
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


def _with_root_finder(finder: Callable[..., np.ndarray], call: Callable[[], Any]) -> Any:
    """Run ``call`` with the accountants' root finder swapped for ``finder`` (given back)."""
    saved = _roots.decreasing_root
    targets = (_roots, batch, accounting)
    try:
        for module in targets:
            module.decreasing_root = finder  # type: ignore[attr-defined]
        return call()
    finally:
        for module in targets:
            module.decreasing_root = saved  # type: ignore[attr-defined]


def _best(call: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = call()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _cases(quick: bool) -> list[tuple[str, Callable[[], Any]]]:
    s = PBSetting("absolute", 0.9, 3.0, 10.0)
    mech = s.mechanism(optimise_eps0(s).eps0)
    terms, sig = mech.paper_terms(3.0), mech.kernel.scale
    t_max = 100 if quick else 1000
    ts = np.arange(1, t_max + 1)
    n_rho = 30 if quick else 300
    rho = np.linspace(0.5, 0.99, n_rho)[:, None]
    size = np.linspace(1.0, 20.0, 20)[None, :]
    few = np.array([0.6, 0.7, 0.8, 0.9, 0.95, 0.99])
    return [
        (
            f"pb Fig. 6 paper curve, every T <= {t_max}",
            lambda: accounting.composition_epsilon_curve(
                terms, lambda e, t: gaussian_delta_mu(e, 3.0 * np.sqrt(t) / sig), ts, 1e-5
            ),
        ),
        (
            f"pb Figs. 2-3 paper epsilon, {n_rho} x 20 points",
            lambda: batch.paper_epsilon_batch("absolute", "dp", rho, 1.0, size, 1e-5, 1.0),
        ),
        (
            "paper epsilon, 6 points",
            lambda: batch.paper_epsilon_batch("absolute", "dp", few, 1.0, 10.0, 1e-5, 1.0),
        ),
    ]


def bench(device: str = "cpu", quick: bool = False) -> list[dict[str, Any]]:
    repeats = 2 if quick else 5
    rows = []
    for name, call in _cases(quick):
        t_ill, ref = _best(lambda call=call: _with_root_finder(illinois_decreasing, call), repeats)
        t_sci, out = _best(call, repeats)
        ref, out = np.asarray(ref, float), np.asarray(out, float)
        diff = float(np.max(np.abs(out - ref) / np.maximum(1.0, np.abs(ref))))
        rows.append(
            row(
                "pb root finder (scipy find_root)",
                name,
                t_sci,
                "s",
                t_ill,
                "the former vectorised Illinois loop",
                "straw man",
                f"largest difference between the two roots {diff:.1e} (relative to max(1, |x|))",
                max_rel_difference=diff,
            )
        )
    return rows


if __name__ == "__main__":
    for r in bench():
        print(r)
