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

from privrepro.boosting.fixed_region import fixed_region_extra_loss, fixed_region_profiles
from privrepro.boosting.plots import plot_fixed_region
from privrepro.boosting.worst_pairs import check_query_domain
from privrepro.config import ConfigError
from privrepro.data.provenance import ANALYTIC
from privrepro.figures.api import Figure, UnitContext, grid_units, param
from privrepro.figures.pb import _common as pb

__all__ = ["Fig5Params", "FixedRegionFeasibility"]


@dataclass
class Fig5Params:
    """Fig. 5 settings; the paper leaves most of them unstated."""

    a_rho: float = pb.rho_param(0.8, "ρ of panel (a) (caption)")
    a_eps0: float = param(0.1, gt=0, doc="kernel ε₀ of panel (a) (Sec. 5.3)")
    a_delta0: float = pb.delta_param(1e-5, "kernel δ₀ of panel (a)", assumed="not stated")
    a_sensitivity: float = pb.sensitivity_param(1.0, "Δ of panel (a)", assumed="not stated")
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
    query_domain: list[float] | None = param(
        None,
        length=2,
        increasing=True,
        doc="[lo, hi]: the query's true values; the exact rows' pairs lie in S ∩ [lo, hi] (at "
        "distance min(Δ, its width)); part of each unit's identity when set",
        assumed="the paper states no range of Q(X): null, true values anywhere in S",
    )

    def check(self, prefix: str) -> None:
        """The query domain is finite, holds a pair at every Δ and overlaps every S."""
        if self.query_domain is None:
            return
        sens = max(self.a_sensitivity, *self.b_sensitivities)
        check_query_domain(self.query_domain, sens, f"{prefix}.query_domain")
        lo, hi = self.query_domain
        half = min(*self.a_widths, *self.b_widths) / 2
        if not (hi > -half and lo < half):
            raise ConfigError(
                f"{prefix}.query_domain",
                self.query_domain,
                f"must overlap the narrowest fixed region [{-half!r}, {half!r}]",
            )


PANEL_A = ("rho", "eps0", "delta0", "sensitivity", "epsilons", "points")
PANEL_B = ("sigma", "rhos", "alphas")
"""The ``a_*`` / ``b_*`` parameters a unit of panel (a) / (b) holds, named without the prefix."""


class FixedRegionFeasibility(Figure[Fig5Params]):
    """Rows of panel a: ``panel, width, mechanism, accountant, epsilon, delta``; panel b:
    ``panel, width, sensitivity, alpha, rho, accountant, extra_loss``."""

    data = ANALYTIC
    version = 2  # panel (b)'s exact extra loss at the pair distance min(Δ, |S|)
    title = "Fixed preferred region: PB-DP vs bounded Gaussian profiles; extra loss L1 against ρ"

    def units(self, p: Fig5Params) -> list[dict[str, Any]]:
        a = {"panel": "a", **{k: getattr(p, f"a_{k}") for k in PANEL_A}}
        b = {"panel": "b", **{k: getattr(p, f"b_{k}") for k in PANEL_B}}
        a["exact_pairs"] = b["exact_pairs"] = p.exact_pairs
        if p.query_domain is not None:  # absent when null: units stored before keep their hash
            a["query_domain"] = b["query_domain"] = [float(v) for v in p.query_domain]
        return grid_units(a, width=p.a_widths) + grid_units(
            b, width=p.b_widths, sensitivity=p.b_sensitivities
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        u = unit
        if u["panel"] == "a":
            eps = np.linspace(u["epsilons"][0], u["epsilons"][1], int(u["points"]))
            args: tuple[Any, ...] = (u["rho"], u["eps0"], u["delta0"], u["sensitivity"], eps)
            out = fixed_region_profiles(
                u["width"], *args, exact_pairs=u["exact_pairs"], query_domain=u.get("query_domain")
            )
        else:
            args = (u["sensitivity"], u["sigma"], u["rhos"], u["alphas"])
            out = fixed_region_extra_loss(
                u["width"], *args, exact_pairs=u["exact_pairs"], query_domain=u.get("query_domain")
            )
        out.insert(0, "panel", u["panel"])
        return out

    def plot(self, table: pd.DataFrame, p: Fig5Params) -> Any:
        titles = (
            f"(a) PB-DP (ρ={p.a_rho:g}) vs bounded (x), ε₀={p.a_eps0:g}",
            f"(b) L1 vs ρ, σ={p.b_sigma:g}: solid paper pair, dotted worst pair,\n"
            "dashed/dash-dot exact − kernel (α=2 / 10)",
        )
        return plot_fixed_region(table, titles, "pb Fig. 5 — fixed preferred region")

    def summarize(self, table: pd.DataFrame, p: Fig5Params) -> pd.DataFrame:
        """Prop. 5's L1 at every ρ of panel (b); the smallest ε with δ(ε) ≤ δ₀ in panel (a)."""
        b = table[(table["panel"] == "b") & (table["accountant"] == "paper")]
        rows = [
            {"metric": "L1_paper_pair", **{k: r[k] for k in _B_KEYS}, "value": r["extra_loss"]}
            for _, r in b.iterrows()
        ]
        a = table[(table["panel"] == "a") & (table["mechanism"] != "kernel")]
        for (w, m, acc), g in a.groupby(["width", "mechanism", "accountant"]):
            hit = g[g["delta"] <= p.a_delta0]
            eps = float(hit["epsilon"].min()) if len(hit) else np.nan
            keys = {"width": w, "mechanism": m, "accountant": acc}
            rows.append({"metric": "epsilon_at_delta0", **keys, "value": eps})
        return pd.DataFrame(rows)


_B_KEYS = ("width", "sensitivity", "rho")
