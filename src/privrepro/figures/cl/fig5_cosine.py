"""cl Fig. 5, Figs. A3–A6, Tables A5/A6, cosine-classifier rows: AA_t and AF_t per task.

10-task Split-CIFAR-100 and Split-ImageNet-R at ε ∈ {1, 8} and non-DP, δ = 1e-5, S_prior^const
(the paper's default label space). The table holds the whole accuracy matrix acc[t, i] of every
run (one row per (t, i)) with AA_t and AF_t of its row t (cl App. E), so every curve of
Figs. A3–A6 and every entry of Tables A5/A6 comes from it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privrepro.continual import run_cosine_benchmark
from privrepro.continual.label_spaces import LABEL_POLICIES
from privrepro.continual.metrics import FORGETTING_SINCE
from privrepro.continual.tables import median_min_max
from privrepro.figures.api import Figure, UnitContext, grid_units, param
from privrepro.figures.cl._common import (
    NON_DP,
    FeatureParams,
    cosine_inputs,
    feature_columns,
    in_order,
    mean_std_rows,
    median_errorbar,
    plot_task_curves,
    privacy_label,
    privacy_levels,
)
from privrepro.plotting.style import new_figure

__all__ = ["DomainShiftCosine", "DomainShiftParams"]

DATASETS = ("cifar100", "imagenet-r")
_NAMES = {"cifar100": "Split-CIFAR-100", "imagenet-r": "Split-ImageNet-R"}


@dataclass
class DomainShiftParams:
    """Tables A5/A6's grid (cosine rows)."""

    datasets: list[str] = param(["cifar100", "imagenet-r"], choices=DATASETS)
    epsilons: list[float] = param([1.0, 8.0], gt=0, doc="per-task ε (parallel composition)")
    non_dp: bool = param(True)
    delta: float = param(1e-5, gt=0, lt=1)
    label_policy: str = param(
        "prior_const",
        choices=LABEL_POLICIES[:2],
        doc="the paper's default: all base labels at every task",
    )
    repeats: int = param(
        5,
        ge=1,
        le=100,
        assumed="Table A6 says three seeds for ImageNet-R, Figs. A5/A6 five repeats; five used",
    )
    forgetting_since: str = param(
        "paper", choices=FORGETTING_SINCE, doc="max over k from 1 (the paper's App. E) or from i"
    )
    features: FeatureParams = field(default_factory=FeatureParams)


class DomainShiftCosine(Figure[DomainShiftParams]):
    """Cosine classifier AA/AF after every task on Split-CIFAR-100 and Split-ImageNet-R."""

    params_type = DomainShiftParams
    title = "cl Fig. 5, A3–A6, Tables A5/A6 — cosine classifier AA_t and AF_t"

    def units(self, params: DomainShiftParams) -> list[dict[str, Any]]:
        fixed = {
            "delta": params.delta,
            "label_policy": params.label_policy,
            "forgetting_since": params.forgetting_since,
            "features": asdict(params.features),
        }
        return grid_units(
            fixed,
            dataset=params.datasets,
            epsilon=privacy_levels(params.epsilons, params.non_dp),
            repeat=range(params.repeats),
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        res = run_cosine_benchmark(
            unit["dataset"],
            unit["epsilon"],
            unit["delta"],
            label_policy=unit["label_policy"],
            scenario_rng=ctx.rng("class_order"),
            noise_rng=ctx.rng("noise"),
            **cosine_inputs(unit, ctx),
        )
        df = pd.DataFrame(res.matrix_rows(unit["forgetting_since"], scale=100))
        df.insert(0, "dataset", unit["dataset"])
        df.insert(1, "privacy", privacy_label(unit["epsilon"]))
        df.insert(2, "epsilon", np.nan if unit["epsilon"] is None else unit["epsilon"])
        df.insert(3, "repeat", unit["repeat"])
        extra = {"delta": unit["delta"], "sigma": res.sigma, "label_policy": unit["label_policy"]}
        return df.assign(**extra, **feature_columns(res.features))

    @staticmethod
    def per_task(table: pd.DataFrame) -> pd.DataFrame:
        """AA_t and AF_t per (dataset, privacy, repeat, t)."""
        return table.drop_duplicates(["dataset", "privacy", "repeat", "task"])[
            ["dataset", "privacy", "repeat", "task", "aa", "af"]
        ]

    def summarize(self, table: pd.DataFrame, params: DomainShiftParams) -> pd.DataFrame:
        pt = self.per_task(table)
        final = pt[pt["task"] == pt["task"].max()]
        by = ["dataset", "privacy"]
        return pd.DataFrame(
            [r for v in ("aa", "af") for r in mean_std_rows(final, by, v, f"final_{v}")]
        )

    def plot(self, table: pd.DataFrame, params: DomainShiftParams) -> Any:
        datasets = [d for d in DATASETS if d in set(table["dataset"])]
        fig, axes = new_figure(len(datasets), 3, width=3.6, height=3.0, squeeze=False)
        pt = self.per_task(table)
        order = [privacy_label(e) for e in privacy_levels(params.epsilons, params.non_dp)]
        for row, d in enumerate(datasets):
            sub = pt[pt["dataset"] == d]
            final = sub[sub["task"] == sub["task"].max()]
            st = in_order(median_min_max(final, ["privacy"], "aa"), "privacy", order)
            ax = axes[row][0]
            median_errorbar(ax, np.arange(len(st)), st, label="Cosine Classifier")
            ticks = [p if p == NON_DP else f"ε={p}" for p in st["privacy"]]
            ax.set_xticks(np.arange(len(st)), ticks)
            ax.set_ylabel("final average accuracy (%)")
            ax.set_title(f"{_NAMES[d]} (Fig. 5)")
            for col, (value, label, fig_ids) in enumerate(
                [("aa", "AA_t (%)", "A3/A5"), ("af", "AF_t (%)", "A4/A6")], start=1
            ):
                ax = axes[row][col]
                plot_task_curves(ax, sub, order, value)
                ax.set_ylabel(label)
                ax.set_title(f"{_NAMES[d]}, Fig. {fig_ids.split('/')[row % 2]}")
                ax.legend(frameon=False, fontsize=7)
        fig.suptitle(
            "Cosine Classifier, S_prior^const; median with min/max over repeats", fontsize=9
        )
        return fig
