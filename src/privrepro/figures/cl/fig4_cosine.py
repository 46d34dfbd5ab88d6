"""cl Fig. 4 (right) / Table A4, cosine-classifier rows: blurry tasks on Split-CIFAR-100.

Not Blurry (disjoint classes only), i-Blurry-N-M and Si-Blurry-N-M at ε ∈ {1, 8} and non-DP,
δ = 1e-5, released label space S_prior^const (a blurry class appears in several tasks). The
paper's claim: the cosine classifier is invariant to blurriness (its class sums do not depend on
which task a sample arrives in): 79.02 ± 0.00 non-DP in all three settings.

N, M and T are not stated in the paper. Defaults: N = 50, M = 10 (the blurry papers' defaults)
and T = 5 (the Not-Blurry numbers of Table A4 do not match the 10-task Table A5: note §1.4).
One unit per (setting, privacy level, repeat).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privrepro.continual.blurry import BLURRY_KINDS, make_blurry_scenario
from privrepro.continual.cosine import noise_std, run_cosine
from privrepro.continual.label_spaces import label_spaces_for
from privrepro.continual.metrics import average_accuracy
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.figures.cl._cosine_common import (
    FeatureParams,
    error_bars,
    load_features,
    median_min_max,
    privacy_label,
    privacy_levels,
)
from privrepro.plotting.style import new_figure

__all__ = ["BlurryCosine", "BlurryParams"]

_DISPLAY = {"not-blurry": "Not Blurry", "i-blurry": "i-Blurry", "si-blurry": "Si-Blurry"}


@dataclass
class BlurryParams:
    """Table A4's grid."""

    settings: list[str] = param(list(BLURRY_KINDS), choices=BLURRY_KINDS, unique=True)
    epsilons: list[float] = param(
        [1.0, 8.0], gt=0, doc="per-task ε (parallel composition)", unique=True
    )
    non_dp: bool = param(True, doc="also run without noise")
    delta: float = param(1e-5, gt=0, lt=1)
    nb_tasks: int = param(
        5,
        ge=2,
        le=100,
        assumed="T not stated; Table A4's Not-Blurry numbers "
        "differ from the 10-task Table A5 (note §1.4)",
    )
    disjoint_pct: float = param(
        50.0, ge=0, le=100, assumed="N not stated; the blurry papers' default N = 50"
    )
    blurry_pct: float = param(
        10.0, ge=0, le=100, assumed="M not stated; the blurry papers' default M = 10"
    )
    repeats: int = param(5, ge=1, le=100, doc="seeds (split, class order and noise)")
    features: FeatureParams = field(default_factory=FeatureParams)


class BlurryCosine(Figure[BlurryParams]):
    """Final accuracy of the cosine classifier under Not/i/Si-Blurry tasks (Table A4)."""

    params_type = BlurryParams
    title = "cl Fig. 4 (right), Table A4 — cosine classifier on blurry Split-CIFAR-100"

    def units(self, params: BlurryParams) -> list[dict[str, Any]]:
        return [
            {
                "setting": s,
                "epsilon": e,
                "repeat": r,
                "delta": params.delta,
                "nb_tasks": params.nb_tasks,
                "disjoint_pct": params.disjoint_pct,
                "blurry_pct": params.blurry_pct,
                "features": asdict(params.features),
            }
            for s in params.settings
            for e in privacy_levels(params.epsilons, params.non_dp)
            for r in range(params.repeats)
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        data, meta = load_features("cifar100", unit["features"], ctx)
        scenario = make_blurry_scenario(
            unit["setting"],
            data.train_y,
            data.test_y,
            data.num_classes,
            unit["nb_tasks"],
            ctx.rng("split"),
            unit["disjoint_pct"],
            unit["blurry_pct"],
        )
        sigma = noise_std(unit["epsilon"], unit["delta"])
        spaces = label_spaces_for("prior_const", scenario)
        # only the final row of the accuracy matrix is reported (AA_T needs no other row)
        res = run_cosine(
            data.train_x,
            data.train_y,
            data.test_x,
            data.test_y,
            scenario,
            spaces,
            sigma,
            ctx.rng("noise"),
            evaluate="final",
        )
        return pd.DataFrame(
            [
                {
                    "setting": unit["setting"],
                    "privacy": privacy_label(unit["epsilon"]),
                    "epsilon": np.nan if unit["epsilon"] is None else unit["epsilon"],
                    "delta": unit["delta"],
                    "repeat": unit["repeat"],
                    "nb_tasks": unit["nb_tasks"],
                    "sigma": sigma,
                    "final_accuracy": 100 * res.final_accuracy,
                    "final_aa": 100 * average_accuracy(res.acc)[-1],
                    "task_sizes": ",".join(str(len(t)) for t in scenario.train_tasks),
                    "feature_source": meta["feature_source"],
                    "backbone": meta["backbone"],
                }
            ]
        )

    def summarize(self, table: pd.DataFrame, params: BlurryParams) -> pd.DataFrame:
        stats = median_min_max(table, ["setting", "privacy"], "final_accuracy")
        rows = []
        for _, r in stats.iterrows():
            base = {"setting": r["setting"], "privacy": r["privacy"]}
            rows.append({"metric": "final_accuracy_mean", **base, "value": r["mean"]})
            rows.append({"metric": "final_accuracy_std", **base, "value": r["std"]})
        for priv, g in stats.groupby("privacy"):
            rows.append(
                {
                    "metric": "blur_spread_of_means",
                    "setting": "all",
                    "privacy": priv,
                    "value": float(g["mean"].max() - g["mean"].min()),
                }
            )
        return pd.DataFrame(rows)

    def plot(self, table: pd.DataFrame, params: BlurryParams) -> Any:
        fig, ax = new_figure(width=5.6, height=3.6)
        stats = median_min_max(table, ["setting", "privacy"], "final_accuracy")
        order = [privacy_label(e) for e in privacy_levels(params.epsilons, params.non_dp)]
        settings = [s for s in BLURRY_KINDS if s in set(stats["setting"])]
        width = 0.8 / max(1, len(settings))
        for j, s in enumerate(settings):
            st = (
                stats[stats["setting"] == s]
                .set_index("privacy")
                .reindex(order)
                .dropna(subset=["median"])
                .reset_index()
            )
            x = (
                np.array([order.index(p) for p in st["privacy"]])
                + (j - (len(settings) - 1) / 2) * width
            )
            ax.errorbar(
                x,
                st["median"],
                yerr=error_bars(st),
                fmt="os^"[j % 3],
                capsize=3,
                color=f"C{j}",
                label=f"Cosine Classifier, {_DISPLAY[s]}",
            )
        ax.set_xticks(np.arange(len(order)), [p if p == "non-DP" else f"ε={p}" for p in order])
        ax.set_ylabel("final test accuracy (%)")
        ax.set_title(
            f"Blurry Split-CIFAR-100 (T={params.nb_tasks}, N={params.disjoint_pct:g}, "
            f"M={params.blurry_pct:g}), δ={params.delta:g}"
        )
        ax.legend(frameon=False, fontsize=8)
        return fig
