"""cl Fig. A1: ArgMax (Eq. 8), Median (Eq. A107) and Entropy (SAFE, Eq. 11, γ = 1) aggregation
of the PEFT Ensemble's members.

Datasets, ε values and axes are not stated (note §3): Split-CIFAR-100 at ε ∈ {1, 8} and non-DP
with S_prior^const is assumed; all three rules are evaluated on the same trained members.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from privrepro.continual.benchmarks import BENCHMARKS
from privrepro.continual.ensemble import RULES as ENSEMBLE_RULES
from privrepro.continual.plots import category_markers
from privrepro.continual.repeat_summaries import final_metrics
from privrepro.figures.api import UnitContext, param
from privrepro.figures.cl import _common as cl
from privrepro.plotting.names import display
from privrepro.plotting.style import new_figure

__all__ = ["EnsembleRules", "RulesParams"]

RULES = list(ENSEMBLE_RULES)  # ArgMax (Eq. 8), Median (Eq. A107), Entropy (SAFE Eq. 11)


@dataclass
class RulesParams(cl.EnsembleParams):
    benchmarks: list[str] = param(
        ["cifar100"],
        choices=BENCHMARKS,
        assumed="Fig. A1 does not name its datasets",
        unique=True,
    )
    epsilons: list[float | None] = param(
        [1.0, 8.0, None],
        gt=0,
        assumed="Fig. A1 does not name its ε values",
        unique=True,
    )


class EnsembleRules(cl.PeftFigure[RulesParams]):
    title = "PEFT Ensemble aggregation rules: ArgMax, Median, Entropy (Fig. A1)"

    def units(self, p: RulesParams) -> list[dict[str, Any]]:
        fixed = {"method": p.method, "rules": RULES, "nb_tasks": p.nb_tasks}
        return cl.peft_units(
            p, fixed, benchmark=p.benchmarks, epsilon=p.epsilons, repeat=range(p.repeats)
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        return cl.run_peft_unit(unit, ctx).rows

    def plot(self, table: pd.DataFrame, p: RulesParams) -> Any:
        fig, axes = new_figure(1, len(p.benchmarks), width=4.6, height=3.4, squeeze=False)
        for ax, b in zip(axes[0], p.benchmarks, strict=False):
            sub = table[table["benchmark"] == b]
            f = [final_metrics(sub, ["eps_label"], rule=r).assign(rule=r) for r in RULES]
            f = pd.concat(f, ignore_index=True)
            if len(f):
                order = list(dict.fromkeys(f["eps_label"]))
                label = lambda r: display("rule", r)  # noqa: E731
                category_markers(ax, f, "eps_label", order, series="rule", label=label)
            ax.set_title(f"{display('benchmark', b)}: PEFT Ensemble aggregation rules")
            ax.set(xlabel="privacy level (δ = 1e-5)", ylabel="final average accuracy (%)")
            ax.legend(fontsize=7, loc="best")
        return fig

    def summarize(self, table: pd.DataFrame, p: RulesParams) -> pd.DataFrame:
        parts = []
        for rule in RULES:
            s = cl.summarize_final(table, ["benchmark", "eps_label"], rule)
            if len(s):
                s["rule"] = rule
                parts.append(s)
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
