"""ip Fig. 5: Gauss-Output accuracy of the SLL network against ε for several radii α.

The notebooks loop ε = 0.5 + 0.05·i while ε < 5.5 (101 values, last ≈ 5.5) but plot them at
``linspace(0.5, 5, 101)``, mislabelling the x-axis by up to 10 %; this figure plots the true ε
(the notebooks' positions are kept in the column ``epsilon_notebook_x``). The noise depends on
α/ε only, so the curves are rescalings of one another (the paper's remark on α = 0.01, ε = 0.1
and α = 0.1, ε = 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.config.validation import param
from privrepro.figures.api import UnitContext
from privrepro.figures.ip.common import STYLE, AccuracyFigure, IPParams, accuracy_units, finish_axes
from privrepro.plotting.lines import split_lines
from privrepro.plotting.names import display
from privrepro.plotting.style import PALETTE, new_figure


@dataclass
class Fig5Params(IPParams):
    """α values and the ε loop of the notebooks."""

    dataset: str = param("cifar10", choices=["cifar10", "cifar100", "digits", "synthetic_images"])
    alphas: list[float] = param(
        [0.0, 0.05, 0.07, 0.1, 0.2],
        ge=0,
        assumed="not in the paper; the notebooks' radii",
        unique=True,
    )
    eps_start: float = param(0.5, gt=0, assumed="not in the paper; the notebooks' loop start")
    eps_step: float = param(0.05, gt=0, assumed="the notebooks' step")
    eps_count: int = param(101, ge=1, assumed="the notebooks' loop runs while ε < 5.5: 101 values")

    def epsilons(self) -> list[float]:
        """ε = start + step·i, i < count (exact multiples, not the notebooks' accumulated sum)."""
        return [round(self.eps_start + self.eps_step * i, 12) for i in range(self.eps_count)]


class GaussOutputTradeoff(AccuracyFigure[Fig5Params]):
    """Fig. 5: SLL Gauss-Output accuracy vs ε, one curve per α."""

    title = "ip Fig. 5 — SLL Gauss-Output accuracy vs ε for radii α (δ = 1e-5)"
    series = ("sll_output",)

    def units(self, params: Fig5Params) -> list[dict[str, Any]]:
        points = [[a, e] for a in params.alphas for e in params.epsilons()]
        return accuracy_units(params, params.dataset, points, groups=["sll"])

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        df = super().compute(unit, ctx)
        n = len(df) // max(len({a for a, _ in unit["points"]}), 1)
        df["epsilon_notebook_x"] = np.tile(np.linspace(0.5, 5.0, n), len(df) // n) if n else []
        return df

    def plot(self, table: pd.DataFrame, params: Fig5Params) -> Any:
        fig, ax = new_figure(width=5.6, height=3.8)
        alphas = sorted(table["alpha"].unique())
        colours = {f"α = {a:g}": PALETTE[i % len(PALETTE)] for i, a in enumerate(alphas)}
        for (mode, alpha), sub in split_lines(table, "epsilon", mode=list(STYLE), alpha=alphas):
            color = PALETTE[alphas.index(alpha) % len(PALETTE)]
            ax.plot(sub["epsilon"], sub["accuracy"], ls=STYLE[mode], color=color)
        ax.set_title(
            f"{display('dataset', params.dataset)}: SLL Gauss-Output, δ = {params.delta:g}, "
            f"{params.n_draws} draws",
            fontsize=9,
        )
        modes = [m for m in STYLE if m in set(table["mode"])]
        finish_axes(ax, "privacy budget ε (true values)", colours, modes, marker=None)
        return fig
