"""cl Table A7 and Figs. A7/A8: 5-Datasets over task-order permutations.

5 tasks (MNIST, SVHN, notMNIST, FashionMNIST, CIFAR-10; 10 classes each), δ = 1e-5, ε ∈ {1, 8}
and non-DP; AA and AF "averaged over all task order permutations" (cl paper, App. F.5).

The PEFT Ensemble's members do not depend on the task order (each sees only its own task), so
each repeat trains the five members once and evaluates all 5! = 120 orders from their logits.
Naive depends on the order; the paper does not say how many orders it trained, so
``naive_orders`` random orders per repeat are trained (assumed). Tuning uses a CIFAR-10 subset of
10 % of the training size with a 4.28 % validation set (App. F).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from privrepro.figures.api import Figure, UnitContext, param
from privrepro.figures.cl.common_peft import (
    FeatureParams,
    FilmParams,
    TrainParams,
    TuneParams,
    check_film_source,
    eps_label,
    run_peft_unit,
    settings_of,
)
from privrepro.figures.cl.fig5_peft import summarize_final
from privrepro.plotting.style import new_figure
from privrepro.seeding import numpy_stream

__all__ = ["FiveDatasetsParams", "FiveDatasetsPeft"]


@dataclass
class FiveDatasetsParams:
    methods: list[str] = param(
        ["peft_film", "naive_film"],
        choices=["peft_film", "peft_head", "naive_film", "naive_head"],
        unique=True,
    )
    epsilons: list[float | None] = param([1.0, 8.0, None], gt=0, unique=True)
    repeats: int = param(3, ge=1, doc="'three models' (Fig. A7 caption)")
    max_orders: int = param(120, ge=1, le=120, doc="task orders evaluated for the ensemble")
    naive_orders: int = param(
        3, ge=1, le=120, assumed="how many orders Naive was trained on is not stated"
    )
    features: FeatureParams = param(FeatureParams())
    film: FilmParams = param(FilmParams())
    train: TrainParams = param(TrainParams())
    tuning: TuneParams = param(TuneParams(tune_task=4, tune_fraction=0.1, val_fraction=0.0428))


def _orders(k: int, seed: int, tag: str) -> list[list[int]]:
    perms = [list(p) for p in itertools.permutations(range(5))]
    if k >= len(perms):
        return perms
    rng = numpy_stream(seed, "cl-tA7", tag)
    return [perms[i] for i in sorted(rng.choice(len(perms), size=k, replace=False))]


class FiveDatasetsPeft(Figure[FiveDatasetsParams]):
    params_type = FiveDatasetsParams
    title = "PEFT Ensemble and Naive on 5-Datasets over task orders (Table A7, Figs. A7/A8)"

    def units(self, p: FiveDatasetsParams) -> list[dict[str, Any]]:
        check_film_source(p.features, ["5-datasets"], p.methods)
        common = {"benchmark": "5-datasets", **settings_of(p)}
        out: list[dict[str, Any]] = []
        for e in p.epsilons:
            for r in range(p.repeats):
                for m in p.methods:
                    if m.startswith("peft"):
                        out.append(
                            {
                                **common,
                                "method": m,
                                "epsilon": e,
                                "repeat": r,
                                "save_logits": True,
                                "max_orders": p.max_orders,
                            }
                        )
                    else:
                        for o in _orders(p.naive_orders, r, f"naive-{e}"):
                            out.append(
                                {**common, "method": m, "epsilon": e, "repeat": r, "order": o}
                            )
        return out

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        rows, logits = run_peft_unit(unit, ctx)
        if not unit["method"].startswith("peft"):
            return rows
        return pd.concat(
            [rows[rows["row"] != "metric"], _permuted(rows, logits, unit["max_orders"])],
            ignore_index=True,
        )

    def plot(self, table: pd.DataFrame, p: FiveDatasetsParams) -> Any:
        fig, axes = new_figure(1, 2, width=4.6, height=3.4, squeeze=False)
        m = table[table["row"] == "metric"]
        for ax, metric in zip(axes[0], ("AA", "AF"), strict=True):
            sub = m[m["metric"] == metric]
            for (meth, el), g in sub.groupby(["method", "eps_label"]):
                s = g.groupby("t")["value"].agg(["median", "min", "max"]) * 100
                ax.errorbar(
                    s.index,
                    s["median"],
                    yerr=[s["median"] - s["min"], s["max"] - s["median"]],
                    marker="o",
                    capsize=2,
                    label=f"{meth} {el}",
                )
            ax.set_xlabel("task t")
            ax.set_ylabel(f"{metric}_t (%)")
            ax.legend(fontsize=6)
        return fig

    def summarize(self, table: pd.DataFrame, p: FiveDatasetsParams) -> pd.DataFrame:
        t = table.copy()
        t["repeat"] = t["repeat"].astype(str) + "/" + t["order"].astype(str)  # runs = orders
        return summarize_final(t, ["method", "eps_label"])


def _permuted(rows: pd.DataFrame, logits: dict[str, np.ndarray], max_orders: int) -> pd.DataFrame:
    """AA_t / AF_t of the ensemble under every task order, from the members' saved logits."""
    from privrepro.continual.ensemble import accuracy_matrix, combine_best, member_best
    from privrepro.continual.metrics import average_accuracy, average_forgetting

    base = rows.iloc[0][
        [
            "benchmark",
            "method",
            "epsilon",
            "eps_label",
            "repeat",
            "label_policy",
            "dummy_factor",
            "blurry",
        ]
    ].to_dict()
    y = torch.as_tensor(logits["y_test"])
    task = torch.as_tensor(logits["test_task"])
    nb = 5
    best = [
        member_best(torch.as_tensor(logits[f"member{k}"]), torch.as_tensor(logits[f"labels{k}"]))
        for k in range(nb)
    ]
    out = []
    perms = [list(p) for p in itertools.permutations(range(nb))][:max_orders]
    for order in perms:
        preds = [
            combine_best(
                torch.stack([best[o][0] for o in order[: t + 1]]),
                torch.stack([best[o][1] for o in order[: t + 1]]),
            )
            for t in range(nb)
        ]
        acc = accuracy_matrix(torch.stack(preds), y, task, nb).numpy()[:, order]
        aa, af = average_accuracy(acc), average_forgetting(acc)
        for t in range(nb):
            for metric, v in (("AA", aa[t]), ("AF", af[t])):
                out.append(
                    {
                        **base,
                        "row": "metric",
                        "rule": "argmax",
                        "metric": metric,
                        "t": t + 1,
                        "value": float(v),
                        "order": "-".join(map(str, order)),
                    }
                )
    _ = eps_label
    return pd.DataFrame(out)
