"""pb Fig. 5: the fixed preferred region (Sec. 4.2, Prop. 5, Remark 3).

(a) Privacy profile δ(ε) of PB-DP with a fixed region (ρ = 0.8, Gaussian kernel at ε₀ = 0.1)
against the bounded Gaussian (q = 1, the kernel truncated to S), for several S; the paper's
Remark 3 (``δ = δ_Z(ε − L1)``, solid) and the exact profile of the output densities (dashed).
(b) The extra loss L1 on top of the kernel's RDP as ρ varies from 0.7 to 1 at fixed σ, for
S = [−10, 10] and [−50, 50] and Δ = 1, 30: the paper's pair (Prop. 5), the worst pair inside S,
and the exact Rényi divergence minus the kernel's, for α = 2 and 10.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.boosting import _dp
from privrepro.boosting.accounting import profile_delta
from privrepro.boosting.exact import exact_delta, exact_rdp
from privrepro.boosting.kernels import GaussianKernel
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.regions import FixedRegion
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.plotting.style import new_figure

__all__ = ["Fig5Params", "FixedRegionFeasibility"]


@dataclass
class Fig5Params:
    """Fig. 5 settings; the paper leaves most of them unstated."""

    a_rho: float = param(0.8, gt=0, lt=1, doc="ρ of panel (a) (caption)")
    a_eps0: float = param(0.1, gt=0, doc="kernel ε₀ of panel (a) (Sec. 5.3)")
    a_delta0: float = param(1e-5, gt=0, lt=1, doc="kernel δ₀ of panel (a)", assumed="not stated")
    a_sensitivity: float = param(1.0, gt=0, doc="Δ of panel (a)", assumed="not stated")
    a_widths: list[float] = param(
        [20.0, 40.0, 100.0],
        gt=0,
        unique=True,
        doc="widths of the centred regions S",
        assumed="'various S' is not listed",
    )
    a_epsilons: list[float] = param(
        [0.0, 0.5],
        ge=0,
        length=2,
        increasing=True,
        doc="ε range [lo, hi] of panel (a)",
        assumed="axis range not stated",
    )
    a_points: int = param(101, ge=3, le=100_001, doc="ε grid points of panel (a)")
    b_sigma: float = param(
        10.0, gt=0, doc="kernel σ of panel (b)", assumed="the fixed variance is not stated"
    )
    b_rhos: list[float] = param(
        [round(0.7 + 0.01 * i, 2) for i in range(31)],
        gt=0,
        le=1,
        unique=True,
        doc="ρ grid of panel (b) ('from 0.7 to 1')",
        assumed="spacing not stated",
    )
    b_widths: list[float] = param(
        [20.0, 100.0], gt=0, unique=True, doc="S = [−10, 10] and [−50, 50] (Sec. 5.3)"
    )
    b_sensitivities: list[float] = param(
        [1.0, 30.0], gt=0, unique=True, doc="Δ = 1 and 30 (Sec. 5.3)"
    )
    b_alphas: list[float] = param([2.0, 10.0], gt=1, unique=True, doc="Rényi orders (Sec. 5.3)")
    exact_pairs: int = param(
        5,
        ge=1,
        le=101,
        doc="pair positions of the exact accounting",
        assumed="a grid of pairs at distance min(Δ, |S|) inside S",
    )


class FixedRegionFeasibility(Figure[Fig5Params]):
    """Rows of panel a: ``panel, width, mechanism, accountant, epsilon, delta``; panel b:
    ``panel, width, sensitivity, alpha, rho, accountant, extra_loss``."""

    params_type = Fig5Params
    title = "Fixed preferred region: PB-DP vs bounded Gaussian profiles; extra loss L1 against ρ"

    def units(self, p: Fig5Params) -> list[dict[str, Any]]:
        units: list[dict[str, Any]] = [
            {
                "panel": "a",
                "width": w,
                "rho": p.a_rho,
                "eps0": p.a_eps0,
                "delta0": p.a_delta0,
                "sensitivity": p.a_sensitivity,
                "epsilons": p.a_epsilons,
                "points": p.a_points,
                "exact_pairs": p.exact_pairs,
            }
            for w in p.a_widths
        ]
        units += [
            {
                "panel": "b",
                "width": w,
                "sensitivity": d,
                "sigma": p.b_sigma,
                "rhos": p.b_rhos,
                "alphas": p.b_alphas,
                "exact_pairs": p.exact_pairs,
            }
            for w in p.b_widths
            for d in p.b_sensitivities
        ]
        return units

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        return self._panel_a(unit) if unit["panel"] == "a" else self._panel_b(unit)

    @staticmethod
    def _panel_a(u: dict[str, Any]) -> pd.DataFrame:
        d = float(u["sensitivity"])
        kernel = GaussianKernel(_dp.analytic_sigma(u["eps0"], u["delta0"], d))
        region = FixedRegion(-u["width"] / 2, u["width"] / 2)
        eps = np.linspace(u["epsilons"][0], u["epsilons"][1], int(u["points"]))
        frames = [
            pd.DataFrame(
                {
                    "mechanism": "kernel",
                    "accountant": "exact",
                    "epsilon": eps,
                    "delta": kernel.delta(eps, d),
                    "q": 0.0,
                    "L1": 0.0,
                }
            )
        ]
        for name, rho in (("pb", u["rho"]), ("bounded", 1.0)):
            mech = BoostedMechanism(kernel, region, rho)
            terms = mech.paper_terms(d)
            frames.append(
                pd.DataFrame(
                    {
                        "mechanism": name,
                        "accountant": "paper",
                        "epsilon": eps,
                        "delta": profile_delta(terms, lambda e: kernel.delta(e, d), eps),
                        "q": terms.q,
                        "L1": terms.L1,
                    }
                )
            )
            frames.append(
                pd.DataFrame(
                    {
                        "mechanism": name,
                        "accountant": "exact",
                        "epsilon": eps,
                        "delta": exact_delta(mech, d, eps, u["exact_pairs"]),
                        "q": terms.q,
                        "L1": terms.L1,
                    }
                )
            )
        out = pd.concat(frames, ignore_index=True)
        out.insert(0, "panel", "a")
        out.insert(1, "width", float(u["width"]))
        out["sigma"] = kernel.sigma
        return out

    @staticmethod
    def _panel_b(u: dict[str, Any]) -> pd.DataFrame:
        kernel = GaussianKernel(u["sigma"])
        d = float(u["sensitivity"])
        half = u["width"] / 2
        rows = []
        for rho in u["rhos"]:
            for rule in ("paper", "worst"):
                L1 = FixedRegion(-half, half, rule).paper_terms(kernel, rho, d).L1
                rows.append(
                    {
                        "rho": rho,
                        "accountant": "paper" if rule == "paper" else "paper_worst_pair",
                        "alpha": np.nan,
                        "extra_loss": L1,
                    }
                )
            mech = BoostedMechanism(kernel, FixedRegion(-half, half), rho)
            for a in u["alphas"]:
                rows.append(
                    {
                        "rho": rho,
                        "accountant": "exact",
                        "alpha": a,
                        "extra_loss": exact_rdp(mech, d, a, u["exact_pairs"]) - kernel.rdp(a, d),
                    }
                )
        out = pd.DataFrame(rows)
        out.insert(0, "panel", "b")
        out.insert(1, "width", float(u["width"]))
        out.insert(2, "sensitivity", d)
        out["sigma"] = kernel.sigma
        return out

    def plot(self, table: pd.DataFrame, p: Fig5Params) -> Any:
        fig, axes = new_figure(1, 2, width=4.6, height=3.4, squeeze=False)
        ax, bx = axes[0]
        a = table[table["panel"] == "a"]
        colours = {w: f"C{i}" for i, w in enumerate(sorted(a["width"].unique()))}
        kern = a[(a["mechanism"] == "kernel")].drop_duplicates("epsilon").sort_values("epsilon")
        ax.plot(kern["epsilon"], kern["delta"].clip(lower=1e-12), color="0.4", lw=1, label="kernel")
        for w, g in a.groupby("width"):
            for mech, marker in (("pb", None), ("bounded", "x")):
                for acc, ls in (("paper", "-"), ("exact", "--")):
                    cur = g[(g["mechanism"] == mech) & (g["accountant"] == acc)].sort_values(
                        "epsilon"
                    )
                    ax.plot(
                        cur["epsilon"],
                        cur["delta"].clip(lower=1e-12),
                        ls,
                        color=colours[w],
                        marker=marker,
                        markevery=10,
                        ms=4,
                        lw=1.1,
                        label=f"{mech} S=[{-w / 2:g},{w / 2:g}] ({acc})",
                    )
        ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel("δ(ε)")
        ax.set_title(f"(a) PB-DP (ρ={p.a_rho:g}) vs bounded (x), ε₀={p.a_eps0:g}", fontsize=9)
        ax.legend(fontsize=6, frameon=False, ncol=2)
        b = table[table["panel"] == "b"]
        i = 0
        for (w, d), g in b.groupby(["width", "sensitivity"]):
            col = f"C{i}"
            i += 1
            cur = g[g["accountant"] == "paper"].sort_values("rho")
            bx.plot(
                cur["rho"],
                cur["extra_loss"],
                "-",
                color=col,
                label=f"S=[{-w / 2:g},{w / 2:g}], Δ={d:g} (paper pair)",
            )
            cur = g[g["accountant"] == "paper_worst_pair"].sort_values("rho")
            bx.plot(cur["rho"], cur["extra_loss"], ":", color=col)
            for a_, ls in zip(sorted(g["alpha"].dropna().unique()), ("--", "-."), strict=False):
                cur = g[(g["accountant"] == "exact") & (g["alpha"] == a_)].sort_values("rho")
                bx.plot(cur["rho"], cur["extra_loss"], ls, color=col, lw=0.9)
        bx.axhline(0, color="0.5", lw=0.6)
        paper_vals = b[b["accountant"] != "exact"]["extra_loss"]
        if len(paper_vals) and (b["extra_loss"] < paper_vals.min() - 0.3).any():
            bx.set_ylim(paper_vals.min() - 0.3, max(paper_vals.max(), b["extra_loss"].max()) + 0.1)
            bx.text(
                0.01,
                0.01,
                "exact curves below the axis are cut (truncation lowers the loss)",
                transform=bx.transAxes,
                fontsize=6.5,
                color="0.3",
            )
        bx.set_xlabel("ρ")
        bx.set_ylabel("extra loss over the kernel's RDP")
        bx.set_title(
            f"(b) L1 vs ρ, σ={p.b_sigma:g}: solid paper pair, dotted worst pair,\n"
            "dashed/dash-dot exact − kernel (α=2 / 10)",
            fontsize=8,
        )
        bx.legend(fontsize=6, frameon=False)
        fig.suptitle("pb Fig. 5 — fixed preferred region", fontsize=10)
        return fig

    def summarize(self, table: pd.DataFrame, p: Fig5Params) -> pd.DataFrame:
        rows = []
        b = table[(table["panel"] == "b") & (table["accountant"] == "paper")]
        for _, r in b.iterrows():
            rows.append(
                {
                    "metric": "L1_paper_pair",
                    "width": r["width"],
                    "sensitivity": r["sensitivity"],
                    "rho": r["rho"],
                    "value": r["extra_loss"],
                }
            )
        a = table[(table["panel"] == "a") & (table["mechanism"] != "kernel")]
        for (w, m, acc), g in a.groupby(["width", "mechanism", "accountant"]):
            hit = g[g["delta"] <= p.a_delta0]
            rows.append(
                {
                    "metric": "epsilon_at_delta0",
                    "width": w,
                    "mechanism": m,
                    "accountant": acc,
                    "value": float(hit["epsilon"].min()) if len(hit) else np.nan,
                }
            )
        return pd.DataFrame(rows)
