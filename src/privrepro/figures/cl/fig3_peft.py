"""cl Fig. 3 and Fig. A2 (PEFT rows of Table A3): label granularity and dummy labels.

PEFT Ensemble (FiLM) final accuracy on Split-CIFAR-100 and Split-ImageNet-R at δ = 1e-5 for the
label configurations of Sec. 7.1: exact S_prior (10/20 labels per task), S_prior^const (all 100 /
200 base labels) and S_prior^const with ×10, ×100, ×1000 dummy labels (reference size: the base
label set, see ``dummy_reference``). Fig. 3: CIFAR ε = 1, ImageNet-R ε = 8; Fig. A2: the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from privrepro.continual.benchmarks import BENCHMARKS
from privrepro.continual.label_spaces import label_config, label_config_name
from privrepro.continual.peft import eps_label
from privrepro.continual.plots import category_markers
from privrepro.continual.repeat_summaries import final_metrics
from privrepro.figures.api import UnitContext, param
from privrepro.figures.cl import _common as cl
from privrepro.plotting.names import display, math_text
from privrepro.plotting.style import new_figure

__all__ = ["LabelGranularityParams", "LabelGranularityPeft"]


@dataclass
class LabelGranularityParams(cl.EnsembleParams):
    benchmarks: list[str] = param(["cifar100", "imagenet-r"], choices=BENCHMARKS, unique=True)
    epsilons: list[float] = param([1.0, 8.0], gt=0, unique=True)
    configs: list[str] = param(
        ["prior", "const", "x10", "x100", "x1000"],
        choices=["prior", "const", "x10", "x100", "x1000"],
        doc="Table A3 columns",
        unique=True,
    )
    dummy_reference: str = param(
        "base",
        choices=["base", "task"],
        assumed="×f relative to the base label set (Sec. 7.1 is ambiguous)",
    )


class LabelGranularityPeft(cl.PeftFigure[LabelGranularityParams]):
    title = "PEFT Ensemble under exact / constant prior label sets and dummy labels (Table A3)"

    def units(self, p: LabelGranularityParams) -> list[dict[str, Any]]:
        fixed = {"method": p.method, "dummy_reference": p.dummy_reference, "nb_tasks": p.nb_tasks}
        units = cl.peft_units(
            p,
            fixed,
            benchmark=p.benchmarks,
            epsilon=p.epsilons,
            repeat=range(p.repeats),
            config=p.configs,
        )
        for u in units:  # Table A3's column → (label policy, dummy factor)
            u["label_policy"], u["dummy_factor"] = label_config(u["config"])
        return units

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        rows = cl.run_peft_unit(unit, ctx).rows
        rows["config"] = unit["config"]
        return rows

    def plot(self, table: pd.DataFrame, p: LabelGranularityParams) -> Any:
        panels = [(b, e) for b in p.benchmarks for e in p.epsilons]
        fig, axes = new_figure(1, len(panels), width=3.8, height=3.2, squeeze=False)
        for ax, (b, e) in zip(axes[0], panels, strict=False):
            sub = table[(table["benchmark"] == b) & (table["eps_label"] == eps_label(e))]
            f = final_metrics(sub, ["config"])
            configs = [c for c in p.configs if len(f) and c in set(f["config"])]
            category_markers(
                ax,
                f,
                "config",
                configs,
                names=lambda c: math_text(label_config_name(c)),
                label="PEFT Ensemble",
            )
            ax.set(title=f"{display('benchmark', b)}, {eps_label(e)}")
            ax.set_ylabel("final average accuracy (%)")
            ax.tick_params(axis="x", labelrotation=20)
        fig.suptitle(
            "PEFT Ensemble: label match and additional dummy labels; median, min/max over repeats",
            fontsize=9,
        )
        return fig

    def summarize(self, table: pd.DataFrame, p: LabelGranularityParams) -> pd.DataFrame:
        return cl.summarize_final(table, ["benchmark", "eps_label", "config"])
