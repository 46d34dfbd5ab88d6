"""cl Fig. 4 (PEFT rows of Table A4): blurry task boundaries on Split-CIFAR-100.

PEFT Ensemble (FiLM) final accuracy under Not Blurry, i-Blurry-N-M and Si-Blurry-N-M at
δ = 1e-5, ε ∈ {1, 8} and non-DP, with S_prior^const (a class may appear in several tasks).
N, M and the number of tasks are not stated (note §1.4): N = 50, M = 10 and T = 5 are assumed.
The DP-SGD hyperparameters come from the studies of the 10-task Split-CIFAR-100 (one task of
10 classes, App. E.1), shared with Figs. 3 and 5 (``tuning.scenario``, ``tuning.tune_tasks``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from privrepro.continual.peft import TuningSettings
from privrepro.figures.api import UnitContext, param
from privrepro.figures.cl import _common as cl

__all__ = ["BlurryParams", "BlurryPeft"]


@dataclass
class BlurryParams(cl.EnsembleParams):
    settings: list[str] = param(
        ["not-blurry", "i-blurry", "si-blurry"],
        choices=["not-blurry", "i-blurry", "si-blurry"],
        unique=True,
    )
    epsilons: list[float | None] = param([1.0, 8.0, None], gt=0, unique=True)
    nb_tasks: int = param(5, ge=1, assumed="T not stated; Table A4 vs A5 suggests 5")
    disjoint_pct: float = param(50.0, ge=0, le=100, assumed="N of i-Blurry-N-M (Koh et al.)")
    blurry_pct: float = param(10.0, ge=0, le=100, assumed="M of i-Blurry-N-M (Koh et al.)")
    tuning: TuningSettings = param(
        TuningSettings(tune_tasks=10),
        doc="App. E.1 tunes on 'a dataset that is representative of one task (10/20 classes)': "
        "the studies of the 10-task Split-CIFAR-100 (Figs. 3, 5), not the 5 blurry tasks "
        "(tuning.scenario = run reads it per blurry split)",
    )


class BlurryPeft(cl.PeftFigure[BlurryParams]):
    title = "PEFT Ensemble under Not / i- / Si-Blurry Split-CIFAR-100 (Table A4)"

    def units(self, p: BlurryParams) -> list[dict[str, Any]]:
        fixed = {
            "benchmark": "cifar100",
            "method": p.method,
            **{k: getattr(p, k) for k in ("nb_tasks", "disjoint_pct", "blurry_pct")},
        }
        return cl.peft_units(
            p, fixed, blurry=p.settings, epsilon=p.epsilons, repeat=range(p.repeats)
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        return cl.run_peft_unit(unit, ctx).rows

    def plot(self, table: pd.DataFrame, p: BlurryParams) -> Any:
        return cl.plot_final(table, ["cifar100"], "blurry", kind="blurry")

    def summarize(self, table: pd.DataFrame, p: BlurryParams) -> pd.DataFrame:
        return cl.summarize_final(table, ["blurry", "eps_label"])
