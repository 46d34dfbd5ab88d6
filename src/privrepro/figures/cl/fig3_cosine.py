"""cl Fig. 3 / Fig. A2 / Table A3, cosine-classifier rows: label granularity and dummy labels.

Split-CIFAR-100 (10 × 10) and Split-ImageNet-R (10 × 20) at ε ∈ {1, 8}, δ = 1e-5; released label
space per task: the exact prior (S_prior, 10/20 labels), all base labels (S_prior^const, 100/200)
and S_prior^const with ×10/×100/×1000 dummy labels. Final average accuracy AA_T (×100) over
repeats (the paper: mean ± std over 5 seeds; the plot: median with min/max).

One unit per (dataset, ε, repeat): the features and the class order are shared by the label
configurations of a unit, the noise is drawn afresh for each.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privrepro.continual.benchmarks import make_scenario
from privrepro.continual.cosine import DUMMY_SAMPLING, noise_std, run_cosine
from privrepro.continual.label_spaces import DUMMY_REFERENCES, label_spaces_for
from privrepro.continual.metrics import average_accuracy
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.figures.cl._cosine_common import (
    FeatureParams,
    error_bars,
    load_features,
    median_min_max,
)
from privrepro.plotting.style import new_figure

__all__ = ["LabelGranularityCosine", "LabelParams"]

DATASETS = ("cifar100", "imagenet-r")
LABEL_CONFIGS = ("prior", "prior_const", "x10", "x100", "x1000")
_DISPLAY = {
    "prior": "S_prior",
    "prior_const": "S_prior^const",
    "x10": "+10×",
    "x100": "+100×",
    "x1000": "+1000×",
}


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
    features: FeatureParams = field(default_factory=FeatureParams)


def _factor(config: str) -> int:
    return int(config[1:]) if config.startswith("x") else 1


class LabelGranularityCosine(Figure[LabelParams]):
    """Cosine classifier under S_prior, S_prior^const and dummy labels (Table A3)."""

    params_type = LabelParams
    title = "cl Fig. 3/A2, Table A3 — cosine classifier: label match and dummy labels"

    def units(self, params: LabelParams) -> list[dict[str, Any]]:
        return [
            {
                "dataset": d,
                "epsilon": e,
                "repeat": r,
                "delta": params.delta,
                "label_configs": list(params.label_configs),
                "dummy_reference": params.dummy_reference,
                "dummy_sampling": params.dummy_sampling,
                "features": asdict(params.features),
            }
            for d in params.datasets
            for e in params.epsilons
            for r in range(params.repeats)
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        data, meta = load_features(unit["dataset"], unit["features"], ctx)
        scenario = make_scenario(unit["dataset"], data, ctx.rng("class_order"))
        sigma = noise_std(unit["epsilon"], unit["delta"])
        rows = []
        for config in unit["label_configs"]:
            policy = "prior" if config == "prior" else "prior_const"
            spaces = label_spaces_for(policy, scenario, _factor(config), unit["dummy_reference"])
            res = run_cosine(
                data.train_x,
                data.train_y,
                data.test_x,
                data.test_y,
                scenario,
                spaces,
                sigma,
                ctx.rng(f"noise-{config}"),
                evaluate="final",
                dummy_sampling=unit["dummy_sampling"],
            )
            rows.append(
                {
                    "dataset": unit["dataset"],
                    "epsilon": unit["epsilon"],
                    "delta": unit["delta"],
                    "repeat": unit["repeat"],
                    "label_config": config,
                    "labels_per_task": spaces[-1].size,
                    "sigma": sigma,
                    "final_aa": 100 * average_accuracy(res.acc)[-1],
                    "final_accuracy": 100 * res.final_accuracy,
                    "feature_source": meta["feature_source"],
                    "backbone": meta["backbone"],
                }
            )
        return pd.DataFrame(rows)

    def summarize(self, table: pd.DataFrame, params: LabelParams) -> pd.DataFrame:
        stats = median_min_max(table, ["dataset", "epsilon", "label_config"], "final_aa")
        rows = []
        for _, r in stats.iterrows():
            base = {
                "dataset": r["dataset"],
                "epsilon": r["epsilon"],
                "label_config": r["label_config"],
            }
            rows.append({"metric": "final_aa_mean", **base, "value": r["mean"]})
            rows.append({"metric": "final_aa_std", **base, "value": r["std"]})
        return pd.DataFrame(rows)

    def plot(self, table: pd.DataFrame, params: LabelParams) -> Any:
        panels = [
            (d, e)
            for e in sorted(table["epsilon"].unique())
            for d in DATASETS
            if d in set(table["dataset"])
        ]
        ncols = max(1, len({d for d, _ in panels}))
        nrows = max(1, (len(panels) + ncols - 1) // ncols)
        fig, axes = new_figure(nrows, ncols, width=4.6, height=3.2, squeeze=False)
        stats = median_min_max(table, ["dataset", "epsilon", "label_config"], "final_aa")
        for ax, (d, e) in zip(axes.ravel(), panels, strict=False):
            s = stats[(stats["dataset"] == d) & (stats["epsilon"] == e)]
            s = (
                s.set_index("label_config")
                .reindex([c for c in LABEL_CONFIGS if c in set(s["label_config"])])
                .reset_index()
            )
            x = np.arange(len(s))
            ax.errorbar(
                x,
                s["median"],
                yerr=error_bars(s),
                fmt="o",
                capsize=3,
                color="C0",
                label="Cosine Classifier",
            )
            ax.axvline(1.5, color="0.6", lw=0.8, ls=":")
            ax.set_xticks(x, [_DISPLAY[c] for c in s["label_config"]], rotation=20)
            ax.set_title(f"{'Split-CIFAR-100' if d == 'cifar100' else 'Split-ImageNet-R'}, ε={e:g}")
            ax.set_ylabel("final average accuracy (%)")
            lo, hi = float(s["min"].min()), float(s["max"].max())
            pad = max(0.0, 5.0 - (hi - lo)) / 2  # at least 5 points visible: no zoom on noise
            ax.set_ylim(lo - pad - 0.5, hi + pad + 0.5)
        for ax in axes.ravel()[len(panels) :]:
            ax.set_visible(False)
        fig.suptitle(
            "Cosine Classifier: label match (left of dotted line) and additional dummy labels; "
            "median, min/max over repeats",
            fontsize=9,
        )
        return fig
