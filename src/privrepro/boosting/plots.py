"""Drawing the rows of each pb experiment as the paper's figure does (pb Figs. 1–7).

One function per experiment function of the package: :func:`plot_densities` (Fig. 1),
:func:`plot_sweep` (Figs. 2–3), :func:`plot_runtime` (Fig. 4), :func:`plot_fixed_region`
(Fig. 5), :func:`plot_composition` (Fig. 6), :func:`plot_grr_mse` (Fig. 7). Each takes the tidy
rows (from the function, or from a results table) and the words that depend on the run (titles),
and returns a ``matplotlib.figure.Figure`` in the project style. Throughout, solid lines are the
paper's accounting and dashed lines the exact one. matplotlib is imported when a plot is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "CASE_COLOURS",
    "CASE_LABELS",
    "level_label",
    "plot_composition",
    "plot_densities",
    "plot_fixed_region",
    "plot_grr_mse",
    "plot_runtime",
    "plot_sweep",
]

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
ACCOUNTANT_STYLES = {"paper": "-", "exact": "--", "sound": ":", "exact_best": ":"}
ACCOUNTANT_LABELS = {
    "paper": "paper's formulas (Props. 1–2)",
    "exact": "exact (output densities)",
    "sound": "sound bound ε₀ + L1 + L2",
    "exact_best": "exact at the best design (ε₀ minimising it)",
}
DRAWN_ACCOUNTANTS = ("paper", "exact", "exact_best")
MARKERS = ["o", "s", "^", "D", "v"]


def level_label(notion: str, level: float) -> str:
    """``δ = 1e-5`` or ``α = 2``."""
    if notion == "dp":
        return f"δ = 1e{round(math.log10(level))}"
    return f"α = {level:g}"


def plot_sweep(
    table: pd.DataFrame, x: str, xlabel: str, panel_titles: Mapping[str, str], suptitle: str
) -> Any:
    """ε (log scale) against ``x``, one axis per panel of ``panel_titles`` present in ``table``.

    Colour = case, line style = accountant (solid: the paper's formulas at Algorithm 2's ε₀,
    dashed: exact at that ε₀, dotted: exact at the best design), marker = privacy level (δ or
    α). The sound bound stays in the table but is not drawn (legibility).
    """
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
    cases = [c for c in CASE_COLOURS if c in set(table["case"])]
    handles = [Line2D([], [], color=CASE_COLOURS[c], label=CASE_LABELS[c]) for c in cases]
    handles += [
        Line2D([], [], color="0.3", ls=ACCOUNTANT_STYLES[a], label=ACCOUNTANT_LABELS[a])
        for a in DRAWN_ACCOUNTANTS
        if a in set(table["accountant"])
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=7.5, frameon=False)
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
            for acc in DRAWN_ACCOUNTANTS:
                cur = lev[(lev["case"] == case) & (lev["accountant"] == acc)].sort_values(x)
                if not cur.empty:
                    _draw_curve(ax, cur, x, case, acc, MARKERS[j % len(MARKERS)], floor)
    if (sub[sub["case"] == "fixed"]["epsilon"] < floor).any():
        ax.text(
            0.01,
            0.06,
            f"fixed region: ε < {floor:.1g} (degenerate; drawn at the floor line)",
            transform=ax.transAxes,
            fontsize=6.5,
            color=CASE_COLOURS["fixed"],
            va="bottom",
            bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1},
        )
    ax.set_yscale("log")
    ax.set_ylabel("ε at δ ((ε, δ)-DP)" if notion == "dp" else "Rényi-DP ε at order α")
    handles = [
        Line2D([], [], color="0.3", ls="", marker=MARKERS[j % len(MARKERS)], ms=4, label=lab)
        for j, lab in enumerate(level_label(notion, lv) for lv in levels)
    ]
    ax.legend(handles=handles, fontsize=7, frameon=False, loc="best")


def _draw_curve(
    ax: Any, cur: pd.DataFrame, x: str, case: str, acc: str, marker: str, floor: float
) -> None:
    hollow = acc != "paper" and case != "gaussian"
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


def plot_densities(table: pd.DataFrame, suptitle: str) -> Any:
    """Rows of :func:`~privrepro.boosting.densities.output_densities`: one axis per region, the
    PB-DP densities (solid) and the kernel's (dotted) at both inputs, the region ends as lines."""
    from privrepro.plotting.style import new_figure

    fig, axes = new_figure(1, 3, width=3.6, height=2.9, squeeze=False)
    names = {
        "relative": "(a) relative error (data-dependent)",
        "fixed": "(b) fixed region",
        "absolute": "(c) absolute error (data-independent)",
    }
    for ax, case in zip(axes[0], names, strict=True):
        sub = table[table["case"] == case]
        for who, colour in (("X", "C0"), ("X'", "C1")):
            cur = sub[sub["input"] == who].sort_values("y")
            ax.plot(cur["y"], cur["density"], color=colour, label=f"PB-DP at Q({who})")
            label = f"kernel at Q({who})"
            ax.plot(cur["y"], cur["kernel_density"], color=colour, ls=":", lw=0.9, label=label)
            for edge in (cur["region_lower"].iloc[0], cur["region_upper"].iloc[0]):
                ax.axvline(edge, color=colour, lw=0.9)
        ax.set_title(f"{names[case]}, q={sub['q'].iloc[0]:.2f}", fontsize=9)
        ax.set_xlabel("output y")
    axes[0][0].set_ylabel("density")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=8, frameon=False)
    fig.suptitle(suptitle, fontsize=10)
    return fig


