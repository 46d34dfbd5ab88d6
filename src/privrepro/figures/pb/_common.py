"""Shared pieces of the pb figures: the ε-sweep of Figs. 2–3 (paper formulas, exact accounting
and the sound bound, against the utility-matched Gaussian) and plotting helpers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from privrepro.boosting.batch import gaussian_baseline_batch, optimise_eps0_batch
from privrepro.boosting.design import PBSetting

__all__ = ["CASE_COLOURS", "CASE_LABELS", "sweep_rows"]

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
    "sound": "sound bound ε₀ + L1 + L2",
}


def sweep_rows(
    case: str,
    notion: str,
    panel: Sequence[str],
    level: Sequence[float],
    rho: Sequence[float],
    sensitivity: Sequence[float],
    size: Sequence[float],
    *,
    theta: float,
    calibration: str,
    tol: float,
    accountants: Sequence[str],
    exact_stride: int,
    exact_pairs: int,
    pair_rule: str,
    eps_max_factor: float = 1.0,
) -> pd.DataFrame:
    """One case and privacy notion over a list of points (equal-length lists, one entry each).

    ``case="gaussian"`` gives the utility-matched Gaussian baseline. Otherwise ε₀ comes from
    Algorithm 2 on ``(0, ε_G]`` with the paper's formulas, all points at once; the exact accounting
    and the sound bound are evaluated at that same ε₀ on every ``exact_stride``-th point of each
    (panel, level) curve.
    """
    pts = pd.DataFrame(
        {
            "panel": list(panel),
            "notion": notion,
            "level": np.asarray(level, float),
            "rho": np.asarray(rho, float),
            "sensitivity": np.asarray(sensitivity, float),
            "size": np.asarray(size, float),
            "case": case,
        }
    )
    rho_a, sens_a, size_a, lev_a = (
        pts[c].to_numpy() for c in ("rho", "sensitivity", "size", "level")
    )
    base = gaussian_baseline_batch(notion, rho_a, sens_a, size_a, lev_a, calibration)
    if case == "gaussian":
        return pts.assign(accountant="exact", eps0=np.nan, epsilon=base)
    top = base * eps_max_factor
    if case == "fixed" and pair_rule != "paper":
        from privrepro.boosting.design import optimise_eps0

        res = [
            optimise_eps0(
                _setting(
                    case,
                    notion,
                    float(lv),
                    float(r),
                    float(d),
                    float(s),
                    theta,
                    calibration,
                    exact_pairs,
                    pair_rule,
                ),
                tol=tol,
                eps_max=float(b),
            )
            for lv, r, d, s, b in zip(lev_a, rho_a, sens_a, size_a, top, strict=True)
        ]
        eps0 = np.array([x.eps0 for x in res])
        eps = np.array([x.epsilon for x in res])
    else:
        eps0, eps = optimise_eps0_batch(
            case, notion, rho_a, sens_a, size_a, lev_a, top, tol, theta, calibration
        )
    frames = [pts.assign(accountant="paper", eps0=eps0, epsilon=eps)]
    idx = [
        int(i)
        for _, g in pts.groupby(["panel", "level"], sort=False)
        for i in np.asarray(g.index)[_strided(len(g), exact_stride)]
    ]
    for acc in accountants:
        if acc == "paper":
            continue
        vals = []
        for i in idx:
            s = _setting(
                case,
                notion,
                float(lev_a[i]),
                float(rho_a[i]),
                float(sens_a[i]),
                float(size_a[i]),
                theta,
                calibration,
                exact_pairs,
                pair_rule,
            )
            mech = s.mechanism(float(eps0[i]))
            vals.append(s.exact_epsilon_of(mech) if acc == "exact" else s.sound_epsilon_of(mech))
        frames.append(pts.iloc[idx].assign(accountant=acc, eps0=eps0[idx], epsilon=vals))
    return pd.concat(frames, ignore_index=True)


def _strided(n: int, stride: int) -> list[int]:
    idx = list(range(0, n, max(1, stride)))
    if n and idx[-1] != n - 1:
        idx.append(n - 1)
    return idx


def _setting(
    case: str,
    notion: str,
    level: float,
    rho: float,
    sensitivity: float,
    size: float,
    theta: float,
    calibration: str,
    exact_pairs: int,
    pair_rule: str,
) -> PBSetting:
    kw: dict[str, Any] = {"delta": level} if notion == "dp" else {"alpha": level}
    kw.update(
        case=case,
        rho=rho,
        sensitivity=sensitivity,
        size=size,
        theta=theta,
        notion=notion,
        calibration=calibration,
        exact_pairs=exact_pairs,
        pair_rule=pair_rule,
    )
    return PBSetting(**kw)


def level_label(notion: str, level: float) -> str:
    if notion == "dp":
        return f"δ = 1e{round(math.log10(level))}"
    return f"α = {level:g}"


def plot_sweep(
    table: pd.DataFrame, x: str, xlabel: str, panel_titles: dict[str, str], suptitle: str
) -> Any:
    """Panels (a)–(d) as in the paper; colour = case, line style = accountant (solid: the paper's
    formulas, dashed: exact), marker = privacy level (δ or α). The sound bound is in the table
    (``accountant == "sound"``) but not drawn, to keep the panels legible."""
    from matplotlib.lines import Line2D

    from privrepro.plotting.style import new_figure

    panels = [p for p in panel_titles if p in set(table["panel"])]
    ncols = 2 if len(panels) > 1 else 1
    nrows = (len(panels) + ncols - 1) // ncols
    fig, axes = new_figure(nrows, ncols, width=4.4, height=3.3, squeeze=False)
    markers = ["o", "s", "^", "D", "v"]
    for i, panel in enumerate(panels):
        ax = axes[i // ncols][i % ncols]
        sub = table[table["panel"] == panel]
        notion = sub["notion"].iloc[0]
        levels = sorted(sub["level"].unique(), reverse=notion == "dp")
        others = sub[(sub["case"] != "fixed") & (sub["epsilon"] > 0)]["epsilon"]
        floor = float(others.min()) / 3 if len(others) else 1e-7
        for j, level in enumerate(levels):
            lev = sub[sub["level"] == level]
            for case in CASE_COLOURS:
                for acc in ("paper", "exact"):
                    cur = lev[(lev["case"] == case) & (lev["accountant"] == acc)].sort_values(x)
                    if cur.empty:
                        continue
                    every = max(1, len(cur) // 6)
                    style = "-" if case == "gaussian" else ACCOUNTANT_STYLES[acc]
                    hollow = acc == "exact" and case != "gaussian"
                    ax.plot(
                        cur[x],
                        cur["epsilon"].clip(lower=floor),
                        style,
                        color=CASE_COLOURS[case],
                        marker=markers[j % len(markers)],
                        markevery=every,
                        ms=3.5,
                        lw=0.9 if hollow else 1.2,
                        mfc="none" if hollow else CASE_COLOURS[case],
                    )
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
        ax.set_title(panel_titles[panel], fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("ε at δ ((ε, δ)-DP)" if notion == "dp" else "Rényi-DP ε at order α")
        handles = [
            Line2D(
                [],
                [],
                color="0.3",
                ls="",
                marker=markers[j % len(markers)],
                ms=4,
                label=level_label(notion, lv),
            )
            for j, lv in enumerate(levels)
        ]
        ax.legend(handles=handles, fontsize=7, frameon=False, loc="best")
    for k in range(len(panels), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    handles = [Line2D([], [], color=CASE_COLOURS[c], label=CASE_LABELS[c]) for c in CASE_COLOURS]
    handles += [
        Line2D([], [], color="0.3", ls=ACCOUNTANT_STYLES[a], label=ACCOUNTANT_LABELS[a])
        for a in ("paper", "exact")
        if a in set(table["accountant"])
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=7.5, frameon=False)
    fig.suptitle(suptitle, fontsize=10)
    return fig
