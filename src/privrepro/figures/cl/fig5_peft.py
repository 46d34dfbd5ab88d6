"""cl Fig. 5 (and Figs. A3–A6, Tables A5 and A6): PEFT Ensemble, Naive and Non-CL under DP-SGD.

Split-CIFAR-100 and Split-ImageNet-R, δ = 1e-5, ε ∈ {1, 8} and non-DP: final average accuracy
(AA) and forgetting (AF) of the PEFT Ensemble (FiLM and last layer), the Naive baseline and the
Non-CL baseline (cl paper, Sec. 7.3, App. F.3/F.4). Per-task curves AA_t / AF_t (Figs. A3–A6)
come from the same rows. The Cosine Classifier rows are the part-1 figures'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from privrepro.continual.peft import (
    METHODS,
    FeatureSettings,
    FilmSettings,
    TrainSettings,
    TuningSettings,
    check_film_source,
)
from privrepro.figures.api import Figure, UnitContext, grid_units, param
from privrepro.figures.cl._common import (
    peft_settings,
    plot_final,
    run_peft_unit,
    summarize_final,
)

__all__ = ["DomainShiftParams", "DomainShiftPeft"]


@dataclass
class DomainShiftParams:
    benchmarks: list[str] = param(
        ["cifar100", "imagenet-r"], choices=["cifar100", "imagenet-r", "5-datasets"]
    )
    methods: list[str] = param(list(METHODS), choices=list(METHODS))
    epsilons: list[float | None] = param([1.0, 8.0, None], gt=0, doc="per-task ε; null = non-DP")
    repeats: int = param(5, ge=1, doc="repeats (class order, tuning, noise); IN-R: 3 or 5")
    nb_tasks: int = param(10, ge=1, doc="tasks per benchmark (paper: 10)")
    features: FeatureSettings = param(FeatureSettings())
    film: FilmSettings = param(FilmSettings())
    train: TrainSettings = param(TrainSettings())
    tuning: TuningSettings = param(TuningSettings())


class DomainShiftPeft(Figure[DomainShiftParams]):
    params_type = DomainShiftParams
    title = "PEFT Ensemble, Naive and Non-CL with DP-SGD on Split-CIFAR-100 / Split-ImageNet-R"

    def units(self, p: DomainShiftParams) -> list[dict[str, Any]]:
        check_film_source(p.features, p.benchmarks, p.methods)
        return grid_units(
            {"nb_tasks": p.nb_tasks, **peft_settings(p)},
            benchmark=p.benchmarks,
            epsilon=p.epsilons,
            repeat=range(p.repeats),
            method=p.methods,
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        return run_peft_unit(unit, ctx).rows

    def plot(self, table: pd.DataFrame, p: DomainShiftParams) -> Any:
        return plot_final(table, p.benchmarks, "method")

    def summarize(self, table: pd.DataFrame, p: DomainShiftParams) -> pd.DataFrame:
        return summarize_final(table, ["benchmark", "method", "eps_label"])