def plot_runtime(table: pd.DataFrame, suptitle: str) -> Any:
    """Rows of :func:`~privrepro.boosting.runtime.sampler_runtime`: each sampler's time per call
    over the Gaussian's, and the rejection sampler's proposals per output against ``ρ/p_S``."""
    from privrepro.plotting.names import display, math_text
    from privrepro.plotting.style import new_figure

    fig, axes = new_figure(1, 2, width=4.2, height=3.2, squeeze=False)
    ax, ax2 = axes[0]
    for sampler, g in table.groupby("sampler"):
        g = g.sort_values("size")
        ax.plot(
            g["size"], g["ratio_to_gaussian"], marker="o", ms=3, label=display("sampler", sampler)
        )
    n, calls = int(table["samples"].iloc[0]), int(table["iterations"].iloc[0])
    ax.set_ylabel("time per call / Gaussian's (same run)")
    ax.set_title(f"runtime ratio, {n:,} samples × {calls} calls", fontsize=9)
    ax.legend(fontsize=7.5, frameon=False)
    rej = table[table["sampler"] == "pb_rejection"].sort_values("size")
    if not rej.empty:
        ax2.plot(rej["size"], rej["proposals_per_sample"], "o-", label="observed")
        ax2.plot(rej["size"], rej["expected_proposals"], "k--", lw=1, label="expected ρ / p_S")
        ax2.legend(fontsize=7.5, frameon=False)
    ax2.set_ylabel("kernel draws per output")
    ax2.set_title("rejection sampler: proposals per output", fontsize=9)
    for a in (ax, ax2):
        a.set_xlabel(math_text("|S(Q(X̃))|"))
    fig.suptitle(suptitle, fontsize=10)
    return fig


def plot_fixed_region(
    table: pd.DataFrame, titles: tuple[str, str], suptitle: str, delta_floor: float = 1e-12
) -> Any:
    """Rows of :func:`~privrepro.boosting.fixed_region.fixed_region_profiles` (``panel == "a"``)
    and :func:`~privrepro.boosting.fixed_region.fixed_region_extra_loss` (``panel == "b"``)."""
    from privrepro.plotting.style import new_figure

    fig, axes = new_figure(1, 2, width=4.8, height=3.6, squeeze=False)
    _draw_profiles(axes[0][0], table[table["panel"] == "a"], titles[0], delta_floor)
    _draw_extra_loss(axes[0][1], table[table["panel"] == "b"], titles[1])
    fig.suptitle(suptitle, fontsize=10)
    return fig


