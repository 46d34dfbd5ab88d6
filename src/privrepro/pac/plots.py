"""The pac experiments' rows drawn as the paper describes them (it has no figures of its own).

Each function takes the tidy table of one experiment (the rows of :mod:`privrepro.pac.private`,
:func:`privrepro.pac.gaussian.example5_noise` or the bounds of :mod:`privrepro.pac.bounds`) and
returns a ``matplotlib`` figure in the project's style (:mod:`privrepro.plotting.style`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from privrepro.plotting.names import display
from privrepro.plotting.style import new_figure

__all__ = [
    "clean_log_axis",
    "gaussian_mean_noise",
    "identification_bounds",
    "noise_against_dimension",
    "noise_norms",
    "private_accuracy",
    "success_curves",
]


def clean_log_axis(ax: Any, axis: str = "x") -> None:
    """A log axis with plain labels at 1, 2 and 5 of each decade and no minor labels (they
    overlap on short ranges)."""
    import matplotlib.ticker as mticker

    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    # 1, 2, 5 per decade: a range within one or two decades still gets several labels
    target.set_major_locator(mticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    target.set_major_formatter(mticker.FormatStrFormatter("%g"))
    target.set_minor_formatter(mticker.NullFormatter())


def noise_norms(table: pd.DataFrame, title: str) -> Any:
    """:func:`~privrepro.pac.private.noise_rows` (plus ``pool`` and an optional ``paper_value``
    column): one dot per method at its ``E||B||``, its value beside it, the paper's as crosses."""
    fig, ax = new_figure(width=6.0, height=3.4)
    t = table.reset_index(drop=True)
    # a dot per method (bars would mislead on a log axis), its value printed beside it
    y = np.arange(len(t))
    ax.scatter(t["noise_norm"], y, color=[f"C{i}" for i in range(len(t))], s=40, zorder=4)
    for yi, val in zip(y, t["noise_norm"], strict=True):
        ax.annotate(
            f"{val:.3g}",
            (val, yi),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    ax.set_yticks(y, [display("pac_method", m) for m in t["method"]])
    has = t["paper_value"].notna() if "paper_value" in t else pd.Series(False, index=t.index)
    if has.any():
        paper = t.loc[has, "paper_value"]
        ax.scatter(paper, y[has.to_numpy()], marker="x", color="k", zorder=5, label="paper")
        ax.legend(frameon=False)
    ax.margins(x=0.25)
    clean_log_axis(ax, "x")
    ax.set_xlabel(r"E‖B‖₂ (upper bound $\sqrt{\mathrm{Tr}\,\Sigma_B}$) for MI ≤ v")
    pool = t["pool"].iloc[0] if "pool" in t else ""
    # over the figure, not the axes: the method names push the axes right
    fig.suptitle(f"E‖B‖ for MI ≤ v, pool {pool}", fontsize=9)
    return fig


def private_accuracy(table: pd.DataFrame, paper_noisy: float | None = None) -> Any:
    """:func:`~privrepro.pac.private.make_private`'s rows (plus ``architecture`` and ``pool``):
    the released model's held-out accuracy with noise against ``v``, per method, beside its clean
    accuracy and chance (one over the classes of the architecture's output layer); the paper's
    noisy accuracy at v = 1 as a cross when given. Every budget is labelled on the log axis."""
    fig, ax = new_figure(width=6.0, height=3.6)
    clean = float(table["accuracy_clean"].iloc[0])
    ax.axhline(clean, color="0.3", lw=1, label=f"no noise ({clean:.1%})")
    classes = int(str(table["architecture"].iloc[0]).split("-")[-1])
    ax.axhline(1 / classes, color="0.5", lw=1, ls=":", label=f"chance (1/{classes})")
    for i, (method, sub) in enumerate(table.groupby("method")):
        sub = sub.sort_values("v")
        style = {"marker": "o", "ms": 4, "capsize": 3, "color": f"C{i}"}
        style["label"] = display("pac_method", method)
        ax.errorbar(sub["v"], sub["accuracy_noisy_mean"], sub["accuracy_noisy_std"], **style)
    if paper_noisy is not None:
        ax.scatter([1.0], [paper_noisy], marker="x", color="k", zorder=5, label="paper (v = 1)")
    clean_log_axis(ax, "x")
    budgets = sorted(float(v) for v in table["v"].unique())
    ax.set_xticks(budgets, [f"{v:g}" for v in budgets])  # each budget run, not only decades
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("MI budget v (nats)")
    ax.set_ylabel("held-out accuracy of M(X*) + B")
    arch = table["architecture"].iloc[0]
    pool = table["pool"].iloc[0] if "pool" in table else ""
    ax.set_title(f"MLP {arch} by full-batch GD, {pool}", fontsize=9)
    ax.legend(frameon=False, fontsize=8)
    return fig


def identification_bounds(table: pd.DataFrame, title: str) -> Any:
    """Example 1: the success bounds (``theorem1``, ``theorem2``, ``pinsker``) against the set
    size ``n``, the paper's printed Theorem 2 values (``paper_value``) as crosses."""
    fig, ax = new_figure(width=5.5, height=3.6)
    labels = {
        "theorem1": "Theorem 1 (any n)",
        "theorem2": "Theorem 2 (i.i.d., symmetric)",
        "pinsker": "Corollary 1 (Pinsker)",
    }
    for bound, label in labels.items():
        sub = table[table["bound"] == bound].sort_values("n")
        ax.plot(sub["n"], sub["success_bound"], marker="o", ms=3, label=label)
    paper = table[(table["bound"] == "theorem2") & table["paper_value"].notna()]
    label = "paper (Theorem 2, printed)"
    ax.scatter(paper["n"], paper["paper_value"], marker="x", color="k", zorder=5, label=label)
    t1 = table[
        (table["bound"] == "theorem1") & table["paper_value"].notna() & table["n"].isin([10, 50])
    ]
    if len(t1):
        ax.scatter(
            t1["n"],
            t1["paper_value"],
            marker="+",
            color="k",
            s=60,
            zorder=5,
            label="paper (Theorem 1: 0.36 for any n; marked at n = 10, 50)",
        )
    ax.set_xscale("log")
    ax.set_xlabel("n (set size)")
    ax.set_ylabel("bound on per-element success 1 − δ")
    ax.set_title(title)
    ax.legend(frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, fontsize=7.5)
    return fig


def success_curves(table: pd.DataFrame) -> Any:
    """Theorem 1 inverted (``theorem1_kl``) and Pinsker (``pinsker``) against ``v``, per prior."""
    fig, ax = new_figure(width=5.5, height=3.8)
    for i, q in enumerate(sorted(table["prior"].unique(), reverse=True)):
        for bound, ls in (("theorem1_kl", "-"), ("pinsker", ":")):
            sub = table[(table["prior"] == q) & (table["bound"] == bound)].sort_values("v")
            label = f"prior {q:g}" if bound == "theorem1_kl" else None
            ax.plot(sub["v"], sub["success_bound"], ls, color=f"C{i}", label=label)
    ax.plot([], [], ":", color="0.4", label="Pinsker q + √(v/2)")
    if ((table["prior"] - 0.01).abs() < 1e-12).any():
        ax.scatter([1.0], [0.36], marker="x", color="k", zorder=5, label="paper: 0.36 (Example 1)")
    ax.set_xscale("log")
    ax.set_xlabel("MI budget v (nats)")
    ax.set_ylabel("posterior success bound")
    ax.set_ylim(0, 1.02)
    ax.set_title("pac Thm 1 — p*(q, v) = max{p : KL(p‖q) ≤ v}")
    ax.legend(frameon=False, loc="upper left")
    return fig


def noise_against_dimension(table: pd.DataFrame, v: float) -> Any:
    """``E||B||`` for ``MI <= v`` against the dimension ``d``, one line per method (log-log)."""
    fig, ax = new_figure(width=5.5, height=3.8)
    for i, (method, sub) in enumerate(table.groupby("method", sort=True)):
        sub = sub.sort_values("d")
        ax.plot(
            sub["d"],
            sub["noise_norm"],
            marker="o",
            ms=3,
            color=f"C{i}",
            label=display("pac_method", method),
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("dimension d (pixels)")
    ax.set_ylabel(f"E‖B‖₂ for MI ≤ {v:g}")
    ax.set_title("pac — PAC vs local-DP noise against d (synthetic smooth images)")
    ax.legend(frameon=False, fontsize=8)
    return fig


def gaussian_mean_noise(table: pd.DataFrame) -> Any:
    """Example 5 (:func:`~privrepro.pac.gaussian.example5_noise`): the least ``E||B||^2`` against
    ``v`` — Theorem 3, whole set exact, individual exact — and where no individual noise is
    needed (the noiseless individual MI)."""
    fig, ax = new_figure(width=5.5, height=3.8)
    t = table.sort_values("v")
    ax.plot(t["v"], t["theorem3_noise_sq"], label="Algorithm 1 / Theorem 3 (whole set, bound)")
    ax.plot(t["v"], t["whole_set_exact_noise_sq"], "--", label="whole set, exact eq. (11)")
    pos = t[t["individual_opt_noise_sq"] > 0]
    ax.plot(pos["v"], pos["individual_opt_noise_sq"], "-.", label="individual, exact eq. (10)")
    mi0 = float(t["noiseless_individual_mi"].iloc[0])
    ax.axvline(mi0, color="0.5", lw=0.8, ls=":")
    text = " no individual noise needed →"
    ax.text(
        mi0, 0.03, text, fontsize=7.5, color="0.4", va="bottom", transform=ax.get_xaxis_transform()
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("MI budget v (nats)")
    ax.set_ylabel("required E‖B‖²")
    d, n = int(t["d"].iloc[0]), int(t["n"].iloc[0])
    ax.set_title(f"pac Ex. 5 — Gaussian mean, d = {d}, n = {n}")
    ax.legend(frameon=False, fontsize=8)
    return fig
