"""cl Fig. 5, Figs. A3–A6, Tables A5/A6, cosine-classifier rows: AA_t and AF_t per task.

10-task Split-CIFAR-100 and Split-ImageNet-R at ε ∈ {1, 8} and non-DP, δ = 1e-5, S_prior^const
(the paper's default label space). The table holds the whole accuracy matrix acc[t, i] of every
run (one row per (t, i)) with AA_t and AF_t of its row t (cl App. E), so every curve of
Figs. A3–A6 and every entry of Tables A5/A6 comes from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from privrepro.continual import run_cosine_benchmark
from privrepro.continual.benchmarks import BENCHMARK_NAMES, FeatureSource
from privrepro.continual.label_spaces import LABEL_POLICIES
from privrepro.continual.metrics import FORGETTING_SINCE
from privrepro.continual.plots import aa_af_curves, category_markers
from privrepro.continual.repeat_summaries import median_min_max
from privrepro.figures.api import UnitContext, param
from privrepro.figures.cl import _common as cl
from privrepro.plotting.names import math_text
from privrepro.plotting.style import new_figure

__all__ = ["DomainShiftCosine", "DomainShiftParams"]

DATASETS = ("cifar100", "imagenet-r")


@dataclass
class DomainShiftParams:
    """Tables A5/A6's grid (cosine rows)."""

    datasets: list[str] = param(["cifar100", "imagenet-r"], choices=DATASETS, unique=True)
    epsilons: list[float] = param(
        [1.0, 8.0], gt=0, doc="per-task ε (parallel composition)", unique=True
    )
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
    features: FeatureSource = field(default_factory=FeatureSource)


class DomainShiftCosine(cl.CosineFigure[DomainShiftParams]):
    """Cosine classifier AA/AF after every task on Split-CIFAR-100 and Split-ImageNet-R."""

    title = "cl Fig. 5, A3–A6, Tables A5/A6 — cosine classifier AA_t and AF_t"

    def units(self, params: DomainShiftParams) -> list[dict[str, Any]]:
        fixed = ("delta", "label_policy", "forgetting_since")
        levels = cl.privacy_levels(params.epsilons, params.non_dp)
        return cl.cosine_units(
            params, fixed, dataset=params.datasets, epsilon=levels, repeat=range(params.repeats)
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        res = run_cosine_benchmark(
            unit["dataset"],
            unit["epsilon"],
            unit["delta"],
            label_policy=unit["label_policy"],
            scenario_rng=ctx.rng("class_order"),
            noise_rng=ctx.rng("noise"),
            **cl.cosine_inputs(unit, ctx),
        )
        run = {
            "dataset": unit["dataset"],
            **cl.privacy_columns(unit["epsilon"]),
            "repeat": unit["repeat"],
        }
        tail = {"delta": unit["delta"], "sigma": res.sigma, "label_policy": unit["label_policy"]}
        rows = res.matrix_rows(unit["forgetting_since"], scale=100)
        return pd.DataFrame(
            [{**run, **row, **tail, **cl.feature_columns(res.features)} for row in rows]
        )

    @staticmethod
    def per_task(table: pd.DataFrame) -> pd.DataFrame:
        """AA_t and AF_t per (dataset, privacy, repeat, t)."""
        return table.drop_duplicates(["dataset", "privacy", "repeat", "task"])[
            ["dataset", "privacy", "repeat", "task", "aa", "af"]
        ]

    def summarize(self, table: pd.DataFrame, params: DomainShiftParams) -> pd.DataFrame:
        pt = self.per_task(table)
        final = pt[pt["task"] == pt["task"].max()]
        return pd.DataFrame(
            cl.mean_std_rows(final, ["dataset", "privacy"], "aa", "af", prefix="final_")
        )

    def plot(self, table: pd.DataFrame, params: DomainShiftParams) -> Any:
        datasets = [d for d in DATASETS if d in set(table["dataset"])]
        fig, axes = new_figure(len(datasets), 3, width=3.6, height=3.0, squeeze=False)
        pt = self.per_task(table)
        order = cl.privacy_order(params.epsilons, params.non_dp)
        for row, d in enumerate(datasets):
            sub = pt[pt["dataset"] == d]
            final = median_min_max(sub[sub["task"] == sub["task"].max()], ["privacy"], "aa")
            present = [p for p in order if p in set(final["privacy"])]
            category_markers(
                axes[row][0],
                final,
                "privacy",
                present,
                names=cl.privacy_tick,
                label="Cosine Classifier",
            )
            axes[row][0].set(
                ylabel="final average accuracy (%)", title=f"{BENCHMARK_NAMES[d]} (Fig. 5)"
            )
            figs = ("A3", "A4") if row % 2 == 0 else ("A5", "A6")
            aa_af_curves(
                axes[row][1:], sub, order, [f"{BENCHMARK_NAMES[d]}, Fig. {f}" for f in figs]
            )
        fig.suptitle(
            math_text("Cosine Classifier, S_prior^const; median with min/max over repeats"),
            fontsize=9,
        )
        return fig
