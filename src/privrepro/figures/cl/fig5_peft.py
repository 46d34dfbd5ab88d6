"""cl Fig. 5 (and Figs. A3–A6, Tables A5 and A6): PEFT Ensemble, Naive and Non-CL under DP-SGD.

Split-CIFAR-100 and Split-ImageNet-R, δ = 1e-5, ε ∈ {1, 8} and non-DP: final average accuracy
(AA) and forgetting (AF) of the PEFT Ensemble (FiLM and last layer), the Naive baseline and the
Non-CL baseline (cl paper, Sec. 7.3, App. F.3/F.4). Per-task curves AA_t / AF_t (Figs. A3–A6)
come from the same rows. The Cosine Classifier rows are the part-1 figures'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.figures.api import Figure, UnitContext, param
from privrepro.figures.cl.common_peft import (
    METHODS,
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
from privrepro.plotting.style import new_figure

__all__ = ["DomainShiftParams", "DomainShiftPeft"]


@dataclass
class DomainShiftParams:
    benchmarks: list[str] = param(
        ["cifar100", "imagenet-r"],
        choices=["cifar100", "imagenet-r", "5-datasets"],
        unique=True,
    )
    methods: list[str] = param(list(METHODS), choices=list(METHODS), unique=True)
    epsilons: list[float | None] = param(
        [1.0, 8.0, None], gt=0, doc="per-task ε; null = non-DP", unique=True
    )
    repeats: int = param(5, ge=1, doc="repeats (class order, tuning, noise); IN-R: 3 or 5")
    nb_tasks: int = param(10, ge=1, doc="tasks per benchmark (paper: 10)")
    features: FeatureParams = param(FeatureParams())
    film: FilmParams = param(FilmParams())
    train: TrainParams = param(TrainParams())
    tuning: TuneParams = param(TuneParams())


class DomainShiftPeft(Figure[DomainShiftParams]):
    params_type = DomainShiftParams
    title = "PEFT Ensemble, Naive and Non-CL with DP-SGD on Split-CIFAR-100 / Split-ImageNet-R"

    def units(self, p: DomainShiftParams) -> list[dict[str, Any]]:
        check_film_source(p.features, p.benchmarks, p.methods)
        return [
            {
                "benchmark": b,
                "method": m,
                "epsilon": e,
                "repeat": r,
                "nb_tasks": p.nb_tasks,
                **settings_of(p),
            }
            for b in p.benchmarks
            for e in p.epsilons
            for r in range(p.repeats)
            for m in p.methods
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        rows, _ = run_peft_unit(unit, ctx)
        return rows

    def plot(self, table: pd.DataFrame, p: DomainShiftParams) -> Any:
        return plot_final(table, p.benchmarks, "method")

    def summarize(self, table: pd.DataFrame, p: DomainShiftParams) -> pd.DataFrame:
        return summarize_final(table, ["benchmark", "method", "eps_label"])


def summarize_final(table: pd.DataFrame, keys: list[str], rule: str = "argmax") -> pd.DataFrame:
    out = []
    for metric in ("AA", "AF"):
        f = final_metrics(table, keys, metric, rule)
        for _, r in f.iterrows():
            for stat in ("mean", "std", "median", "min", "max"):
                out.append(
                    {
                        "metric": f"final_{metric}_{stat}",
                        **{k: r[k] for k in keys},
                        "value": r[stat],
                        "repeats": int(r["count"]),
                    }
                )
    return pd.DataFrame(out)


def plot_final(
    table: pd.DataFrame, panels: list[str], series: str, panel_key: str = "benchmark"
) -> Any:
    """Median final AA over repeats with min/max error bars (the paper's plotting rule)."""
    fig, axes = new_figure(1, len(panels), width=4.6, height=3.4, squeeze=False)
    order = [eps_label(e) for e in (1.0, 8.0, None)]
    for ax, panel in zip(axes[0], panels, strict=False):
        f = final_metrics(table[table[panel_key] == panel], [series, "eps_label"])
        names = list(dict.fromkeys(f[series])) if len(f) else []
        for k, name in enumerate(names):
            g = (
                f[f[series] == name]
                .set_index("eps_label")
                .reindex([o for o in order if o in set(f["eps_label"])])
            )
            x = np.arange(len(g)) + (k - (len(names) - 1) / 2) * 0.08
            ax.errorbar(
                x,
                g["median"],
                yerr=[g["median"] - g["min"], g["max"] - g["median"]],
                fmt="o",
                capsize=3,
                label=str(name),
            )
            ax.set_xticks(np.arange(len(g)), list(g.index))
        ax.set_title(str(panel))
        ax.set_ylabel("final average accuracy (%)")
        ax.legend(fontsize=7)
    return fig