def _draw_profiles(ax: Any, a: pd.DataFrame, title: str, floor: float) -> None:
    """δ(ε) of the kernel, PB-DP and the bounded Gaussian (x), one colour per region width."""
    colours = {w: f"C{i}" for i, w in enumerate(sorted(a["width"].unique()))}
    kern = a[(a["mechanism"] == "kernel")].drop_duplicates("epsilon").sort_values("epsilon")
    ax.plot(kern["epsilon"], kern["delta"].clip(lower=floor), color="0.4", lw=1, label="kernel")
    for _, g in a.groupby("width"):
        w = float(g["width"].iloc[0])
        for mech, marker in (("pb", None), ("bounded", "x")):
            for acc, ls in (("paper", "-"), ("exact", "--")):
                cur = g[(g["mechanism"] == mech) & (g["accountant"] == acc)]
                cur = cur.sort_values("epsilon")
                style = {"color": colours[w], "marker": marker, "markevery": 10, "ms": 4}
                name = "PB-DP" if mech == "pb" else "bounded"
                label = (
                    f"{name} S=[{-w / 2:g},{w / 2:g}] ({'paper' if acc == 'paper' else 'exact'})"
                )
                y = cur["delta"].clip(lower=floor)
                ax.plot(cur["epsilon"], y, ls, lw=1.1, label=label, **style)
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6, frameon=False, ncol=2, loc="upper center", bbox_to_anchor=(0.5, -0.3))


def _draw_extra_loss(bx: Any, b: pd.DataFrame, title: str) -> None:
    """L1 against ρ: the paper's pair (solid), the worst pair (dotted), exact − kernel per α."""
    for i, (_, g) in enumerate(b.groupby(["width", "sensitivity"])):
        w, d = float(g["width"].iloc[0]), float(g["sensitivity"].iloc[0])
        col = f"C{i}"
        cur = g[g["accountant"] == "paper"].sort_values("rho")
        label = f"S=[{-w / 2:g},{w / 2:g}], Δ={d:g} (paper pair)"
        bx.plot(cur["rho"], cur["extra_loss"], "-", color=col, label=label)
        cur = g[g["accountant"] == "paper_worst_pair"].sort_values("rho")
        bx.plot(cur["rho"], cur["extra_loss"], ":", color=col)
        for a_, ls in zip(sorted(g["alpha"].dropna().unique()), ("--", "-."), strict=False):
            cur = g[(g["accountant"] == "exact") & (g["alpha"] == a_)].sort_values("rho")
            bx.plot(cur["rho"], cur["extra_loss"], ls, color=col, lw=0.9)
    bx.axhline(0, color="0.5", lw=0.6)
    paper_vals = b[b["accountant"] != "exact"]["extra_loss"]
    if len(paper_vals) and (b["extra_loss"] < paper_vals.min() - 0.3).any():
        bx.set_ylim(paper_vals.min() - 0.3, max(paper_vals.max(), b["extra_loss"].max()) + 0.1)
        note = "exact curves below the axis are cut (truncation lowers the loss)"
        bx.text(0.01, 0.01, note, transform=bx.transAxes, fontsize=6.5, color="0.3")
    bx.set_xlabel("ρ")
    bx.set_ylabel("extra loss over the kernel's RDP")
    bx.set_title(title, fontsize=8)
    bx.legend(fontsize=6, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.3))


COMPOSITION_STYLES = {
    "a": {
        ("gaussian", "exact"): ("k", "-", "Gaussian (exact)"),
        ("pb", "paper"): ("C1", "-", "PB-DP, paper's Algorithm 1"),
        ("pb", "exact"): ("C1", "--", "PB-DP, exact (PLD, every T)"),
        ("pb", "dp_accounting"): ("C3", "x", "PB-DP, dp_accounting's PLD (check)"),
        ("pb", "exact_best"): ("C2", ":", "PB-DP, exact at the best ε₀ per T"),
        ("pb", "paper_reoptimised"): ("C4", "-.", "PB-DP, paper, ε₀ re-optimised per T"),
    },
    "b": {
        ("gaussian", "exact"): ("k", "-", "Gaussian"),
        ("pb", "paper"): ("C1", "-", "PB-DP, paper's Prop. 2"),
        ("pb", "exact"): ("C1", "--", "PB-DP, exact Rényi"),
        ("pb", "exact_best"): ("C2", ":", "PB-DP, exact Rényi at the best ε₀"),
    },
}
"""(colour, line style, label) per (mechanism, accountant) of each panel of Fig. 6."""


