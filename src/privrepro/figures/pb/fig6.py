"""pb Fig. 6: T-fold composition, Gaussian vs PB-DP (Sec. 5.4).

ρ = 0.9, |S| = 10, Δ = 3, T = 1 … 1000. (a) (ε, δ)-DP at δ = 1e-5: the Gaussian's composed
profile is closed form (μ√T); PB-DP by the paper's Algorithm 1 (corrected, O(T) per T) at every
integer T, and exactly by composing the pessimistic privacy-loss distribution of the two output
densities with ``dp_accounting`` on a grid of T. (b) RDP at α = 2, 20: T × the single-step value
(Remark 2), the paper's Prop. 2 and the exact Rényi divergence. ε₀ is chosen once by Algorithm 2
at T = 1 (the per-T re-optimisation falls into a degenerate basin, note §5.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.boosting._dp import gaussian_delta_mu
from privrepro.boosting.accounting import composition_epsilon_curve
from privrepro.boosting.batch import gaussian_epsilon_batch
from privrepro.boosting.design import (
    PBSetting,
    gaussian_baseline_sigma,
    optimise_eps0,
    ternary_search,
)
from privrepro.boosting.exact import exact_pld, exact_rdp
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.plotting.style import new_figure

__all__ = ["Composition", "Fig6Params"]


@dataclass
class Fig6Params:
    """Fig. 6 settings."""

    rho: float = param(0.9, gt=0, lt=1, doc="ρ (Sec. 5.4)")
    size: float = param(
        10.0, gt=0, doc="|S(Q(X̃))|", assumed="'|S| = 10' read as τ = 5 (the caption's 'inf S = 10')"
    )
    sensitivity: float = param(3.0, gt=0, doc="Δ (Sec. 5.4)")
    case: str = param(
        "absolute",
        choices=["absolute", "relative"],
        doc="PB-DP region case",
        assumed="not stated; absolute error",
    )
    theta: float = param(0.05, ge=0, le=1, doc="θ if relative", assumed="not stated")
    delta: float = param(1e-5, gt=0, lt=1, doc="δ of panel (a) (Sec. 5.4)")
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
        doc="T values of the exact (PLD) composition in panel (a) (none: paper's accounting only)",
    )
    pld_discretization: float = param(
        1e-3,
        gt=0,
        lt=1,
        doc="loss grid of the exact PLD (pessimistic: overstates ε by at most T × this)",
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
        assumed="not stated whether ε₀ is re-optimised per T; off by default (note §5.2: the "
        "re-optimised search falls into a degenerate small-ε₀ basin)",
    )
    rdp_exact_optimum: bool = param(True, doc="also draw PB-DP with ε₀ minimising the exact RDP")


class Composition(Figure[Fig6Params]):
    """Rows: ``panel, T, alpha, mechanism, accountant, eps0, epsilon``."""

    params_type = Fig6Params
    title = "T-fold composition: Gaussian vs PB-DP (paper's Algorithm 1 and exact PLD; RDP)"

    def units(self, p: Fig6Params) -> list[dict[str, Any]]:
        common = {
            "rho": p.rho,
            "size": p.size,
            "sensitivity": p.sensitivity,
            "case": p.case,
            "theta": p.theta,
            "t_max": p.t_max,
            "eps0_rule": p.eps0_rule,
            "eps0_fixed": p.eps0_fixed,
            "reoptimise_per_t": p.reoptimise_per_t,
        }
        return [
            {
                "panel": "a",
                **common,
                "delta": p.delta,
                "exact_ts": sorted({t for t in p.exact_ts if t <= p.t_max}),
                "pld_discretization": p.pld_discretization,
            },
            {"panel": "b", **common, "alphas": p.alphas, "rdp_exact_optimum": p.rdp_exact_optimum},
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        return self._dp(unit, ctx) if unit["panel"] == "a" else self._rdp(unit)

    @staticmethod
    def _eps0(s: PBSetting, unit: dict[str, Any]) -> float:
        return float(unit["eps0_fixed"]) if unit["eps0_rule"] == "fixed" else optimise_eps0(s).eps0

    def _dp(self, u: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        s = PBSetting(
            u["case"], u["rho"], u["sensitivity"], u["size"], theta=u["theta"], delta=u["delta"]
        )
        d = float(u["sensitivity"])
        T = np.arange(1, int(u["t_max"]) + 1)
        sigma_g = gaussian_baseline_sigma(s.size, s.rho)
        gauss = gaussian_epsilon_batch(d * np.sqrt(T) / sigma_g, u["delta"])
        eps0 = self._eps0(s, u)
        mech = s.mechanism(eps0)
        sig = mech.kernel.scale
        terms = mech.paper_terms(d)
        paper = composition_epsilon_curve(
            terms, lambda e, t: gaussian_delta_mu(e, d * np.sqrt(t) / sig), T, u["delta"]
        )
        frames = [
            pd.DataFrame(
                {
                    "T": T,
                    "mechanism": "gaussian",
                    "accountant": "exact",
                    "eps0": np.nan,
                    "epsilon": gauss,
                }
            ),
            pd.DataFrame(
                {"T": T, "mechanism": "pb", "accountant": "paper", "eps0": eps0, "epsilon": paper}
            ),
        ]
        if u["exact_ts"]:
            c, c2 = s.region().paper_pair(d)
            pld = exact_pld(mech, c, c2, u["pld_discretization"])
            vals = [
                pld.self_compose(int(t)).get_epsilon_for_delta(u["delta"])
                if t > 1
                else pld.get_epsilon_for_delta(u["delta"])
                for t in ctx.progress(u["exact_ts"], desc="pb fig6 exact PLD")
            ]
            frames.append(
                pd.DataFrame(
                    {
                        "T": u["exact_ts"],
                        "mechanism": "pb",
                        "accountant": "exact",
                        "eps0": eps0,
                        "epsilon": vals,
                    }
                )
            )
        if u.get("reoptimise_per_t") and u["exact_ts"]:
            top = float(gauss[0])
            vals, e0s = [], []
            for t in ctx.progress(u["exact_ts"], desc="pb fig6 re-optimise per T"):
                t_arr = np.array([int(t)])

                def objective(e: float, t_arr: np.ndarray = t_arr) -> float:
                    m = s.mechanism(e)
                    sg = m.kernel.scale
                    return float(
                        composition_epsilon_curve(
                            m.paper_terms(d),
                            lambda x, tt: gaussian_delta_mu(x, d * np.sqrt(tt) / sg),
                            t_arr,
                            u["delta"],
                        )[0]
                    )

                res = ternary_search(objective, 0.0, top, 1e-4)
                vals.append(res.epsilon)
                e0s.append(res.eps0)
            frames.append(
                pd.DataFrame(
                    {
                        "T": u["exact_ts"],
                        "mechanism": "pb",
                        "accountant": "paper_reoptimised",
                        "eps0": e0s,
                        "epsilon": vals,
                    }
                )
            )
        out = pd.concat(frames, ignore_index=True)
        out.insert(0, "panel", "a")
        out["alpha"] = np.nan
        out["q"] = terms.q
        return out

    def _rdp(self, u: dict[str, Any]) -> pd.DataFrame:
        d = float(u["sensitivity"])
        T = np.arange(1, int(u["t_max"]) + 1)
        frames = []
        for a in u["alphas"]:
            s = PBSetting(
                u["case"], u["rho"], d, u["size"], theta=u["theta"], notion="rdp", alpha=a
            )
            sigma_g = gaussian_baseline_sigma(s.size, s.rho)
            g1 = a * d * d / (2 * sigma_g**2)
            eps0 = self._eps0(s, u)
            mech = s.mechanism(eps0)
            series = [
                ("gaussian", "exact", np.nan, g1),
                ("pb", "paper", eps0, s.paper_epsilon_of(mech)),
                ("pb", "exact", eps0, exact_rdp(mech, d, a, s.exact_pairs)),
            ]
            if u["rdp_exact_optimum"]:
                top = float(g1)

                def objective(e: float, s: PBSetting = s) -> float:
                    return s.epsilon(e, "exact")

                res = ternary_search(objective, 0.0, top, 1e-5)
                series.append(("pb", "exact_optimised", res.eps0, res.epsilon))
            for mech_name, acc, e0, one in series:
                frames.append(
                    pd.DataFrame(
                        {
                            "T": T,
                            "alpha": a,
                            "mechanism": mech_name,
                            "accountant": acc,
                            "eps0": e0,
                            "epsilon": T * one,
                        }
                    )
                )
        out = pd.concat(frames, ignore_index=True)
        out.insert(0, "panel", "b")
        return out

    def plot(self, table: pd.DataFrame, p: Fig6Params) -> Any:
        fig, axes = new_figure(1, 2, width=4.6, height=3.5, squeeze=False)
        ax, bx = axes[0]
        a = table[table["panel"] == "a"]
        styles = {
            ("gaussian", "exact"): ("k", "-", "Gaussian (exact)"),
            ("pb", "paper"): ("C1", "-", "PB-DP, paper's Algorithm 1"),
            ("pb", "exact"): ("C1", "--", "PB-DP, exact (PLD)"),
            ("pb", "exact_optimised"): ("C2", ":", "PB-DP, exact, ε₀ re-optimised"),
            ("pb", "paper_reoptimised"): ("C4", "-.", "PB-DP, paper, ε₀ re-optimised per T"),
        }
        for (m, acc), g in a.groupby(["mechanism", "accountant"]):
            col, ls, lab = styles[(m, acc)]
            g = g.sort_values("T")
            ax.plot(
                g["T"],
                g["epsilon"],
                ls,
                color=col,
                label=lab,
                marker="o" if acc == "exact" and m == "pb" else None,
                ms=3,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("T")
        ax.set_ylabel(f"composed ε at δ={p.delta:g}")
        ax.set_title(f"(a) (ε, δ)-DP, ρ={p.rho:g}, |S|={p.size:g}, Δ={p.sensitivity:g}", fontsize=9)
        ax.legend(fontsize=7, frameon=False)
        b = table[table["panel"] == "b"]
        styles = {
            ("gaussian", "exact"): ("k", "-", "Gaussian"),
            ("pb", "paper"): ("C1", "-", "PB-DP, paper's Prop. 2"),
            ("pb", "exact"): ("C1", "--", "PB-DP, exact Rényi"),
            ("pb", "exact_optimised"): ("C2", ":", "PB-DP, exact Rényi, ε₀ minimising it"),
        }
        for i, (alpha, g) in enumerate(b.groupby("alpha")):
            for (m, acc), h in g.groupby(["mechanism", "accountant"]):
                col, ls, lab = styles[(m, acc)]
                h = h.sort_values("T")
                bx.plot(
                    h["T"],
                    h["epsilon"],
                    ls,
                    color=col if m == "pb" else "k",
                    alpha=1.0 if i == 0 else 0.55,
                    lw=1.3 if i == 0 else 1.0,
                    label=f"{lab}, α={alpha:g}",
                )
        bx.set_xscale("log")
        bx.set_yscale("log")
        bx.set_xlabel("T")
        bx.set_ylabel("composed RDP ε (T × per step)")
        bx.set_title("(b) RDP (dark: first α, light: second α)", fontsize=9)
        bx.legend(fontsize=6, frameon=False)
        fig.suptitle(
            "pb Fig. 6 — composition; solid: paper's accounting, dashed: exact", fontsize=10
        )
        return fig

    def summarize(self, table: pd.DataFrame, p: Fig6Params) -> pd.DataFrame:
        rows = []
        for _, r in table.iterrows():
            if r["T"] in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
                rows.append(
                    {
                        "metric": "epsilon",
                        "panel": r["panel"],
                        "T": int(r["T"]),
                        "alpha": r["alpha"],
                        "mechanism": r["mechanism"],
                        "accountant": r["accountant"],
                        "value": r["epsilon"],
                    }
                )
        e0 = table[(table["panel"] == "a") & (table["accountant"] == "paper")]["eps0"]
        if len(e0):
            rows.append({"metric": "eps0", "panel": "a", "value": float(e0.iloc[0])})
        return pd.DataFrame(rows)
