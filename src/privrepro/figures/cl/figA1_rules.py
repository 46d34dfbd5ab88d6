"""cl Fig. A1: ArgMax (Eq. 8), Median (Eq. A107) and Entropy (SAFE, Eq. 11, γ = 1) aggregation
of the PEFT Ensemble's members.

Datasets, ε values and axes are not stated (note §3): Split-CIFAR-100 at ε ∈ {1, 8} and non-DP
with S_prior^const is assumed; all three rules are evaluated on the same trained members.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from privrepro.figures.api import Figure, UnitContext, param
from privrepro.figures.cl.common_peft import (
    FeatureParams,
    FilmParams,
    TrainParams,
    TuneParams,
    check_film_source,
    final_metrics,
    run_peft_unit,
    settings_of,
)
from privrepro.figures.cl.fig5_peft import summarize_final
from privrepro.plotting.style import new_figure

__all__ = ["EnsembleRules", "RulesParams"]

RULES = ["argmax", "median", "entropy"]


@dataclass
class RulesParams:
    benchmarks: list[str] = param(
        ["cifar100"],
        choices=["cifar100", "imagenet-r", "5-datasets"],
        assumed="Fig. A1 does not name its datasets",
        unique=True,
    )
    epsilons: list[float | None] = param(
        [1.0, 8.0, None],
        gt=0,
        assumed="Fig. A1 does not name its ε values",
        unique=True,
    )
    method: str = param("peft_film", choices=["peft_film", "peft_head"])
    repeats: int = param(5, ge=1)
    nb_tasks: int = param(10, ge=1)
    features: FeatureParams = param(FeatureParams())
    film: FilmParams = param(FilmParams())
    train: TrainParams = param(TrainParams())
    tuning: TuneParams = param(TuneParams())


class EnsembleRules(Figure[RulesParams]):
    params_type = RulesParams
    title = "PEFT Ensemble aggregation rules: ArgMax, Median, Entropy (Fig. A1)"

    def units(self, p: RulesParams) -> list[dict[str, Any]]:
        check_film_source(p.features, p.benchmarks, [p.method])
        return [
            {
                "benchmark": b,
                "method": p.method,
                "epsilon": e,
                "repeat": r,
                "rules": RULES,
                "nb_tasks": p.nb_tasks,
                **settings_of(p),
            }
            for b in p.benchmarks
            for e in p.epsilons
            for r in range(p.repeats)
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        rows, _ = run_peft_unit(unit, ctx)
        return rows

    def plot(self, table: pd.DataFrame, p: RulesParams) -> Any:
        fig, axes = new_figure(1, len(p.benchmarks), width=4.6, height=3.4, squeeze=False)
        for ax, b in zip(axes[0], p.benchmarks, strict=False):
            sub = table[table["benchmark"] == b]
            for k, rule in enumerate(RULES):
                f = final_metrics(sub, ["eps_label"], rule=rule)
                if f.empty:
                    continue
                x = [i + (k - 1) * 0.12 for i in range(len(f))]
                ax.errorbar(
                    x,
                    f["median"],
                    yerr=[f["median"] - f["min"], f["max"] - f["median"]],
                    fmt="o",
                    capsize=3,
                    label=rule,
                )
                ax.set_xticks(range(len(f)), list(f["eps_label"]))
            ax.set_title(b)
            ax.set_ylabel("final average accuracy (%)")
            ax.legend(fontsize=7)
        return fig

    def summarize(self, table: pd.DataFrame, p: RulesParams) -> pd.DataFrame:
        parts = []
        for rule in RULES:
            s = summarize_final(table, ["benchmark", "eps_label"], rule)
            if len(s):
                s["rule"] = rule
                parts.append(s)
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