def plot_composition(
    table: pd.DataFrame, titles: tuple[str, str], ylabel_dp: str, suptitle: str
) -> Any:
    """Rows of :func:`~privrepro.boosting.composition.composition_dp` (``panel == "a"``) and
    :func:`~privrepro.boosting.composition.composition_rdp` (``panel == "b"``, dark: first α,
    light: the others): composed ε against T on log–log axes."""
    from privrepro.plotting.style import new_figure

    fig, axes = new_figure(1, 2, width=4.6, height=3.5, squeeze=False)
    ax, bx = axes[0]
    styles = COMPOSITION_STYLES["a"]
    for (m, acc), g in table[table["panel"] == "a"].groupby(["mechanism", "accountant"]):
        col, ls, lab = styles[(m, acc)]  # type: ignore[index]
        _draw_t_curve(ax, g, ls, color=col, label=lab, ms=5)
    _log_t_axes(ax, ylabel_dp, titles[0], 7)
    styles = COMPOSITION_STYLES["b"]
    for i, (alpha, g) in enumerate(table[table["panel"] == "b"].groupby("alpha")):
        for (m, acc), h in g.groupby(["mechanism", "accountant"]):
            col, ls, lab = styles[(m, acc)]  # type: ignore[index]
            first = {"alpha": 1.0, "lw": 1.3} if i == 0 else {"alpha": 0.55, "lw": 1.0}
            _draw_t_curve(bx, h, ls, color=col, label=f"{lab}, α={alpha:g}", **first)
    _log_t_axes(bx, "composed RDP ε (T × per step)", titles[1], 6.5, below=True)
    fig.suptitle(suptitle, fontsize=10)
    return fig


def _draw_t_curve(ax: Any, g: pd.DataFrame, ls: str, **kw: Any) -> None:
    g = g.sort_values("T")
    ax.plot(g["T"], g["epsilon"], ls, **kw)


def _log_t_axes(ax: Any, ylabel: str, title: str, legend_size: float, below: bool = False) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("T")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    if below:  # a long legend goes under the axis, off the curves
        ax.legend(
            fontsize=legend_size,
            frameon=False,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.3),
            ncol=2,
        )
    else:
        ax.legend(fontsize=legend_size, frameon=False)


def plot_grr_mse(
    table: pd.DataFrame,
    best: pd.DataFrame,
    epsilon: float,
    ylabel: str,
    suptitle: str,
    criterion: str = "sum",
) -> Any:
    """Rows of :func:`~privrepro.boosting.grr_mse.grr_mse_curve` (one axis per ``|S|``; analytic
    lines, Monte Carlo points ± 2 s.e.) with the ε₀ of :func:`~privrepro.boosting.grr_mse.
    best_eps0` marked (``best``)."""
    from privrepro.plotting.style import new_figure

    sizes = list(dict.fromkeys(table["set_size"]))
    fig, axes = new_figure(1, len(sizes), width=4.2, height=3.3, squeeze=False)
    for ax, s, tag in zip(axes[0], sizes, "abcdefgh", strict=False):
        g = table[table["set_size"] == s]
        for est, col in (("category", "C0"), ("value", "C1")):
            _draw_mse(ax, g[g["estimator"] == est], est, col)
        b = best[best["set_size"] == s].set_index("metric")["value"]
        for metric, col, lab in (
            ("best_eps0_category", "C0", "best for categories"),
            ("best_eps0_value", "C1", "best for values"),
            ("best_eps0_tradeoff", "C2", f"trade-off ({criterion})"),
        ):
            if metric in b:
                label = f"{lab}: ε₀={b[metric]:.1f}"
                ax.axvline(b[metric], color=col, ls=":", lw=1, label=label)
        ax.set_yscale("log")
        ax.set_xlabel("ε₀")
        ax.set_ylabel(ylabel)
        ax.set_title(f"({tag}) |S| = {s}, ε = {epsilon:g}", fontsize=9)
        ax.legend(
            fontsize=6.5, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2
        )
    fig.suptitle(suptitle, fontsize=10)
    return fig


def _draw_mse(ax: Any, g: pd.DataFrame, estimator: str, colour: str) -> None:
    an = g[g["method"] == "analytic"].sort_values("eps0")
    an = an[np.isfinite(an["mse"])]
    ax.plot(an["eps0"], an["mse"], "-", color=colour, label=f"{estimator} (analytic)")
    mc = g[g["method"] == "monte_carlo"].sort_values("eps0")
    mc = mc[np.isfinite(mc["mse"])]
    if len(mc):
        label = f"{estimator} (Monte Carlo ± 2 s.e.)"
        ax.errorbar(
            mc["eps0"],
            mc["mse"],
            yerr=2 * mc["se"],
            fmt="o",
            ms=3,
            color=colour,
            capsize=2,
            label=label,
        )
