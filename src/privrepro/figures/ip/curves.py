"""The accuracy-curve recipe behind Figs. 3 and 4: one x-axis (α or ε), four series, two modes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pandas as pd

from privrepro.config.validation import param
from privrepro.figures.api import Figure, UnitContext
from privrepro.figures.ip.common import (
    SERIES,
    SERIES_LABEL,
    IPParams,
    compute_group,
    groups_of,
    params_from_unit,
    summarize_rows,
    unit_params,
)
from privrepro.plotting.style import PALETTE, new_figure


@dataclass
class CurveParams(IPParams):
    """An accuracy curve over α (ε fixed) or over ε (α fixed)."""

    dataset: str = param("cifar10", choices=["cifar10", "cifar100", "digits", "synthetic_images"])
    alphas: list[float] = param([0.1], ge=0, doc="radii α (ℓ2)", unique=True)
    epsilons: list[float] = param([1.0], gt=0, doc="privacy budgets ε", unique=True)


class AccuracyCurve(Figure[CurveParams]):
    """Accuracy of the four series against ``x`` (``alpha`` or ``epsilon``)."""

    params_type = CurveParams
    x: ClassVar[str] = "alpha"
    caption: ClassVar[str] = ""

    def units(self, params: CurveParams) -> list[dict[str, Any]]:
        points = [[a, e] for a in params.alphas for e in params.epsilons]
        return [
            {
                "dataset": params.dataset,
                "mode": mode,
                "group": group,
                "points": points,
                "params": unit_params(params),
            }
            for mode in params.modes
            for group in groups_of(params.series)
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        p = params_from_unit(unit)
        points = [(float(a), float(e)) for a, e in unit["points"]]
        return compute_group(ctx, unit["dataset"], unit["mode"], unit["group"], points, p)

    def plot(self, table: pd.DataFrame, params: CurveParams) -> Any:
        fig, ax = new_figure(width=5.6, height=3.8)
        styles = {"repo_compat": "-", "corrected": "--"}
        for i, series in enumerate(SERIES):
            for mode, style in styles.items():
                sub = table[(table["series"] == series) & (table["mode"] == mode)].sort_values(
                    self.x
                )
                if sub.empty:
                    continue
                ax.errorbar(
                    sub[self.x],
                    sub["accuracy"],
                    yerr=sub["accuracy_std"],
                    ls=style,
                    marker="o",
                    ms=3,
                    color=PALETTE[i],
                    capsize=2,
                    label=f"{SERIES_LABEL[series]} ({mode})",
                )
        ax.set_xlabel("radius α" if self.x == "alpha" else "privacy budget ε")
        ax.set_ylabel("accuracy")
        ax.set_ylim(0, 1.02)
        fixed = f"ε = {params.epsilons[0]:g}" if self.x == "alpha" else f"α = {params.alphas[0]:g}"
        ax.set_title(
            f"{params.dataset}: accuracy vs {'α' if self.x == 'alpha' else 'ε'}, {fixed}, "
            f"δ = {params.delta:g}\nmode: {', '.join(params.modes)}; "
            f"{params.n_draws} draws per point",
            fontsize=9,
        )
        ax.legend(fontsize=7, loc="best")
        return fig

    def summarize(self, table: pd.DataFrame, params: Any) -> pd.DataFrame | None:
        return summarize_rows(table)
