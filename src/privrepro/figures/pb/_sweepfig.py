"""Base recipe of Figs. 2 and 3: one run unit per (panel, case, privacy level)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from privrepro.figures.api import Figure, UnitContext, param
from privrepro.figures.pb._common import sweep_rows

__all__ = ["SweepFigure", "SweepParams"]

PANELS = {"a": ("dp", "low"), "b": ("dp", "high"), "c": ("rdp", "low"), "d": ("rdp", "high")}


@dataclass
class SweepParams:
    """Parameters shared by Figs. 2 and 3 (the paper's Sec. 5.1 settings and the unstated choices)."""

    deltas: list[float] = param(
        [1e-5, 1e-7], gt=0, lt=1, unique=True, doc="δ of panels (a), (b) (Sec. 5.1)"
    )
    alphas: list[float] = param(
        [2.0, 10.0, 100.0], gt=1, unique=True, doc="Rényi orders of panels (c), (d) (Sec. 5.1)"
    )
    cases: list[str] = param(
        ["relative", "fixed", "absolute"],
        choices=["relative", "fixed", "absolute"],
        unique=True,
        doc="PB-DP region cases drawn (the captions list all three)",
    )
    theta: float = param(
        0.05,
        ge=0,
        le=1,
        doc="relative-error ratio θ",
        assumed="θ is never given; 0.05 follows the introduction's '5% of the true value'",
    )
    calibration: str = param(
        "analytic",
        choices=["analytic", "classical"],
        doc="σ of the Gaussian kernel (and baseline) from (ε₀, δ)",
        assumed="not stated; the exact (analytic) calibration. It relabels ε₀ only",
    )
    tol: float = param(
        1e-6, gt=0, lt=1, doc="tolerance of Algorithm 2's ternary search", assumed="not stated"
    )
    eps_max_factor: float = param(
        1.0,
        gt=0,
        doc="ε_max of Algorithm 2 as a multiple of the utility-matched Gaussian's ε",
        assumed="ε_max ('the total privacy budget') is not stated; at ε_G "
        "the boosting rate is 0, so the search never does worse than Gaussian",
    )
    accountants: list[str] = param(
        ["paper", "exact"],
        choices=["paper", "exact", "sound"],
        unique=True,
        doc="paper: Props. 1–2 at the paper's pair; exact: divergence of "
        "the two output densities at the same ε₀; sound: the note's bound",
    )
    exact_stride: int = param(1, ge=1, doc="evaluate exact/sound on every n-th x point")
    exact_pairs: int = param(
        5,
        ge=1,
        le=101,
        doc="pair positions the exact accounting maximises over "
        "(relative and fixed regions; both orders)",
        assumed="a grid of pairs at distance Δ; the worst pair is not derived",
    )
    fixed_pair_rule: str = param(
        "paper",
        choices=["paper", "worst"],
        doc="fixed region: the paper's pair (τ_l, τ_l+Δ) or the worst pair in S",
        assumed="the paper's pair; 'worst' differs only when Δ is not small",
    )


class SweepFigure(Figure[Any]):
    """Rows: ``panel, notion, level, case, rho, size, sensitivity, accountant, eps0, epsilon``."""

    def panel_grid(self, params: Any, panel: str) -> tuple[list[float], list[float], float]:
        """``(rho list, size list, sensitivity)`` of a panel."""
        raise NotImplementedError

    def units(self, params: Any) -> list[dict[str, Any]]:
        """One unit per (notion, case): every panel and level of that notion in one batch."""
        units = []
        for notion in ("dp", "rdp"):
            pts: dict[str, list[Any]] = {
                "panel": [],
                "level": [],
                "rho": [],
                "sensitivity": [],
                "size": [],
            }
            for panel, (pn, _) in PANELS.items():
                if pn != notion:
                    continue
                rho, size, sens = self.panel_grid(params, panel)
                for level in params.deltas if notion == "dp" else params.alphas:
                    pts["panel"] += [panel] * len(rho)
                    pts["level"] += [float(level)] * len(rho)
                    pts["rho"] += rho
                    pts["sensitivity"] += [sens] * len(rho)
                    pts["size"] += size
            for case in ["gaussian", *params.cases]:
                units.append(
                    {
                        "notion": notion,
                        "case": case,
                        **pts,
                        "theta": params.theta,
                        "calibration": params.calibration,
                        "tol": params.tol,
                        "eps_max_factor": params.eps_max_factor,
                        "accountants": list(params.accountants),
                        "exact_stride": params.exact_stride,
                        "exact_pairs": params.exact_pairs,
                        "fixed_pair_rule": params.fixed_pair_rule,
                    }
                )
        return units

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        return sweep_rows(
            unit["case"],
            unit["notion"],
            unit["panel"],
            unit["level"],
            unit["rho"],
            unit["sensitivity"],
            unit["size"],
            theta=unit["theta"],
            calibration=unit["calibration"],
            tol=unit["tol"],
            accountants=unit["accountants"],
            exact_stride=unit["exact_stride"],
            exact_pairs=unit["exact_pairs"],
            pair_rule=unit["fixed_pair_rule"],
            eps_max_factor=unit["eps_max_factor"],
        )
