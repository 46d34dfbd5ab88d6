"""cl Fig. 2: the probability that a class of k examples is dropped by any (ε, δ)-DP label release.

By group privacy (cl paper, Sec. 4.4) a label-release mechanism L that is (ε, δ)-DP is
(kε, δ_k)-DP for datasets differing in k examples, δ_k = Σ_{i=0}^{k−1} e^{iε} δ. A class absent
from the neighbour is never released there, so Pr[y ∉ L(D)] ≥ 1 − δ_k. The caption's claim:
at ε = 1, δ = 1e-7 classes of fewer than 13 samples are dropped with probability ≥ 0.99.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib.ticker
import pandas as pd

from privrepro.continual.label_spaces import class_drop_curve, class_drop_summary
from privrepro.data.provenance import ANALYTIC
from privrepro.figures.api import Figure, PaperValue, UnitContext, grid_units, param
from privrepro.plotting.style import new_figure

__all__ = ["DropParams", "DropProbability"]


@dataclass
class DropParams:
    """The (ε, δ) series and the class-size axis of Fig. 2."""

    epsilons: list[float] = param(
        [0.1, 0.5, 1.0, 2.0, 4.0, 8.0],
        gt=0,
        doc="ε of the label release, one curve each",
        assumed="only ε=1 is stated; the grid spans the paper's ε range",
        unique=True,
    )
    deltas: list[float] = param(
        [1e-5, 1e-7],
        gt=0,
        lt=1,
        doc="δ of the label release",
        assumed="only δ=1e-7 is stated; 1e-5 is the paper's training δ",
        unique=True,
    )
    k_max: int = param(
        100,
        ge=1,
        le=100_000,
        doc="largest class size k on the x axis",
        assumed="the k-range is not stated",
    )
    threshold: float = param(0.99, gt=0, lt=1, doc="drop probability marked on the plot (caption)")


class DropProbability(Figure[DropParams]):
    """Lower bound 1 − δ_k on the drop probability of a class of k examples (one curve per (ε, δ))."""

    data = ANALYTIC
    title = "Probability that a class of k examples is dropped by an (ε, δ)-DP label release"

    def units(self, params: DropParams) -> list[dict[str, Any]]:
        return grid_units({"k_max": params.k_max}, delta=params.deltas, epsilon=params.epsilons)

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        return class_drop_curve(unit["epsilon"], unit["delta"], unit["k_max"])

    def summarize(self, table: pd.DataFrame, params: DropParams) -> pd.DataFrame:
        return pd.DataFrame(class_drop_summary(table, params.threshold))

    def plot(self, table: pd.DataFrame, params: DropParams) -> Any:
        from matplotlib.lines import Line2D

        fig, ax = new_figure(width=6.0, height=3.8)
        styles = ["-", "--", ":", "-."]
        epsilons = sorted(table["epsilon"].unique())
        deltas = sorted(table["delta"].unique(), reverse=True)
        colours = dict(zip(epsilons, [f"C{i}" for i in range(len(epsilons))], strict=True))
        for j, delta in enumerate(deltas):
            for eps in epsilons:
                sub = table[(table["epsilon"] == eps) & (table["delta"] == delta)].sort_values("k")
                if not sub.empty:
                    ax.plot(sub["k"], sub["drop_probability_lb"], styles[j % 4], color=colours[eps])
        ax.axhline(params.threshold, color="0.4", lw=0.8, ls=":")
        ax.text(
            ax.get_xlim()[1],
            params.threshold,
            f" {params.threshold:g}",
            va="center",
            fontsize=8,
            color="0.4",
        )
        ax.set_xscale("log")
        ax.set_xticks([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000])
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.set_xlim(1, table["k"].max())
        ax.set_xlabel("class size k (examples of the label in the task)")
        ax.set_ylabel(r"Pr[label dropped] lower bound, $1 - \delta_k$")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title("cl Fig. 2 — small classes cannot be released under (ε, δ)-DP")
        # colour = ε, line style = δ: each said once
        handles = [Line2D([], [], color=colours[e], label=f"ε = {e:g}") for e in epsilons]
        handles += [
            Line2D([], [], color="0.3", ls=styles[j % 4], label=f"δ = {d:.0e}")
            for j, d in enumerate(deltas)
        ]
        ax.legend(handles=handles, loc="center left", bbox_to_anchor=(1.06, 0.5), frameon=False)
        return fig

    def mark_paper_values(
        self, fig: Any, values: Sequence[PaperValue], table: pd.DataFrame, params: DropParams
    ) -> None:
        """The caption's class size (k = 12 at ε = 1, δ = 1e-7: "fewer than 13 samples") as a
        black cross on its curve, labelled with where the paper printed it."""
        ax = fig.axes[0]
        rest = []
        for v in values:
            eps, delta = v.where.get("epsilon"), v.where.get("delta")
            on = table[(table["epsilon"] == eps) & (table["delta"] == delta)]
            at = on[on["k"] == round(v.value)]
            if not v.metric.startswith("largest_k_dropped") or at.empty:
                rest.append(v)
                continue
            y = float(at["drop_probability_lb"].iloc[0])
            ax.plot([v.value], [y], "X", color="k", ms=8, zorder=6, label="paper (caption)")
            ax.annotate(
                f"paper: k = {v.value:g}\nat ε = {eps:g}, δ = {delta:.0e}\n({v.source})",
                (v.value, y),
                xytext=(0.715, 0.4),  # between the ε = 0.5 and ε = 0.1 drops: no curve there
                textcoords="axes fraction",
                ha="left",
                fontsize=7.5,
                bbox={"facecolor": "white", "edgecolor": "0.6", "pad": 2},
                arrowprops={"arrowstyle": "->", "color": "0.2", "lw": 0.8},
            )
        super().mark_paper_values(fig, rest, table, params)
