"""pac Example 5 (Sec. 6): the gap between Algorithm 1's noise and the optimal Gaussian noise.

``x_i ~ N(mu, Sigma)`` in R^d, ``M(X) = (1/n) sum x_i``. Eq. (10) is the exact individual MI
``MI(x_i; M(X) + B')``, eq. (11) the exact whole-set MI that Algorithm 1 controls. For each budget
``v`` this computes the least ``E||B||^2`` of Gaussian noise (diagonal in Sigma's basis) meeting
(10), meeting (11), and Theorem 3's noise ``(sum_j sqrt(lambda_j/n))^2 / (2v)``; the paper's eq.
(12) first case (``v >= d/(n-1)``: no individual noise needed, gap ``(sum sqrt(lambda))^2/(2nv)``)
is reported beside them. The second case of (12) is illegible in the source.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.figures.api import Figure, UnitContext, param
from privrepro.pac.gaussian import (
    anisotropic_variances,
    example5_individual_mi,
    optimal_individual_variances,
    optimal_whole_set_variances,
)
from privrepro.plotting.style import new_figure

__all__ = ["Example5", "Example5Params"]


@dataclass
class Example5Params:
    """Sigma's eigenvalues, n and the v-grid."""

    eigenvalues: list[float] = param(
        [1.0],
        gt=0,
        doc="eigenvalues λ_j of Σ (d = their number)",
        assumed="the paper gives no numbers; d = 1, Σ = 1 as the note",
    )
    n: int = param(
        100,
        ge=2,
        doc="number of Gaussian points averaged",
        assumed="not stated; the note's n = 100",
    )
    v_min: float = param(1e-4, gt=0, doc="smallest budget (nats)")
    v_max: float = param(1.0, gt=0, above="v_min", doc="largest budget (nats)")
    points: int = param(41, ge=2, le=10_000, doc="log-spaced budgets")
    extra_v: list[float] = param(
        [0.001, 0.1], gt=0, min_len=0, doc="budgets always tabulated (note T8)"
    )


class Example5(Figure[Example5Params]):
    """Required Gaussian noise E||B||² against v: individual-optimal, whole-set exact, Theorem 3."""

    params_type = Example5Params
    title = "pac Example 5 — Gaussian mean: optimal vs Algorithm 1 (Theorem 3) noise against v"
    kind = "table"

    def units(self, params: Example5Params) -> list[dict[str, Any]]:
        return [
            {
                "eigenvalues": list(params.eigenvalues),
                "n": params.n,
                "v_min": params.v_min,
                "v_max": params.v_max,
                "points": params.points,
                "extra_v": sorted(params.extra_v),
            }
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        lam = np.asarray(unit["eigenvalues"], dtype=float)
        n, d = int(unit["n"]), lam.size
        vs = np.union1d(np.geomspace(unit["v_min"], unit["v_max"], unit["points"]), unit["extra_v"])
        sqrt_sum = np.sqrt(lam).sum()
        rows = []
        for v in vs:
            ind = optimal_individual_variances(lam, n, v)
            whole = optimal_whole_set_variances(lam, n, v)
            thm3 = anisotropic_variances(lam / n, v)
            rows.append(
                {
                    "v": float(v),
                    "n": n,
                    "d": d,
                    "individual_opt_noise_sq": float(ind.sum()),
                    "whole_set_exact_noise_sq": float(whole.sum()),
                    "theorem3_noise_sq": float(thm3.sum()),
                    "gap_theorem3_minus_individual": float(thm3.sum() - ind.sum()),
                    "eq12_first_case": float(sqrt_sum**2 / (2 * n * v))
                    if v >= d / (n - 1)
                    else np.nan,
                    "noiseless_individual_mi": example5_individual_mi(lam, n, 0.0),
                }
            )
        return pd.DataFrame(rows)

    def summarize(self, table: pd.DataFrame, params: Example5Params) -> pd.DataFrame:
        out = []
        for v in params.extra_v:
            r = table.loc[np.isclose(table["v"], v)].iloc[0]
            for col in ("individual_opt_noise_sq", "whole_set_exact_noise_sq", "theorem3_noise_sq"):
                out.append({"metric": col, "v": float(v), "value": float(r[col])})
        out.append(
            {
                "metric": "noiseless_individual_mi",
                "v": np.nan,
                "value": float(table["noiseless_individual_mi"].iloc[0]),
            }
        )
        return pd.DataFrame(out)

    def plot(self, table: pd.DataFrame, params: Example5Params) -> Any:
        fig, ax = new_figure(width=5.5, height=3.8)
        t = table.sort_values("v")
        ax.plot(t["v"], t["theorem3_noise_sq"], label="Algorithm 1 / Theorem 3 (whole set, bound)")
        ax.plot(t["v"], t["whole_set_exact_noise_sq"], "--", label="whole set, exact eq. (11)")
        pos = t[t["individual_opt_noise_sq"] > 0]
        ax.plot(pos["v"], pos["individual_opt_noise_sq"], "-.", label="individual, exact eq. (10)")
        mi0 = float(t["noiseless_individual_mi"].iloc[0])
        ax.axvline(mi0, color="0.5", lw=0.8, ls=":")
        ax.text(
            mi0,
            0.03,
            " no individual noise needed →",
            fontsize=7.5,
            color="0.4",
            va="bottom",
            transform=ax.get_xaxis_transform(),
        )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("MI budget v (nats)")
        ax.set_ylabel("required E‖B‖²")
        d, n = int(t["d"].iloc[0]), int(t["n"].iloc[0])
        ax.set_title(f"pac Ex. 5 — Gaussian mean, d = {d}, n = {n}")
        ax.legend(frameon=False, fontsize=8)
        return fig
