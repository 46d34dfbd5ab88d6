"""cl Fig. 3 / Fig. A2 / Table A3, cosine-classifier rows: label granularity and dummy labels.

Split-CIFAR-100 (10 × 10) and Split-ImageNet-R (10 × 20) at ε ∈ {1, 8}, δ = 1e-5; released label
space per task: the exact prior (S_prior, 10/20 labels), all base labels (S_prior^const, 100/200)
and S_prior^const with ×10/×100/×1000 dummy labels. Final average accuracy AA_T (×100) over
repeats (the paper: mean ± std over 5 seeds; the plot: median with min/max).

One unit per (dataset, ε, repeat): the features and the class order are shared by the label
configurations of a unit, the noise is drawn afresh for each.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from privrepro.continual.benchmarks import BENCHMARK_NAMES, FeatureSource
from privrepro.continual.cosine import DUMMY_SAMPLING
from privrepro.continual.cosine_benchmark import (
    benchmark_scenario,
    load_features,
    run_cosine_benchmark,
)
from privrepro.continual.label_spaces import DUMMY_REFERENCES, label_config, label_config_name
from privrepro.continual.plots import category_markers
from privrepro.continual.repeat_summaries import median_min_max
from privrepro.figures.api import UnitContext, param
from privrepro.figures.cl import _common as cl
from privrepro.plotting.names import math_text
from privrepro.plotting.style import new_figure

__all__ = ["LabelGranularityCosine", "LabelParams"]

DATASETS = ("cifar100", "imagenet-r")
LABEL_CONFIGS = ("prior", "prior_const", "x10", "x100", "x1000")


@dataclass
class LabelParams:
    """Table A3's grid."""

    datasets: list[str] = param(["cifar100", "imagenet-r"], choices=DATASETS, unique=True)
    epsilons: list[float] = param(
        [1.0, 8.0], gt=0, doc="per-task ε (parallel composition)", unique=True
    )
    delta: float = param(1e-5, gt=0, lt=1, doc="δ of every task's release")
    label_configs: list[str] = param(list(LABEL_CONFIGS), choices=LABEL_CONFIGS, unique=True)
    repeats: int = param(5, ge=1, le=100, doc="seeds (class order and noise)")
    dummy_reference: str = param(
        "base",
        choices=DUMMY_REFERENCES,
        assumed="×f read as f × the base label count (1,000/10,000/"
        "100,000 labels on CIFAR-100): under the per-task reading "
        "×10 would equal S_prior^const, a separate column",
    )
    dummy_sampling: str = param(
        "exact",
        choices=DUMMY_SAMPLING,
        doc="exact: every dummy's noise drawn; marginal: the best dummy "
        "score drawn from its law (smoke)",
    )
    features: FeatureSource = field(default_factory=FeatureSource)


class LabelGranularityCosine(cl.CosineFigure[LabelParams]):
    """Cosine classifier under S_prior, S_prior^const and dummy labels (Table A3)."""

    title = "cl Fig. 3/A2, Table A3 — cosine classifier: label match and dummy labels"

    def units(self, params: LabelParams) -> list[dict[str, Any]]:
        fixed = ("delta", "label_configs", "dummy_reference", "dummy_sampling")
        return cl.cosine_units(
            params,
            fixed,
            dataset=params.datasets,
            epsilon=params.epsilons,
            repeat=range(params.repeats),
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        data, meta = load_features(unit["dataset"], **cl.cosine_inputs(unit, ctx))
        scenario = benchmark_scenario(unit["dataset"], data, ctx.rng("class_order"))
        rows = []
        for config in unit["label_configs"]:
            res = run_cosine_benchmark(
                unit["dataset"],
                unit["epsilon"],
                unit["delta"],
                features=data,
                scenario=scenario,
                label_policy=label_config(config)[0],
                dummy_factor=label_config(config)[1],
                dummy_reference=unit["dummy_reference"],
                evaluate="final",
                dummy_sampling=unit["dummy_sampling"],
                noise_rng=ctx.rng(f"noise-{config}"),
            )
            rows.append(
                {
                    **{k: unit[k] for k in ("dataset", "epsilon", "delta", "repeat")},
                    "label_config": config,
                    "labels_per_task": res.labels_released,
                    "sigma": res.sigma,
                    "final_aa": 100 * res.final_aa,
                    "final_accuracy": 100 * res.final_accuracy,
                    **cl.feature_columns(meta),
                }
            )
        return pd.DataFrame(rows)

    def summarize(self, table: pd.DataFrame, params: LabelParams) -> pd.DataFrame:
        return pd.DataFrame(
            cl.mean_std_rows(table, ["dataset", "epsilon", "label_config"], "final_aa")
        )

    def plot(self, table: pd.DataFrame, params: LabelParams) -> Any:
        datasets = [d for d in DATASETS if d in set(table["dataset"])]
        epsilons = sorted(table["epsilon"].unique())
        fig, axes = new_figure(len(epsilons), len(datasets), width=4.6, height=3.2, squeeze=False)
        stats = median_min_max(table, ["dataset", "epsilon", "label_config"], "final_aa")
        for (i, e), (j, d) in itertools.product(enumerate(epsilons), enumerate(datasets)):
            ax = axes[i][j]
            s = stats[(stats["dataset"] == d) & (stats["epsilon"] == e)]
            configs = [c for c in LABEL_CONFIGS if c in set(s["label_config"])]
            category_markers(
                ax,
                s,
                "label_config",
                configs,
                names=lambda c: math_text(label_config_name(c)),
                label="Cosine Classifier",
            )
            ax.tick_params(axis="x", labelrotation=20)
            ax.axvline(1.5, color="0.6", lw=0.8, ls=":")
            ax.set(title=f"{BENCHMARK_NAMES[d]}, ε={e:g}", ylabel="final average accuracy (%)")
            lo, hi = float(s["min"].min()), float(s["max"].max())
            pad = max(0.0, 5.0 - (hi - lo)) / 2  # at least 5 points visible: no zoom on noise
            ax.set_ylim(lo - pad - 0.5, hi + pad + 0.5)
        fig.suptitle(
            "Cosine Classifier: label match (left of dotted line) and additional dummy labels; "
            "median, min/max over repeats",
            fontsize=9,
        )
        return fig
