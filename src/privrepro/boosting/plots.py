"""Drawing the rows of :func:`privrepro.boosting.epsilon_sweep.sweep` (pb Figs. 2–3).

Panels as in the paper; colour = case, line style = accountant (solid: the paper's formulas,
dashed: exact), marker = privacy level (δ or α). The sound bound stays in the table but is not
drawn, to keep the panels legible. matplotlib is imported when a plot is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

__all__ = ["CASE_COLOURS", "CASE_LABELS", "level_label", "plot_sweep"]

CASE_COLOURS = {
    "gaussian": "#000000",
    "relative": "#0072B2",
    "fixed": "#009E73",
    "absolute": "#D55E00",
}
CASE_LABELS = {
    "gaussian": "Gaussian (same ρ)",
    "relative": "PB relative error",
    "fixed": "PB fixed region",
    "absolute": "PB absolute error",
}
ACCOUNTANT_STYLES = {"paper": "-", "exact": "--", "sound": ":"}
ACCOUNTANT_LABELS = {
    "paper": "paper's formulas (Props. 1–2)",
    "exact": "exact (output densities)",
    "sound": "sound bound (note §2.2)",
}
MARKERS = ["o", "s", "^", "D", "v"]


def level_label(notion: str, level: float) -> str:
    """``δ = 1e-5`` or ``α = 2``."""
    if notion == "dp":
        return f"δ = 1e{round(math.log10(level))}"
    return f"α = {level:g}"


def plot_sweep(
    table: pd.DataFrame, x: str, xlabel: str, panel_titles: Mapping[str, str], suptitle: str
) -> Any:
    """One axis per panel of ``panel_titles`` present in ``table``: ε (log scale) against ``x``."""
    from matplotlib.lines import Line2D

    from privrepro.plotting.style import new_figure

    panels = [p for p in panel_titles if p in set(table["panel"])]
    ncols = 2 if len(panels) > 1 else 1
    nrows = (len(panels) + ncols - 1) // ncols
    fig, axes = new_figure(nrows, ncols, width=4.4, height=3.3, squeeze=False)
    for i, panel in enumerate(panels):
        ax = axes[i // ncols][i % ncols]
        _draw_panel(ax, table[table["panel"] == panel], x)
        ax.set_title(panel_titles[panel], fontsize=9)
        ax.set_xlabel(xlabel)
    for k in range(len(panels), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    handles = [Line2D([], [], color=CASE_COLOURS[c], label=CASE_LABELS[c]) for c in CASE_COLOURS]
    handles += [
        Line2D([], [], color="0.3", ls=ACCOUNTANT_STYLES[a], label=ACCOUNTANT_LABELS[a])
        for a in ("paper", "exact")
        if a in set(table["accountant"])
    ]
    fig.legend(handles=handles, loc="outside right upper", ncol=1, fontsize=7.5, frameon=False)
    fig.suptitle(suptitle, fontsize=10)
    return fig


def _draw_panel(ax: Any, sub: pd.DataFrame, x: str) -> None:
    """Every (level, case, accountant) curve of one panel; the levels' markers in its legend."""
    from matplotlib.lines import Line2D

    notion = sub["notion"].iloc[0]
    levels = sorted(sub["level"].unique(), reverse=notion == "dp")
    others = sub[(sub["case"] != "fixed") & (sub["epsilon"] > 0)]["epsilon"]
    floor = float(others.min()) / 3 if len(others) else 1e-7
    for j, level in enumerate(levels):
        lev = sub[sub["level"] == level]
        for case in CASE_COLOURS:
            for acc in ("paper", "exact"):
                cur = lev[(lev["case"] == case) & (lev["accountant"] == acc)].sort_values(x)
                if not cur.empty:
                    _draw_curve(ax, cur, x, case, acc, MARKERS[j % len(MARKERS)], floor)
    if (sub[sub["case"] == "fixed"]["epsilon"] < floor).any():
        ax.text(
            0.01,
            0.01,
            f"fixed region: ε < {floor:.1g} (degenerate; drawn at floor)",
            transform=ax.transAxes,
            fontsize=6.5,
            color=CASE_COLOURS["fixed"],
            va="bottom",
        )
    ax.set_yscale("log")
    ax.set_ylabel("ε")
    handles = [
        Line2D([], [], color="0.3", ls="", marker=MARKERS[j % len(MARKERS)], ms=4, label=lab)
        for j, lab in enumerate(level_label(notion, lv) for lv in levels)
    ]
    ax.legend(handles=handles, fontsize=7, frameon=False, loc="best")


def _draw_curve(
    ax: Any, cur: pd.DataFrame, x: str, case: str, acc: str, marker: str, floor: float
) -> None:
    hollow = acc == "exact" and case != "gaussian"
    ax.plot(
        cur[x],
        cur["epsilon"].clip(lower=floor),
        "-" if case == "gaussian" else ACCOUNTANT_STYLES[acc],
        color=CASE_COLOURS[case],
        marker=marker,
        markevery=max(1, len(cur) // 6),
        ms=3.5,
        lw=0.9 if hollow else 1.2,
        mfc="none" if hollow else CASE_COLOURS[case],
    )
