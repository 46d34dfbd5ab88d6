"""pb Fig. 6: T-fold composition, Gaussian vs PB-DP (Sec. 5.4).

ρ = 0.9, |S| = 10, Δ = 3, T = 1 … 1000. (a) (ε, δ)-DP at δ = 1e-5: the Gaussian's composed
profile is closed form (μ√T); PB-DP by the paper's Algorithm 1 (corrected, O(T) per T) and
exactly, both at every integer T: the privacy-loss distribution of the two output densities,
discretised pessimistically once and composed for every T in one pass, checked by
``dp_accounting``'s PLD accountant at a few T. (b) RDP at α = 2, 20: T × the single-step value
(Remark 2), the paper's Prop. 2 and the exact Rényi divergence. The paper's design: ε₀ chosen
once by Algorithm 2 at T = 1 (re-optimising Prop. 3 per T falls into a degenerate basin, note
§5.2). The best design (dotted): at every T the ε₀ minimising the exact composed ε (panel a),
the ε₀ minimising the exact Rényi divergence (panel b).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from privrepro.boosting.composition import composition_dp, composition_rdp
from privrepro.boosting.design import PBSetting
from privrepro.boosting.plots import plot_composition
from privrepro.data.provenance import ANALYTIC
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.figures.pb import _common as pb

__all__ = ["Composition", "Fig6Params"]


@dataclass
class Fig6Params:
    """Fig. 6 settings."""

    rho: float = pb.rho_param(0.9, "ρ (Sec. 5.4)")
    size: float = param(
        10.0, gt=0, doc="|S(Q(X̃))|", assumed="'|S| = 10' read as τ = 5 (the caption's 'inf S = 10')"
    )
    sensitivity: float = pb.sensitivity_param(3.0, "Δ (Sec. 5.4)")
    case: str = pb.case_param()
    theta: float = pb.theta_param(0.05, "θ if relative", assumed="not stated")
    delta: float = pb.delta_param(1e-5, "δ of panel (a) (Sec. 5.4)")
    alphas: list[float] = param(
        [2.0, 20.0], gt=1, unique=True, doc="Rényi orders of panel (b) (Sec. 5.4)"
    )
    t_max: int = param(
        1000, ge=1, le=100_000, doc="largest T; the paper's curve is drawn at every integer T"
    )
    exact_ts: list[int] = param(
        [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
        ge=1,
        le=100_000,
        min_len=0,
        doc="T values at which dp_accounting's PLD accountant checks the exact curve (none: no check)",
    )
    pld_discretization: float = param(
        5e-3,
        gt=0,
        lt=1,
        doc="loss grid of the exact PLD composed at every T (pessimistic connect-the-dots: "
        "overstates ε by at most T × this, in practice < 1e-4 relative)",
        assumed="numerical choice of this project",
    )
    check_discretization: float = param(
        1e-3,
        gt=0,
        lt=1,
        doc="loss grid of dp_accounting's check (pessimistic bucketing: overstates ε by at most "
        "T × this)",
        assumed="numerical choice of this project",
    )
    eps0_rule: str = param(
        "optimise_at_T1",
        choices=["optimise_at_T1", "fixed"],
        doc="how ε₀ is set for all T",
        assumed="not stated; Algorithm 2 at T = 1",
    )
    eps0_fixed: float = param(1.0, gt=0, doc="ε₀ when eps0_rule = fixed")
    reoptimise_per_t: bool = param(
        False,
        doc="also draw the paper's curve with ε₀ re-optimised by Algorithm 2 (on Prop. 3) at each "
        "T of exact_ts",
        assumed="not stated whether ε₀ is re-optimised per T; off by default (the "
        "re-optimised search falls into a degenerate small-ε₀ basin)",
    )
    rdp_exact_optimum: bool = param(
        True, doc="also draw PB-DP at the best design: the ε₀ minimising the exact RDP"
    )
    best_per_t: bool = param(
        True,
        doc="also draw panel (a)'s best design: at every T the ε₀ minimising the exact composed ε",
    )


class Composition(Figure[Fig6Params]):
    """Rows: ``panel, T, alpha, mechanism, accountant, eps0, epsilon``."""

    data = ANALYTIC
    version = 2  # the best design's rows (accountant exact_best)
    title = (
        "T-fold composition: Gaussian vs PB-DP (paper's Algorithm 1 and exact PLD at every T; RDP)"
    )

    def units(self, p: Fig6Params) -> list[dict[str, Any]]:
        common = ("rho", "size", "sensitivity", "case", "theta", "t_max", "eps0_rule", "eps0_fixed")
        fixed = {k: getattr(p, k) for k in (*common, "reoptimise_per_t")}
        a = {"panel": "a", **fixed, "delta": p.delta, "pld_discretization": p.pld_discretization}
        a["check_discretization"] = p.check_discretization
        a["best_per_t"] = p.best_per_t
        a["exact_ts"] = sorted({t for t in p.exact_ts if t <= p.t_max})
        b = {"panel": "b", **fixed, "alphas": p.alphas, "rdp_exact_optimum": p.rdp_exact_optimum}
        return [a, b]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        u = unit
        eps0 = float(u["eps0_fixed"]) if u["eps0_rule"] == "fixed" else None
        s = PBSetting(u["case"], u["rho"], u["sensitivity"], u["size"], theta=u["theta"])
        if u["panel"] == "a":
            out = composition_dp(
                replace(s, delta=u["delta"]),
                u["t_max"],
                eps0=eps0,
                exact_ts=u["exact_ts"],
                pld_discretization=u["pld_discretization"],
                check_discretization=u["check_discretization"],
                reoptimise_per_t=bool(u.get("reoptimise_per_t")),
                best=bool(u.get("best_per_t")),
                loops=ctx.loops,
            )
        else:
            optimum = u["rdp_exact_optimum"]
            out = composition_rdp(s, u["alphas"], u["t_max"], eps0=eps0, exact_optimum=optimum)
        out.insert(0, "panel", u["panel"])
        return out

    def plot(self, table: pd.DataFrame, p: Fig6Params) -> Any:
        titles = (
            f"(a) (ε, δ)-DP, ρ={p.rho:g}, |S|={p.size:g}, Δ={p.sensitivity:g}",
            "(b) RDP (dark: first α, light: second α)",
        )
        suptitle = (
            "pb Fig. 6 — composition; solid: paper's accounting, dashed: exact at its ε₀, "
            "dotted: exact at the best ε₀"
        )
        return plot_composition(table, titles, f"composed ε at δ={p.delta:g}", suptitle)

    def summarize(self, table: pd.DataFrame, p: Fig6Params) -> pd.DataFrame:
        """ε of every series at T = 1, 2, 5, …, 1000, and the ε₀ of panel (a)."""
        keys = ("panel", "T", "alpha", "mechanism", "accountant")
        rows = [
            {
                "metric": "epsilon",
                **{k: r[k] for k in keys},
                "T": int(r["T"]),
                "value": r["epsilon"],
            }
            for _, r in table[table["T"].isin(SUMMARY_TS)].iterrows()
        ]
        e0 = table[(table["panel"] == "a") & (table["accountant"] == "paper")]["eps0"]
        if len(e0):
            rows.append({"metric": "eps0", "panel": "a", "value": float(e0.iloc[0])})
        return pd.DataFrame(rows)


SUMMARY_TS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
