"""cl Table A7 and Figs. A7/A8: 5-Datasets over task-order permutations.

5 tasks (MNIST, SVHN, notMNIST, FashionMNIST, CIFAR-10; 10 classes each), δ = 1e-5, ε ∈ {1, 8}
and non-DP; AA and AF "averaged over all task order permutations" (cl paper, App. F.5).

The PEFT Ensemble's members do not depend on the task order (each sees only its own task), so
each repeat trains the five members once and evaluates all 5! = 120 orders from their logits
(:func:`privrepro.continual.peft.ensemble_all_orders`). Naive depends on the order; the paper
does not say how many orders it trained; "after training three models" is read as one random
order per repeat (``naive_orders``, assumed). Tuning uses a CIFAR-10 subset of 10 % of the training size with a 4.28 % validation
set (App. F).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from privrepro.continual.peft import TuningSettings, ensemble_all_orders
from privrepro.continual.plots import median_errorbar
from privrepro.continual.scenarios import sample_task_orders
from privrepro.figures.api import UnitContext, check_unit_count, param
from privrepro.figures.cl import _common as cl
from privrepro.plotting.names import display, math_text
from privrepro.plotting.style import new_figure
from privrepro.seeding import numpy_stream

__all__ = ["FiveDatasetsParams", "FiveDatasetsPeft"]


@dataclass
class FiveDatasetsParams(cl.PeftParams):
    methods: list[str] = param(
        ["peft_film", "naive_film"],
        choices=["peft_film", "peft_head", "naive_film", "naive_head"],
        unique=True,
    )
    epsilons: list[float | None] = param([1.0, 8.0, None], gt=0, unique=True)
    repeats: int = param(3, ge=1, doc="'three models' (Fig. A7 caption)")
    max_orders: int = param(120, ge=1, le=120, doc="task orders evaluated for the ensemble")
    naive_orders: int = param(
        1,
        ge=1,
        le=120,
        assumed="Naive's task orders per (ε, repeat): Figs. A7/A8 show min/max 'over all "
        "permutations of tasks after training three models', read as one random order per "
        "(ε, seed), three seeds; 3: three orders per (ε, seed), nine models",
    )
    tuning: TuningSettings = param(
        TuningSettings(tune_task=4, tune_fraction=0.1, val_fraction=0.0428)
    )


class FiveDatasetsPeft(cl.PeftFigure[FiveDatasetsParams]):
    title = "PEFT Ensemble and Naive on 5-Datasets over task orders (Table A7, Figs. A7/A8)"

    def units(self, p: FiveDatasetsParams) -> list[dict[str, Any]]:
        common = {"benchmark": "5-datasets", **cl.peft_settings(p)}
        ensemble = {"save_logits": True, "max_orders": p.max_orders}
        peft_methods = sum(m.startswith("peft") for m in p.methods)
        per_repeat = peft_methods + (len(p.methods) - peft_methods) * p.naive_orders
        axes = {"epsilon": len(p.epsilons), "repeat": p.repeats, "method or order": per_repeat}
        check_unit_count(axes)  # before a single unit is made
        out: list[dict[str, Any]] = []
        for e in p.epsilons:
            for r in range(p.repeats):
                for m in p.methods:
                    run = {**common, "method": m, "epsilon": e, "repeat": r}
                    if m.startswith("peft"):
                        out.append({**run, **ensemble})
                    else:
                        rng = numpy_stream(r, "cl-tA7", f"naive-{e}")  # drawn per repeat and ε
                        orders = sample_task_orders(p.naive_orders, rng)
                        out += [{**run, "order": o} for o in orders]
        return cl.checked(p, out)

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        rows, logits = cl.run_peft_unit(unit, ctx)
        if not unit["method"].startswith("peft"):
            return rows
        orders = ensemble_all_orders(rows, logits, unit["max_orders"])
        return pd.concat([rows[rows["row"] != "metric"], orders], ignore_index=True)

    def plot(self, table: pd.DataFrame, p: FiveDatasetsParams) -> Any:
        fig, axes = new_figure(1, 2, width=4.6, height=3.4, squeeze=False)
        m = table[table["row"] == "metric"]
        for ax, metric in zip(axes[0], ("AA", "AF"), strict=True):
            sub = m[m["metric"] == metric]
            for (meth, el), g in sub.groupby(["method", "eps_label"]):
                s = g.groupby("t")["value"].agg(["median", "min", "max"]) * 100
                label = f"{display('cl_method', meth)}, {el}"
                median_errorbar(ax, s.index, s, fmt="-o", capsize=2, label=label)
            ax.set(xlabel="task t", ylabel=math_text(f"{metric}_t (%)"))
            ax.set_xticks(sorted({int(t) for t in sub["t"].dropna()}))
        handles, labels = axes[0][0].get_legend_handles_labels()
        if handles:
            fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=7.5)
        fig.suptitle(
            math_text("5-Datasets over task orders: median, min/max (AA_t left, AF_t right)"),
            fontsize=9,
        )
        return fig

    def summarize(self, table: pd.DataFrame, p: FiveDatasetsParams) -> pd.DataFrame:
        t = table.copy()
        t["repeat"] = t["repeat"].astype(str) + "/" + t["order"].astype(str)  # runs = orders
        return cl.summarize_final(t, ["method", "eps_label"])
