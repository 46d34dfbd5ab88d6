"""pb Fig. 1: the PB-DP output density (eq. 2) for the three special cases, at two neighbouring
true values Q(X) and Q(X'), with a Gaussian kernel; the region ends are drawn as vertical lines.

The paper states no parameter values for this illustration; every value here is assumed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.boosting.kernels import GaussianKernel
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.regions import AbsoluteRegion, FixedRegion, RelativeRegion
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.plotting.style import new_figure

__all__ = ["Fig1Params", "Illustration"]

_ASSUMED = "Fig. 1 states no values; chosen to make the boosted step visible"


@dataclass
class Fig1Params:
    """Illustration parameters (all assumed)."""

    sigma: float = param(3.0, gt=0, doc="σ of the Gaussian kernel", assumed=_ASSUMED)
    rho: float = param(0.9, gt=0, lt=1, doc="confidence level ρ", assumed=_ASSUMED)
    query: float = param(4.0, doc="Q(X)", assumed=_ASSUMED)
    sensitivity: float = param(2.0, gt=0, doc="Q(X') − Q(X)", assumed=_ASSUMED)
    tau: float = param(3.0, gt=0, doc="τ of the relative and absolute regions", assumed=_ASSUMED)
    theta: float = param(0.3, ge=0, le=1, doc="θ of the relative region", assumed=_ASSUMED)
    fixed_lower: float = param(0.0, doc="τ_l of the fixed region", assumed=_ASSUMED)
    fixed_upper: float = param(
        8.0, above="fixed_lower", doc="τ_u of the fixed region", assumed=_ASSUMED
    )
    points: int = param(801, ge=11, le=100_001, doc="grid points on the y axis")


class Illustration(Figure[Fig1Params]):
    """Density of eq. (2) for the relative, fixed and absolute cases."""

    params_type = Fig1Params
    title = "PB-DP output densities for the three special cases (Gaussian kernel)"

    def units(self, p: Fig1Params) -> list[dict[str, Any]]:
        return [
            {
                "sigma": p.sigma,
                "rho": p.rho,
                "query": p.query,
                "sensitivity": p.sensitivity,
                "tau": p.tau,
                "theta": p.theta,
                "fixed": [p.fixed_lower, p.fixed_upper],
                "points": p.points,
            }
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        k = GaussianKernel(unit["sigma"])
        regions = {
            "relative": RelativeRegion(unit["theta"], unit["tau"]),
            "fixed": FixedRegion(*unit["fixed"]),
            "absolute": AbsoluteRegion(unit["tau"]),
        }
        c = unit["query"]
        c2 = c + unit["sensitivity"]
        y = np.linspace(
            c - 4 * unit["sigma"] - unit["tau"],
            c2 + 4 * unit["sigma"] + unit["tau"],
            unit["points"],
        )
        frames = []
        for case, region in regions.items():
            mech = BoostedMechanism(k, region, unit["rho"])
            for who, centre in (("X", c), ("X'", c2)):
                lo, hi = (float(v) for v in region.bounds(centre))
                frames.append(
                    pd.DataFrame(
                        {
                            "case": case,
                            "input": who,
                            "query": centre,
                            "y": y,
                            "density": mech.density(y, centre),
                            "kernel_density": k.pdf(y - centre),
                            "region_lower": lo,
                            "region_upper": hi,
                            "q": mech.q,
                            "in_region_mass": float(mech.in_region_mass(centre)),
                        }
                    )
                )
        return pd.concat(frames, ignore_index=True)

    def plot(self, table: pd.DataFrame, p: Fig1Params) -> Any:
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
                ax.plot(
                    cur["y"],
                    cur["kernel_density"],
                    color=colour,
                    ls=":",
                    lw=0.9,
                    label=f"kernel at Q({who})",
                )
                for edge in (cur["region_lower"].iloc[0], cur["region_upper"].iloc[0]):
                    ax.axvline(edge, color=colour, lw=0.9)
            ax.set_title(f"{names[case]}, q={sub['q'].iloc[0]:.2f}", fontsize=9)
            ax.set_xlabel("output y")
        axes[0][0].set_ylabel("density")
        axes[0][0].legend(fontsize=7, frameon=False)
        fig.suptitle(
            f"pb Fig. 1 — PB-DP densities, Gaussian kernel σ={p.sigma:g}, ρ={p.rho:g} "
            "(solid vertical lines: region ends)",
            fontsize=10,
        )
        return fig

    def summarize(self, table: pd.DataFrame, p: Fig1Params) -> pd.DataFrame:
        rows = []
        for (case, who), g in table.groupby(["case", "input"]):
            dy = float(np.diff(g["y"]).mean())
            rows.append(
                {
                    "metric": "in_region_mass",
                    "case": case,
                    "input": who,
                    "value": float(g["in_region_mass"].iloc[0]),
                }
            )
            rows.append(
                {
                    "metric": "density_integral_on_grid",
                    "case": case,
                    "input": who,
                    "value": float(g["density"].sum() * dy),
                }
            )
        return pd.DataFrame(rows)
