"""ip Fig. 6 ("Table 6"): accuracy under IP constraints on CIFAR-10 and CIFAR-100, δ = 1e-5.

Rows: one per dataset and α; columns: ε; cells: the four series. The paper's figure is an image
without numbers; the notebooks print the CIFAR-10 ResNet-Tune column and all four CIFAR-100
columns (``src/privrepro/report/references/ip.yaml``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from privrepro.config.validation import param
from privrepro.figures.ip.common import AccuracyFigure, IPParams, accuracy_units
from privrepro.inference.sweep import SERIES, SERIES_LABEL
from privrepro.plotting.names import display
from privrepro.plotting.style import new_figure


@dataclass
class TableBlock:
    """One dataset's grid of the table."""

    dataset: str = param("cifar10", choices=["cifar10", "cifar100", "digits", "synthetic_images"])
    alphas: list[float] = param([0.1], ge=0, unique=True)
    epsilons: list[float] = param([1.0], gt=0, unique=True)


@dataclass
class Fig6Params(IPParams):
    """The table's blocks (notebooks: CIFAR-10 ε {0.1, 1, 10} × α {0.001, 0.01, 0.1, 0.2};
    CIFAR-100 ε {0.1, 1, 2, 10} × α {0.001, 0.01, 0.05, 0.1, 0.2})."""

    blocks: list[TableBlock] = field(default_factory=lambda: [TableBlock()])


class AccuracyTable(AccuracyFigure[Fig6Params]):
    """Fig. 6: the accuracy table for CIFAR-10 and CIFAR-100."""

    title = "ip Fig. 6 (Table 6) — accuracy under {(ε, 1e-5), α} IP, CIFAR-10 and CIFAR-100"
    kind = "table"

    paper_datasets: ClassVar[Mapping[str, str]] = {"cifar100": "CIFAR-100"}

    def units(self, params: Fig6Params) -> list[dict[str, Any]]:
        return [
            unit
            for b in params.blocks
            for unit in accuracy_units(
                params, b.dataset, [[a, e] for a in b.alphas for e in b.epsilons]
            )
        ]

    def plot(self, table: pd.DataFrame, params: Fig6Params) -> Any:
        blocks = [(d, m) for d in table["dataset"].unique() for m in table["mode"].unique()]
        n_rows = {d: table.loc[table["dataset"] == d, "alpha"].nunique() for d in table["dataset"]}
        height = 0.9 + 0.32 * max(n_rows.values(), default=1)
        fig, axes = new_figure(nrows=len(blocks), width=9.0, height=height, squeeze=False)
        for ax, (dataset, mode) in zip(axes[:, 0], blocks, strict=True):
            sub = table[(table["dataset"] == dataset) & (table["mode"] == mode)]
            cells = _cells(sub)
            ax.axis("off")
            tab = ax.table(
                cellText=cells.to_numpy(),
                rowLabels=[f"α={a:g}" for a in cells.index],
                colLabels=[f"ε={e:g}" for e in cells.columns],
                loc="center",
                cellLoc="center",
            )
            tab.auto_set_font_size(False)
            tab.set_fontsize(7)
            present = [s for s in SERIES if s in set(sub["series"])]
            ax.set_title(
                f"{display('dataset', dataset)}, {display('mode', mode)} (δ = {params.delta:g}, "
                f"{params.n_draws} draws): " + " / ".join(SERIES_LABEL[s] for s in present),
                fontsize=8,
            )
        return fig


def _cells(sub: pd.DataFrame) -> pd.DataFrame:
    """α × ε text cells: each point's accuracies, one per series in the order of ``SERIES``."""
    order = pd.Categorical(sub["series"], categories=list(SERIES), ordered=True)
    first = sub.assign(order=order).sort_values("order", kind="stable")
    first = first.drop_duplicates(["alpha", "epsilon", "series"])
    text = first.assign(text=first["accuracy"].map("{:.3f}".format))
    cells = text.pivot_table("text", "alpha", "epsilon", aggfunc=" / ".join, sort=True)
    return cells.fillna("")
