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

from privrepro.continual.benchmarks import BENCHMARKS
from privrepro.continual.peft import METHODS
from privrepro.figures.api import UnitContext, param
from privrepro.figures.cl import _common as cl

__all__ = ["DomainShiftParams", "DomainShiftPeft"]


@dataclass
class DomainShiftParams(cl.PeftParams):
    benchmarks: list[str] = param(["cifar100", "imagenet-r"], choices=BENCHMARKS, unique=True)
    methods: list[str] = param(list(METHODS), choices=list(METHODS), unique=True)
    epsilons: list[float | None] = param(
        [1.0, 8.0, None], gt=0, doc="per-task ε; null = non-DP", unique=True
    )
    repeats: int = param(5, ge=1, doc="repeats (class order, tuning, noise); Table A5: 5 seeds")
    nb_tasks: int = param(10, ge=1, doc="tasks per benchmark (paper: 10)")
    imagenet_r_repeats: int = param(
        3,
        ge=1,
        doc="ImageNet-R's repeats: Table A6 reports the mean and std 'averaged over three "
        "seeds' (at most ``repeats``; 5: as Split-CIFAR-100)",
    )
    noncl_repeats: int = param(
        1,
        ge=1,
        assumed="Non-CL repeats per (benchmark, ε): Tables A5/A6 give its AA without a standard "
        "deviation, so one run per ε (repeat 0) is read; ``repeats``: as every other method",
    )


class DomainShiftPeft(cl.PeftFigure[DomainShiftParams]):
    title = "PEFT Ensemble, Naive and Non-CL with DP-SGD on Split-CIFAR-100 / Split-ImageNet-R"

    def units(self, p: DomainShiftParams) -> list[dict[str, Any]]:
        units = cl.peft_units(
            p,
            {"nb_tasks": p.nb_tasks},
            benchmark=p.benchmarks,
            epsilon=p.epsilons,
            repeat=range(p.repeats),
            method=p.methods,
        )
        return [u for u in units if u["repeat"] < _repeats(p, u)]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        return cl.run_peft_unit(unit, ctx).rows

    def plot(self, table: pd.DataFrame, p: DomainShiftParams) -> Any:
        return cl.plot_final(table, p.benchmarks, "method")

    def summarize(self, table: pd.DataFrame, p: DomainShiftParams) -> pd.DataFrame:
        return cl.summarize_final(table, ["benchmark", "method", "eps_label"])


def _repeats(p: DomainShiftParams, unit: dict[str, Any]) -> int:
    """How many repeats a unit's (benchmark, method) runs: ImageNet-R three (Table A6), Non-CL
    one per ε (no standard deviation in Tables A5/A6), the rest ``repeats``."""
    n = p.repeats
    if unit["benchmark"] == "imagenet-r":
        n = min(n, p.imagenet_r_repeats)
    if str(unit["method"]).startswith("noncl_"):
        n = min(n, p.noncl_repeats)
    return n
