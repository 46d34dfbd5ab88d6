"""cl Table A7 and Figs. A7/A8, cosine-classifier rows: 5-Datasets over all 120 task orders.

5-Datasets (MNIST, SVHN, notMNIST, FashionMNIST, CIFAR-10; one task each) at ε ∈ {1, 8} and
non-DP, δ = 1e-5, S_prior^const (all 50 labels at every task). The paper trains "three models"
and evaluates every permutation of the tasks; Table A7 reports mean ± std over permutations.

A "model" of the cosine classifier is one noise sequence; every order of a model is evaluated
from its 31 distinct states (:func:`privrepro.continual.cosine_benchmark.all_orders_accuracy`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from privrepro.continual import run_five_datasets_orders
from privrepro.continual.benchmarks import FeatureSource
from privrepro.continual.metrics import FORGETTING_SINCE
from privrepro.continual.plots import task_curves
from privrepro.figures.api import UnitContext, param
from privrepro.figures.cl import _common as cl
from privrepro.plotting.names import math_text
from privrepro.plotting.style import new_figure

__all__ = ["FiveDatasetsCosine", "FiveDatasetsParams"]


@dataclass
class FiveDatasetsParams:
    """Table A7's grid (cosine rows)."""

    epsilons: list[float] = param(
        [1.0, 8.0], gt=0, doc="per-task ε (parallel composition)", unique=True
    )
    non_dp: bool = param(True)
    delta: float = param(1e-5, gt=0, lt=1)
    models: int = param(3, ge=1, le=100, doc="independent models (noise sequences), paper: 3")
    max_orders: int = param(120, ge=1, le=120, doc="task orders evaluated (all 5! = 120)")
    forgetting_since: str = param("paper", choices=FORGETTING_SINCE)
    features: FeatureSource = field(default_factory=FeatureSource)


class FiveDatasetsCosine(cl.CosineFigure[FiveDatasetsParams]):
    """Cosine classifier on 5-Datasets, every task order (Table A7, Figs. A7/A8)."""

    title = "cl Table A7, Figs. A7/A8 — cosine classifier on 5-Datasets, all task orders"
    benchmark = "5-datasets"

    def units(self, params: FiveDatasetsParams) -> list[dict[str, Any]]:
        fixed = ("delta", "max_orders", "forgetting_since")
        levels = cl.privacy_levels(params.epsilons, params.non_dp)
        return cl.cosine_units(params, fixed, epsilon=levels, model=range(params.models))

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        res = run_five_datasets_orders(
            unit["epsilon"],
            unit["delta"],
            max_orders=unit["max_orders"],
            noise_rng=ctx.rng("noise"),
            **cl.cosine_inputs(unit, ctx),
        )
        run = {
            **cl.privacy_columns(unit["epsilon"]),
            "delta": unit["delta"],
            "model": unit["model"],
        }
        tail = {"sigma": res.sigma, **cl.feature_columns(res.features)}
        rows = res.rows(unit["forgetting_since"], scale=100)
        return pd.DataFrame([{**run, **row, **tail} for row in rows])

    def summarize(self, table: pd.DataFrame, params: FiveDatasetsParams) -> pd.DataFrame:
        final = table[table["task"] == table["task"].max()]
        return pd.DataFrame(cl.mean_std_rows(final, ["privacy"], "aa", "af", prefix="final_"))

    def plot(self, table: pd.DataFrame, params: FiveDatasetsParams) -> Any:
        fig, axes = new_figure(1, 2, width=4.2, height=3.2, squeeze=False)
        order = cl.privacy_order(params.epsilons, params.non_dp)
        for col, (value, label, name) in enumerate(
            [("aa", "AA_t (%)", "Fig. A7"), ("af", "AF_t (%)", "Fig. A8")]
        ):
            ax = axes[0][col]
            task_curves(ax, table, order, value)
            ax.set_ylabel(math_text(label))
            ax.set_title(f"5-Datasets, {name}")
            ax.legend(frameon=False, fontsize=7)
        fig.suptitle(
            math_text(
                "Cosine Classifier, S_prior^const; median with min/max over all task orders and models"
            ),
            fontsize=9,
        )
        return fig
