"""pac, Theorem 1 / Corollary 1 as curves: the posterior success bound against the MI budget v.

The paper states the bound ``KL(Bern(1 - delta) || Bern(1 - delta^o)) <= MI`` (eq. (2)) in words
only; this draws ``p*(q, v)`` for several priors ``q`` with Pinsker's ``q + sqrt(v/2)`` beside it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.data.provenance import ANALYTIC
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.pac import plots
from privrepro.pac.bounds import posterior_success_bound, success_curves

__all__ = ["SuccessCurves", "SuccessCurvesParams"]


@dataclass
class SuccessCurvesParams:
    """The priors and the v-axis."""

    priors: list[float] = param(
        [0.5, 0.1, 0.01, 0.001],
        gt=0,
        lt=1,
        doc="prior success rates 1 - δ^o, one curve each",
        assumed="the paper draws no curve; Example 1's prior 0.01 and three others",
        unique=True,
    )
    v_min: float = param(1.0 / 128, gt=0, doc="smallest MI budget (nats)")
    v_max: float = param(4.0, gt=0, above="v_min", doc="largest MI budget (nats)")
    points: int = param(97, ge=2, le=10_000, doc="log-spaced points on the v-axis")


class SuccessCurves(Figure[SuccessCurvesParams]):
    """p*(q, v) (Theorem 1 inverted) and q + sqrt(v/2) (Corollary 1) against v."""

    data = ANALYTIC
    title = "pac Theorem 1 — posterior success bound against the MI budget v"

    def units(self, params: SuccessCurvesParams) -> list[dict[str, Any]]:
        return [asdict(params)]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        v = np.geomspace(unit["v_min"], unit["v_max"], unit["points"])
        return pd.DataFrame(success_curves(unit["priors"], v))

    def summarize(self, table: pd.DataFrame, params: SuccessCurvesParams) -> pd.DataFrame:
        return pd.DataFrame(
            {"metric": "p_star", "prior": q, "v": v, "value": float(posterior_success_bound(q, v))}
            for q in params.priors
            for v in (0.5, 1.0)
        )

    def plot(self, table: pd.DataFrame, params: SuccessCurvesParams) -> Any:
        return plots.success_curves(table)
