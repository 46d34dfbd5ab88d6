"""Choosing ε₀ for PB-GRR: the estimators' MSE over a grid of ε₀ and the best ε₀ (pb Sec. 5.5,
Fig. 7, eqs. 10–11).

Users' values form a histogram over a domain split into categories of ``|S|`` consecutive values;
under ε-LDP, PB-GRR (Prop. 7) trades the category-frequency estimator (eq. 10) against the
value-frequency one (eq. 11) through ε₀ ∈ [0, ε] (``ε₀ = ε`` is plain GRR).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from privrepro.boosting._checks import check_choice, check_range
from privrepro.boosting.grr import (
    GRRProbabilities,
    analytic_mse,
    block_partition,
    grr_probabilities,
    monte_carlo_mse,
)
from privrepro.config import ConfigError
from privrepro.loops import PLAIN, Loops

__all__ = ["best_eps0", "grr_mse_curve"]


def grr_mse_curve(
    histogram: np.ndarray,
    epsilon: float,
    set_size: int,
    *,
    eps0_points: int = 51,
    partition: str = "pad",
    mse_scale: str = "counts",
    mc_repetitions: int = 0,
    mc_stride: int = 1,
    rng: np.random.Generator | None = None,
    loops: Loops = PLAIN,
) -> pd.DataFrame:
    """MSE of eqs. (10) and (11) at ``eps0_points`` values of ε₀ evenly spaced on ``[0, ε]``.

    Args:
        histogram: true counts per domain value.
        set_size: ``|S|``; categories are consecutive blocks (``partition``: ``"pad"`` extends the
            domain with never-held values to a multiple of ``|S|``, ``"last_short"`` does not;
            the analytic MSE needs ``"pad"``, where the estimators are unbiased).
        mse_scale: ``"counts"`` or ``"frequencies"`` (counts / N).
        mc_repetitions: Monte Carlo repetitions at every ``mc_stride``-th ε₀ and the last one
            (0: analytic only); ``rng`` draws the reports.

    Returns:
        Rows ``set_size, eps0, estimator, method, mse, se, rho, users, domain_size``: estimator
        ``category`` or ``value``, method ``analytic`` or ``monte_carlo`` (``se``: its standard
        error), ``rho`` the in-category mass of Remark 5.
    """
    check_range("epsilon", epsilon, gt=0)
    check_range("eps0_points", eps0_points, ge=2)
    check_choice("mse_scale", mse_scale, ("counts", "frequencies"))
    check_range("mc_repetitions", mc_repetitions, ge=0)
    check_range("mc_stride", mc_stride, ge=1)
    if mc_repetitions > 0 and rng is None:
        raise ConfigError("rng", rng, "must be a numpy Generator when mc_repetitions > 0")
    hist = np.asarray(histogram)
    s = int(set_size)
    cat, size = block_partition(hist.size, s, partition)
    full = np.zeros(size, dtype=int)
    full[: hist.size] = hist
    N = int(full.sum())
    scale = 1.0 if mse_scale == "counts" else 1.0 / N**2
    eps = float(epsilon)
    grid = np.linspace(0.0, eps, int(eps0_points))
    rows = []
    for i, e0 in enumerate(loops(grid, f"pb PB-GRR |S|={s}")):
        g = grr_probabilities(eps, float(e0), size, s)
        if partition == "pad":
            m_cat, m_val = analytic_mse(full, cat, g)
            rows += _rows(e0, g, "analytic", (m_cat * scale, 0.0), (m_val * scale, 0.0))
        if mc_repetitions > 0 and (i % int(mc_stride) == 0 or i == len(grid) - 1):
            draws = int(mc_repetitions)
            mc, sc, mv, sv = monte_carlo_mse(full, cat, g, rng, draws)  # type: ignore[arg-type]
            val = (
                mv * scale if np.isfinite(mv) else np.inf,
                sv * scale if np.isfinite(sv) else np.nan,
            )
            rows += _rows(e0, g, "monte_carlo", (mc * scale, sc * scale), val)
    out = pd.DataFrame(rows)
    out.insert(0, "set_size", s)
    out["users"] = N
    out["domain_size"] = size
    return out


def _rows(
    e0: float,
    g: GRRProbabilities,
    method: str,
    category: tuple[float, float],
    value: tuple[float, float],
) -> list[dict[str, object]]:
    return [
        {"eps0": e0, "estimator": est, "method": method, "mse": mse, "se": se, "rho": g.rho}
        for est, (mse, se) in (("category", category), ("value", value))
    ]


def best_eps0(table: pd.DataFrame, criterion: str = "sum") -> pd.DataFrame:
    """The ε₀ minimising the category MSE, the value MSE and their trade-off, per ``|S|``.

    ``table``: rows of :func:`grr_mse_curve` (analytic rows if any, else Monte Carlo).
    ``criterion``: ``"sum"`` (MSE_cat + MSE_val) or ``"normalised_sum"`` (each over its minimum).

    Returns:
        Rows ``set_size, metric, value, method``: ``best_eps0_category``, ``best_eps0_value``,
        ``best_eps0_tradeoff``, ``category_mse_ratio_grr_over_eps0_0`` (plain GRR's category MSE
        over that at the smallest ε₀) and ``value_mse_at_grr``.
    """
    check_choice("criterion", criterion, ("sum", "normalised_sum"))
    rows = []
    method = "analytic" if (table["method"] == "analytic").any() else "monte_carlo"
    for s, g in table[table["method"] == method].groupby("set_size"):
        piv = g.pivot_table(index="eps0", columns="estimator", values="mse")
        piv = piv.replace(np.inf, np.nan)
        if criterion == "sum":
            trade = piv["category"] + piv["value"]
        else:
            trade = piv["category"] / piv["category"].min() + piv["value"] / piv["value"].min()
        lo, hi = piv.index.min(), piv.index.max()
        metrics = {
            "best_eps0_category": float(piv["category"].idxmin()),
            "best_eps0_value": float(piv["value"].idxmin()),
            "best_eps0_tradeoff": float(trade.idxmin()),
            "category_mse_ratio_grr_over_eps0_0": float(
                piv.loc[hi, "category"] / piv.loc[lo, "category"]
            ),
            "value_mse_at_grr": float(piv.loc[hi, "value"]),
        }
        rows += [
            {"set_size": s, "metric": m, "value": v, "method": method} for m, v in metrics.items()
        ]
    return pd.DataFrame(rows)
