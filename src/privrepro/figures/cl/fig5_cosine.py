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

from privrepro.continual.benchmarks import make_scenario
from privrepro.continual.cosine import noise_std, run_cosine
from privrepro.continual.label_spaces import LABEL_POLICIES, label_spaces_for
from privrepro.continual.metrics import FORGETTING_SINCE, average_accuracy, average_forgetting
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.figures.cl._cosine_common import (
    FeatureParams,
    error_bars,
    load_features,
    median_min_max,
    plot_task_curves,
    privacy_label,
    privacy_levels,
)
from privrepro.plotting.style import new_figure

__all__ = ["DomainShiftCosine", "DomainShiftParams", "accuracy_matrix_rows"]

DATASETS = ("cifar100", "imagenet-r")
_NAMES = {"cifar100": "Split-CIFAR-100", "imagenet-r": "Split-ImageNet-R"}


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
    features: FeatureParams = field(default_factory=FeatureParams)


def accuracy_matrix_rows(acc: np.ndarray, since: str) -> list[dict[str, Any]]:
    """One row per (task t, evaluated task i) with acc and row t's AA_t, AF_t (all ×100)."""
    aa = average_accuracy(acc)
    af = average_forgetting(acc, since)
    T = acc.shape[0]
    return [
        {
            "task": t + 1,
            "eval_task": i + 1,
            "acc": 100 * acc[t, i],
            "aa": 100 * aa[t],
            "af": 100 * af[t],
        }
        for t in range(T)
        for i in range(T)
    ]


class DomainShiftCosine(Figure[DomainShiftParams]):
    """Cosine classifier AA/AF after every task on Split-CIFAR-100 and Split-ImageNet-R."""

    params_type = DomainShiftParams
    title = "cl Fig. 5, A3–A6, Tables A5/A6 — cosine classifier AA_t and AF_t"

    def units(self, params: DomainShiftParams) -> list[dict[str, Any]]:
        return [
            {
                "dataset": d,
                "epsilon": e,
                "repeat": r,
                "delta": params.delta,
                "label_policy": params.label_policy,
                "forgetting_since": params.forgetting_since,
                "features": asdict(params.features),
            }
            for d in params.datasets
            for e in privacy_levels(params.epsilons, params.non_dp)
            for r in range(params.repeats)
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        data, meta = load_features(unit["dataset"], unit["features"], ctx)
        scenario = make_scenario(unit["dataset"], data, ctx.rng("class_order"))
        sigma = noise_std(unit["epsilon"], unit["delta"])
        res = run_cosine(
            data.train_x,
            data.train_y,
            data.test_x,
            data.test_y,
            scenario,
            label_spaces_for(unit["label_policy"], scenario),
            sigma,
            ctx.rng("noise"),
        )
        rows = accuracy_matrix_rows(res.acc, unit["forgetting_since"])
        df = pd.DataFrame(rows)
        df.insert(0, "dataset", unit["dataset"])
        df.insert(1, "privacy", privacy_label(unit["epsilon"]))
        df.insert(2, "epsilon", np.nan if unit["epsilon"] is None else unit["epsilon"])
        df.insert(3, "repeat", unit["repeat"])
        df["delta"] = unit["delta"]
        df["sigma"] = sigma
        df["label_policy"] = unit["label_policy"]
        df["feature_source"] = meta["feature_source"]
        df["backbone"] = meta["backbone"]
        return df

    @staticmethod
    def per_task(table: pd.DataFrame) -> pd.DataFrame:
        """AA_t and AF_t per (dataset, privacy, repeat, t)."""
        return table.drop_duplicates(["dataset", "privacy", "repeat", "task"])[
            ["dataset", "privacy", "repeat", "task", "aa", "af"]
        ]

    def summarize(self, table: pd.DataFrame, params: DomainShiftParams) -> pd.DataFrame:
        pt = self.per_task(table)
        final = pt[pt["task"] == pt["task"].max()]
        rows = []
        for value in ("aa", "af"):
            st = median_min_max(final, ["dataset", "privacy"], value)
            for _, r in st.iterrows():
                base = {"dataset": r["dataset"], "privacy": r["privacy"]}
                rows.append({"metric": f"final_{value}_mean", **base, "value": r["mean"]})
                rows.append({"metric": f"final_{value}_std", **base, "value": r["std"]})
        return pd.DataFrame(rows)

    def plot(self, table: pd.DataFrame, params: DomainShiftParams) -> Any:
        datasets = [d for d in DATASETS if d in set(table["dataset"])]
        fig, axes = new_figure(len(datasets), 3, width=3.6, height=3.0, squeeze=False)
        pt = self.per_task(table)
        order = [privacy_label(e) for e in privacy_levels(params.epsilons, params.non_dp)]
        for row, d in enumerate(datasets):
            sub = pt[pt["dataset"] == d]
            final = sub[sub["task"] == sub["task"].max()]
            st = (
                median_min_max(final, ["privacy"], "aa")
                .set_index("privacy")
                .reindex(order)
                .dropna(subset=["median"])
                .reset_index()
            )
            ax = axes[row][0]
            ax.errorbar(
                np.arange(len(st)),
                st["median"],
                yerr=error_bars(st),
                fmt="o",
                capsize=3,
                label="Cosine Classifier",
            )
            ax.set_xticks(
                np.arange(len(st)), [p if p == "non-DP" else f"ε={p}" for p in st["privacy"]]
            )
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
