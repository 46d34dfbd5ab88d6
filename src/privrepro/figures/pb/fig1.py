"""pb Fig. 1: the PB-DP output density (eq. 2) for the three special cases, at two neighbouring
true values Q(X) and Q(X'), with a Gaussian kernel; the region ends are drawn as vertical lines.

The paper states no parameter values for this illustration; every value here is assumed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.boosting.densities import output_densities
from privrepro.boosting.kernels import GaussianKernel
from privrepro.boosting.plots import plot_densities
from privrepro.boosting.regions import AbsoluteRegion, FixedRegion, RelativeRegion
from privrepro.data.provenance import ANALYTIC
from privrepro.figures.api import Figure, UnitContext, grid_units, param
from privrepro.figures.pb import _common as pb

__all__ = ["Fig1Params", "Illustration"]

_ASSUMED = "Fig. 1 states no values; chosen to make the boosted step visible"


@dataclass
class Fig1Params:
    """Illustration parameters (all assumed)."""

    sigma: float = param(3.0, gt=0, doc="σ of the Gaussian kernel", assumed=_ASSUMED)
    rho: float = pb.rho_param(0.9, "confidence level ρ", assumed=_ASSUMED)
    query: float = param(4.0, doc="Q(X)", assumed=_ASSUMED)
    sensitivity: float = pb.sensitivity_param(2.0, "Q(X') − Q(X)", assumed=_ASSUMED)
    tau: float = param(3.0, gt=0, doc="τ of the relative and absolute regions", assumed=_ASSUMED)
    theta: float = pb.theta_param(0.3, "θ of the relative region", assumed=_ASSUMED)
    fixed_lower: float = param(0.0, doc="τ_l of the fixed region", assumed=_ASSUMED)
    fixed_upper: float = param(
        8.0, above="fixed_lower", doc="τ_u of the fixed region", assumed=_ASSUMED
    )
    points: int = param(801, ge=11, le=100_001, doc="grid points on the y axis")

    def check(self, prefix: str) -> None:
        """σ is resolved by the grid: the grid spans ``sensitivity + 2τ + 8σ`` in ``points − 1``
        steps (:func:`~privrepro.boosting.densities.output_densities`), and a kernel narrower
        than one step is drawn as zeros between grid points (its density integral on the grid
        is no longer ≈ 1); σ ≥ step reads ``σ ≥ (sensitivity + 2τ) / (points − 9)``."""
        from privrepro.config.validation import ConfigError

        least = (self.sensitivity + 2 * self.tau) / (self.points - 9)
        span = abs(self.query) + self.sensitivity + 8 * self.sigma + 2 * self.tau
        if not math.isfinite(span):
            raise ConfigError(
                f"{prefix}.sigma",
                self.sigma,
                "must keep the grid's span |query| + sensitivity + 8σ + 2τ finite in float64",
            )
        if not self.sigma >= least:
            raise ConfigError(
                f"{prefix}.sigma",
                self.sigma,
                f"must be at least (sensitivity + 2·tau) / (points − 9) = {least:.4g}, one step "
                f"of the grid of {prefix}.points = {self.points} (a narrower kernel falls "
                "between grid points)",
            )


class Illustration(Figure[Fig1Params]):
    """Density of eq. (2) for the relative, fixed and absolute cases."""

    data = ANALYTIC
    title = "PB-DP output densities for the three special cases (Gaussian kernel)"

    def units(self, p: Fig1Params) -> list[dict[str, Any]]:
        keys = ("sigma", "rho", "query", "sensitivity", "tau", "theta", "points")
        return grid_units(
            {k: getattr(p, k) for k in keys} | {"fixed": [p.fixed_lower, p.fixed_upper]}
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        regions = {
            "relative": RelativeRegion(unit["theta"], unit["tau"]),
            "fixed": FixedRegion(*unit["fixed"]),
            "absolute": AbsoluteRegion(unit["tau"]),
        }
        return output_densities(
            GaussianKernel(unit["sigma"]),
            regions,
            unit["rho"],
            unit["query"],
            unit["sensitivity"],
            margin=unit["tau"],
            points=unit["points"],
        )

    def plot(self, table: pd.DataFrame, p: Fig1Params) -> Any:
        return plot_densities(
            table,
            f"pb Fig. 1 — PB-DP densities, Gaussian kernel σ={p.sigma:g}, ρ={p.rho:g} "
            "(solid vertical lines: region ends)",
        )

    def summarize(self, table: pd.DataFrame, p: Fig1Params) -> pd.DataFrame:
        """In-region mass (ρ at the worst input) and the density's integral on the grid (≈ 1)."""
        rows = []
        for (case, who), g in table.groupby(["case", "input"]):
            integral = float(g["density"].sum() * float(np.diff(g["y"]).mean()))
            for metric, value in (
                ("in_region_mass", float(g["in_region_mass"].iloc[0])),
                ("density_integral_on_grid", integral),
            ):
                rows.append({"metric": metric, "case": case, "input": who, "value": value})
        return pd.DataFrame(rows)
