"""pac, Theorem 1 / Corollary 1 as curves: the posterior success bound against the MI budget v.

The paper states the bound ``KL(Bern(1 - delta) || Bern(1 - delta^o)) <= MI`` (eq. (2)) in words
only; this draws ``p*(q, v)`` for several priors ``q`` with Pinsker's ``q + sqrt(v/2)`` beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.figures.api import Figure, UnitContext, param
from privrepro.pac.bounds import pinsker_advantage_bound, posterior_success_bound
from privrepro.plotting.style import new_figure

__all__ = ["SuccessCurves", "SuccessCurvesParams"]


@dataclass
class SuccessCurvesParams:
    """The priors and the v-axis."""

    priors: list[float] = param(
        [0.5, 0.1, 0.01, 0.001],
        gt=0,
        lt=1,
        doc="prior success rates 1 - δ^o, one curve each",
        assumed="the note's table T1 priors",
        unique=True,
    )
    v_min: float = param(1.0 / 128, gt=0, doc="smallest MI budget (nats)")
    v_max: float = param(4.0, gt=0, above="v_min", doc="largest MI budget (nats)")
    points: int = param(97, ge=2, le=10_000, doc="log-spaced points on the v-axis")


class SuccessCurves(Figure[SuccessCurvesParams]):
    """p*(q, v) (Theorem 1 inverted) and q + sqrt(v/2) (Corollary 1) against v."""

    params_type = SuccessCurvesParams
    title = "pac Theorem 1 — posterior success bound against the MI budget v"

    def units(self, params: SuccessCurvesParams) -> list[dict[str, Any]]:
        return [
            {
                "priors": list(params.priors),
                "v_min": params.v_min,
                "v_max": params.v_max,
                "points": params.points,
            }
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        v = np.geomspace(unit["v_min"], unit["v_max"], unit["points"])
        frames = []
        for q in unit["priors"]:
            frames.append(
                pd.DataFrame(
                    {
                        "prior": q,
                        "v": v,
                        "bound": "theorem1_kl",
                        "success_bound": posterior_success_bound(q, v),
                    }
                )
            )
            frames.append(
                pd.DataFrame(
                    {
                        "prior": q,
                        "v": v,
                        "bound": "pinsker",
                        "success_bound": np.minimum(1.0, q + pinsker_advantage_bound(v)),
                    }
                )
            )
        return pd.concat(frames, ignore_index=True)

    def summarize(self, table: pd.DataFrame, params: SuccessCurvesParams) -> pd.DataFrame:
        rows = []
        for q in params.priors:
            for v in (0.5, 1.0):
                rows.append(
                    {
                        "metric": "p_star",
                        "prior": q,
                        "v": v,
                        "value": float(posterior_success_bound(q, v)),
                    }
                )
        return pd.DataFrame(rows)

    def plot(self, table: pd.DataFrame, params: SuccessCurvesParams) -> Any:
        fig, ax = new_figure(width=5.5, height=3.8)
        for i, q in enumerate(sorted(table["prior"].unique(), reverse=True)):
            for bound, ls in (("theorem1_kl", "-"), ("pinsker", ":")):
                sub = table[(table["prior"] == q) & (table["bound"] == bound)].sort_values("v")
                ax.plot(
                    sub["v"],
                    sub["success_bound"],
                    ls,
                    color=f"C{i}",
                    label=f"prior {q:g}" if bound == "theorem1_kl" else None,
                )
        ax.plot([], [], ":", color="0.4", label="Pinsker q + √(v/2)")
        ax.set_xscale("log")
        ax.set_xlabel("MI budget v (nats)")
        ax.set_ylabel("posterior success bound")
        ax.set_ylim(0, 1.02)
        ax.set_title("pac Thm 1 — p*(q, v) = max{p : KL(p‖q) ≤ v}")
        ax.legend(frameon=False, loc="upper left")
        return fig
