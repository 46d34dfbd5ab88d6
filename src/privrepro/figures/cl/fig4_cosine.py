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

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from privrepro.continual import run_cosine_benchmark
from privrepro.continual.benchmarks import FeatureSource
from privrepro.continual.blurry import BLURRY_KINDS, BLURRY_NAMES
from privrepro.continual.plots import category_markers
from privrepro.continual.repeat_summaries import median_min_max
from privrepro.figures.api import UnitContext, param
from privrepro.figures.cl import _common as cl
from privrepro.plotting.style import new_figure

__all__ = ["BlurryCosine", "BlurryParams"]


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
        assumed="T not stated; Table A4's Not-Blurry numbers differ from the 10-task Table A5",
    )
    disjoint_pct: float = param(
        50.0, ge=0, le=100, assumed="N not stated; the blurry papers' default N = 50"
    )
    blurry_pct: float = param(
        10.0, ge=0, le=100, assumed="M not stated; the blurry papers' default M = 10"
    )
    repeats: int = param(5, ge=1, le=100, doc="seeds (split, class order and noise)")
    features: FeatureSource = field(default_factory=FeatureSource)


class BlurryCosine(cl.CosineFigure[BlurryParams]):
    """Final accuracy of the cosine classifier under Not/i/Si-Blurry tasks (Table A4)."""

    title = "cl Fig. 4 (right), Table A4 — cosine classifier on blurry Split-CIFAR-100"
    benchmark = "cifar100"

    def units(self, params: BlurryParams) -> list[dict[str, Any]]:
        fixed = ("delta", "nb_tasks", "disjoint_pct", "blurry_pct")
        levels = cl.privacy_levels(params.epsilons, params.non_dp)
        return cl.cosine_units(
            params, fixed, setting=params.settings, epsilon=levels, repeat=range(params.repeats)
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        # only the final row of the accuracy matrix is reported (AA_T needs no other row)
        res = run_cosine_benchmark(
            "cifar100",
            unit["epsilon"],
            unit["delta"],
            **{k: unit[k] for k in ("setting", "nb_tasks", "disjoint_pct", "blurry_pct")},
            evaluate="final",
            scenario_rng=ctx.rng("split"),
            noise_rng=ctx.rng("noise"),
            **cl.cosine_inputs(unit, ctx),
        )
        row = {
            "setting": unit["setting"],
            **cl.privacy_columns(unit["epsilon"]),
            **{k: unit[k] for k in ("delta", "repeat", "nb_tasks")},
            "sigma": res.sigma,
            "final_accuracy": 100 * res.final_accuracy,
            "final_aa": 100 * res.final_aa,
            "task_sizes": ",".join(map(str, res.task_sizes)),
            **cl.feature_columns(res.features),
        }
        return pd.DataFrame([row])

    def summarize(self, table: pd.DataFrame, params: BlurryParams) -> pd.DataFrame:
        rows = cl.mean_std_rows(table, ["setting", "privacy"], "final_accuracy")
        stats = median_min_max(table, ["setting", "privacy"], "final_accuracy")
        for priv, g in stats.groupby("privacy"):  # the claim: the means do not depend on blur
            spread = float(g["mean"].max() - g["mean"].min())
            rows.append(
                {
                    "metric": "blur_spread_of_means",
                    "setting": "all",
                    "privacy": priv,
                    "value": spread,
                }
            )
        return pd.DataFrame(rows)

    def plot(self, table: pd.DataFrame, params: BlurryParams) -> Any:
        fig, ax = new_figure(width=5.6, height=3.6)
        stats = median_min_max(table, ["setting", "privacy"], "final_accuracy")
        order = cl.privacy_order(params.epsilons, params.non_dp)
        category_markers(
            ax,
            stats,
            "privacy",
            order,
            series="setting",
            label=lambda s: f"Cosine Classifier, {BLURRY_NAMES[s]}",
            names=cl.privacy_tick,
            offset=0.8 / max(1, stats["setting"].nunique()),
            markers="os^",
        )
        ax.set_ylabel("final test accuracy (%)")
        ax.set_title(
            f"Blurry Split-CIFAR-100 (T={params.nb_tasks}, N={params.disjoint_pct:g}, "
            f"M={params.blurry_pct:g}), δ={params.delta:g}"
        )
        ax.legend(frameon=False, fontsize=8)
        return fig
