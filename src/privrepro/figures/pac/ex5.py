"""pac Example 5 (Sec. 6): the gap between Algorithm 1's noise and the optimal Gaussian noise.

``x_i ~ N(mu, Sigma)`` in R^d, ``M(X) = (1/n) sum x_i``. Eq. (10) is the exact individual MI
``MI(x_i; M(X) + B')``, eq. (11) the exact whole-set MI that Algorithm 1 controls. For each budget
``v`` this computes the least ``E||B||^2`` of Gaussian noise (diagonal in Sigma's basis) meeting
(10), meeting (11), and Theorem 3's noise ``(sum_j sqrt(lambda_j/n))^2 / (2v)``; the paper's eq.
(12) first case (``v >= d/(n-1)``: no individual noise needed, gap ``(sum sqrt(lambda))^2/(2nv)``)
is reported beside them. The second case of (12) is illegible in the source.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.data.provenance import ANALYTIC
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.pac import plots
from privrepro.pac.gaussian import example5_noise

__all__ = ["Example5", "Example5Params"]


@dataclass
class Example5Params:
    """Sigma's eigenvalues, n and the v-grid."""

    eigenvalues: list[float] = param(
        [1.0],
        gt=0,
        doc="eigenvalues λ_j of Σ (d = their number)",
        assumed="the paper gives no numbers; d = 1, Σ = 1",
    )
    n: int = param(
        100,
        ge=2,
        doc="number of Gaussian points averaged",
        assumed="not stated; n = 100",
    )
    v_min: float = param(1e-4, gt=0, doc="smallest budget (nats)")
    v_max: float = param(1.0, gt=0, above="v_min", doc="largest budget (nats)")
    points: int = param(41, ge=2, le=10_000, doc="log-spaced budgets")
    extra_v: list[float] = param([0.001, 0.1], gt=0, min_len=0, doc="budgets always tabulated")


class Example5(Figure[Example5Params]):
    """Required Gaussian noise E||B||² against v: individual-optimal, whole-set exact, Theorem 3."""

    data = ANALYTIC
    title = "pac Example 5 — Gaussian mean: optimal vs Algorithm 1 (Theorem 3) noise against v"
    kind = "table"

    def units(self, params: Example5Params) -> list[dict[str, Any]]:
        return [{**asdict(params), "extra_v": sorted(params.extra_v)}]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        vs = np.union1d(np.geomspace(unit["v_min"], unit["v_max"], unit["points"]), unit["extra_v"])
        return pd.DataFrame(example5_noise(unit["eigenvalues"], int(unit["n"]), vs))

    def summarize(self, table: pd.DataFrame, params: Example5Params) -> pd.DataFrame:
        columns = ("individual_opt_noise_sq", "whole_set_exact_noise_sq", "theorem3_noise_sq")
        out = [
            {"metric": col, "v": float(v), "value": float(r[col])}
            for v in params.extra_v
            for r in [table.loc[np.isclose(table["v"], v)].iloc[0]]
            for col in columns
        ]
        mi0 = float(table["noiseless_individual_mi"].iloc[0])
        out.append({"metric": "noiseless_individual_mi", "v": np.nan, "value": mi0})
        return pd.DataFrame(out)

    def plot(self, table: pd.DataFrame, params: Example5Params) -> Any:
        return plots.gaussian_mean_noise(table)
