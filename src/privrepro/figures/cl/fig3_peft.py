"""cl Fig. 3 and Fig. A2 (PEFT rows of Table A3): label granularity and dummy labels.

PEFT Ensemble (FiLM) final accuracy on Split-CIFAR-100 and Split-ImageNet-R at δ = 1e-5 for the
label configurations of Sec. 7.1: exact S_prior (10/20 labels per task), S_prior^const (all 100 /
200 base labels) and S_prior^const with ×10, ×100, ×1000 dummy labels (reference size: the base
label set, see ``dummy_reference``). Fig. 3: CIFAR ε = 1, ImageNet-R ε = 8; Fig. A2: the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.figures.api import Figure, UnitContext, param
from privrepro.figures.cl.common_peft import (
    FeatureParams,
    FilmParams,
    TrainParams,
    TuneParams,
    check_film_source,
    eps_label,
    final_metrics,
    run_peft_unit,
    settings_of,
)
from privrepro.figures.cl.fig5_peft import summarize_final
from privrepro.plotting.style import new_figure

__all__ = ["LabelGranularityParams", "LabelGranularityPeft"]


@dataclass
class LabelGranularityParams:
    benchmarks: list[str] = param(
        ["cifar100", "imagenet-r"],
        choices=["cifar100", "imagenet-r", "5-datasets"],
        unique=True,
    )
    epsilons: list[float] = param([1.0, 8.0], gt=0, unique=True)
    configs: list[str] = param(
        ["prior", "const", "x10", "x100", "x1000"],
        choices=["prior", "const", "x10", "x100", "x1000"],
        doc="Table A3 columns",
        unique=True,
    )
    dummy_reference: str = param(
        "base", choices=["base", "task"], assumed="×f relative to the base label set (note §2.4)"
    )
    method: str = param("peft_film", choices=["peft_film", "peft_head"])
    repeats: int = param(5, ge=1)
    nb_tasks: int = param(10, ge=1)
    features: FeatureParams = param(FeatureParams())
    film: FilmParams = param(FilmParams())
    train: TrainParams = param(TrainParams())
    tuning: TuneParams = param(TuneParams())


_CONFIG = {
    "prior": ("prior", 1),
    "const": ("prior_const", 1),
    "x10": ("prior_const", 10),
    "x100": ("prior_const", 100),
    "x1000": ("prior_const", 1000),
}


class LabelGranularityPeft(Figure[LabelGranularityParams]):
    params_type = LabelGranularityParams
    title = "PEFT Ensemble under exact / constant prior label sets and dummy labels (Table A3)"

    def units(self, p: LabelGranularityParams) -> list[dict[str, Any]]:
        check_film_source(p.features, p.benchmarks, [p.method])
        return [
            {
                "benchmark": b,
                "method": p.method,
                "epsilon": e,
                "repeat": r,
                "label_policy": _CONFIG[c][0],
                "dummy_factor": _CONFIG[c][1],
                "config": c,
                "dummy_reference": p.dummy_reference,
                "nb_tasks": p.nb_tasks,
                **settings_of(p),
            }
            for b in p.benchmarks
            for e in p.epsilons
            for r in range(p.repeats)
            for c in p.configs
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        rows, _ = run_peft_unit(unit, ctx)
        rows["config"] = unit["config"]
        return rows

    def plot(self, table: pd.DataFrame, p: LabelGranularityParams) -> Any:
        panels = [(b, e) for b in p.benchmarks for e in p.epsilons]
        fig, axes = new_figure(1, len(panels), width=3.8, height=3.2, squeeze=False)
        for ax, (b, e) in zip(axes[0], panels, strict=False):
            sub = table[(table["benchmark"] == b) & (table["eps_label"] == eps_label(e))]
            f = final_metrics(sub, ["config"]).set_index("config")
            f = f.reindex([c for c in p.configs if c in f.index])
            x = np.arange(len(f))
            ax.errorbar(
                x,
                f["median"],
                yerr=[f["median"] - f["min"], f["max"] - f["median"]],
                fmt="o",
                capsize=3,
                label="PEFT Ensemble",
            )
            ax.set_xticks(x, list(f.index))
            ax.set_title(f"{b}, {eps_label(e)}")
            ax.set_ylabel("final average accuracy (%)")
        return fig

    def summarize(self, table: pd.DataFrame, p: LabelGranularityParams) -> pd.DataFrame:
        return summarize_final(table, ["benchmark", "eps_label", "config"])
