"""cl Table A7 and Figs. A7/A8, cosine-classifier rows: 5-Datasets over all 120 task orders.

5-Datasets (MNIST, SVHN, notMNIST, FashionMNIST, CIFAR-10; one task each) at ε ∈ {1, 8} and
non-DP, δ = 1e-5, S_prior^const (all 50 labels at every task). The paper trains "three models"
and evaluates every permutation of the tasks; Table A7 reports mean ± std over permutations.

For the cosine classifier a "model" is the sequence of noise draws z_1..z_T (one per task
position, Alg. 1). Under S_prior^const the state after t tasks of order π is
Σ_{j≤t} D_{π_j} + Σ_{j≤t} z_j: it depends only on the *set* of members seen and on t. So every
permutation of a model is evaluated from the 2⁵ − 1 = 31 distinct states instead of 600 runs,
exactly (each permutation sees the same law of noise as an independent run; permutations of one
model share noise, as the paper's permutations of one trained model do).
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privrepro.continual.cosine import CosineClassifier, noise_std
from privrepro.continual.label_spaces import prior_const_label_spaces
from privrepro.continual.metrics import FORGETTING_SINCE, average_accuracy, average_forgetting
from privrepro.continual.scenarios import FIVE_DATASETS, five_datasets
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.figures.cl._cosine_common import (
    FeatureParams,
    load_features,
    median_min_max,
    plot_task_curves,
    privacy_label,
    privacy_levels,
)
from privrepro.plotting.style import new_figure

__all__ = ["FiveDatasetsCosine", "FiveDatasetsParams", "all_orders_accuracy"]


@dataclass
class FiveDatasetsParams:
    """Table A7's grid (cosine rows)."""

    epsilons: list[float] = param(
        [1.0, 8.0], gt=0, doc="per-task ε (parallel composition)", unique=True
    )
    non_dp: bool = param(True)
    delta: float = param(1e-5, gt=0, lt=1)
    models: int = param(3, ge=1, le=100, doc="independent models (noise sequences), paper: 3")
    max_orders: int = param(120, ge=1, le=120, doc="task orders evaluated (all 5! = 120)")
    forgetting_since: str = param("paper", choices=FORGETTING_SINCE)
    features: FeatureParams = field(default_factory=FeatureParams)


def all_orders_accuracy(
    x: np.ndarray,
    y: np.ndarray,
    xte: np.ndarray,
    yte: np.ndarray,
    member_train: list[np.ndarray],
    member_test: list[np.ndarray],
    num_classes: int,
    sigma: float,
    rng: np.random.Generator,
    orders: list[tuple[int, ...]],
) -> dict[tuple[int, ...], np.ndarray]:
    """acc[t, i] (i indexing tasks in each order) for every order, from one noise sequence."""
    T = len(member_train)
    dim = x.shape[1]
    z = sigma * rng.standard_normal((T, num_classes, dim)) if sigma > 0 else None
    space = prior_const_label_spaces(num_classes, 1)[0]
    member_sums = []
    for m in range(T):  # data part of each member's contribution (σ = 0)
        c = CosineClassifier(num_classes, dim)
        c.update(x[member_train[m]], y[member_train[m]], space, 0.0, rng)
        member_sums.append(c.sums)
    member_acc: dict[frozenset[int], np.ndarray] = {}
    for t in range(1, T + 1):
        noise_t = z[:t].sum(axis=0) if z is not None else np.zeros((num_classes, dim))
        for subset in itertools.combinations(range(T), t):
            clf = CosineClassifier(num_classes, dim)
            clf.sums = np.sum([member_sums[m] for m in subset], axis=0) + noise_t
            clf.released[:] = True
            correct = clf.predict(xte) == yte
            member_acc[frozenset(subset)] = np.array(
                [correct[member_test[m]].mean() for m in range(T)]
            )
    out = {}
    for order in orders:
        acc = np.empty((T, T))
        for t in range(T):
            per_member = member_acc[frozenset(order[: t + 1])]
            acc[t] = per_member[list(order)]
        out[order] = acc
    return out


class FiveDatasetsCosine(Figure[FiveDatasetsParams]):
    """Cosine classifier on 5-Datasets, every task order (Table A7, Figs. A7/A8)."""

    params_type = FiveDatasetsParams
    title = "cl Table A7, Figs. A7/A8 — cosine classifier on 5-Datasets, all task orders"

    def units(self, params: FiveDatasetsParams) -> list[dict[str, Any]]:
        return [
            {
                "epsilon": e,
                "model": m,
                "delta": params.delta,
                "max_orders": params.max_orders,
                "forgetting_since": params.forgetting_since,
                "features": asdict(params.features),
            }
            for e in privacy_levels(params.epsilons, params.non_dp)
            for m in range(params.models)
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        data, meta = load_features("5-datasets", unit["features"], ctx)
        sc = five_datasets(data)  # members in the canonical order: task m = member m
        orders = list(itertools.permutations(range(len(FIVE_DATASETS))))[: unit["max_orders"]]
        sigma = noise_std(unit["epsilon"], unit["delta"])
        accs = all_orders_accuracy(
            data.train_x,
            data.train_y,
            data.test_x,
            data.test_y,
            list(sc.train_tasks),
            list(sc.test_tasks),
            data.num_classes,
            sigma,
            ctx.rng("noise"),
            orders,
        )
        rows = []
        for k, (order, acc) in enumerate(accs.items()):
            aa = average_accuracy(acc)
            af = average_forgetting(acc, unit["forgetting_since"])
            for t in range(acc.shape[0]):
                rows.append(
                    {
                        "privacy": privacy_label(unit["epsilon"]),
                        "epsilon": np.nan if unit["epsilon"] is None else unit["epsilon"],
                        "delta": unit["delta"],
                        "model": unit["model"],
                        "order_index": k,
                        "order": "-".join(FIVE_DATASETS[m] for m in order),
                        "task": t + 1,
                        "aa": 100 * aa[t],
                        "af": 100 * af[t],
                        "sigma": sigma,
                        "feature_source": meta["feature_source"],
                        "backbone": meta["backbone"],
                    }
                )
        return pd.DataFrame(rows)

    def summarize(self, table: pd.DataFrame, params: FiveDatasetsParams) -> pd.DataFrame:
        final = table[table["task"] == table["task"].max()]
        rows = []
        for value in ("aa", "af"):
            st = median_min_max(final, ["privacy"], value)
            for _, r in st.iterrows():
                rows.append(
                    {"metric": f"final_{value}_mean", "privacy": r["privacy"], "value": r["mean"]}
                )
                rows.append(
                    {"metric": f"final_{value}_std", "privacy": r["privacy"], "value": r["std"]}
                )
        return pd.DataFrame(rows)

    def plot(self, table: pd.DataFrame, params: FiveDatasetsParams) -> Any:
        fig, axes = new_figure(1, 2, width=4.2, height=3.2, squeeze=False)
        order = [privacy_label(e) for e in privacy_levels(params.epsilons, params.non_dp)]
        for col, (value, label, name) in enumerate(
            [("aa", "AA_t (%)", "Fig. A7"), ("af", "AF_t (%)", "Fig. A8")]
        ):
            ax = axes[0][col]
            plot_task_curves(ax, table, order, value)
            ax.set_ylabel(label)
            ax.set_title(f"5-Datasets, {name}")
            ax.legend(frameon=False, fontsize=7)
        fig.suptitle(
            "Cosine Classifier, S_prior^const; median with min/max over all task orders and models",
            fontsize=9,
        )
        return fig
