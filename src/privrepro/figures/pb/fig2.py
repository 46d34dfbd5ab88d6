"""pb Fig. 2: ε against the size of the smallest preferred region at fixed ρ.

Panels (Sec. 5.1): (a) (ε, δ)-DP, ρ = 0.9, Δ = 1; (b) (ε, δ)-DP, ρ = 0.8, Δ = 4; (c) RDP, ρ = 0.9,
Δ = 1; (d) RDP, ρ = 0.8, Δ = 4. Series: the Gaussian meeting the same utility constraint and
PB-DP with relative-error, fixed and absolute-error regions, ε₀ chosen by Algorithm 2 with the
paper's formulas (solid); the same mechanisms' exact ε (dashed); the exact ε at the best design,
the ε₀ minimising it (dotted; :mod:`privrepro.boosting.exact_design`). The sound bound stays in
the table, undrawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.boosting.plots import plot_sweep
from privrepro.figures.pb import _common as pb
from privrepro.plotting.names import math_text

__all__ = ["Fig2Params", "PrivacyVsRegionSize"]


@dataclass
class Fig2Params(pb.SweepParams):
    """Fig. 2: the |S| axis and the two (ρ, Δ) settings."""

    sizes: list[float] = pb.sizes_param(
        [10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0],
        "|S(Q(X̃))|: 2τ for absolute/relative, the width of a centred fixed region",
        assumed="the x range is not stated; Fig. 4 uses 10–50",
    )
    rho_low: float = pb.rho_param(0.9, "ρ of panels (a), (c) (Sec. 5.1)")
    sensitivity_low: float = pb.sensitivity_param(1.0, "Δ of panels (a), (c) (Sec. 5.1 text)")
    rho_high: float = pb.rho_param(0.8, "ρ of panels (b), (d)")
    sensitivity_high: float = pb.sensitivity_param(4.0, "Δ of panels (b), (d)")


class PrivacyVsRegionSize(pb.SweepFigure[Fig2Params]):
    """ε vs |S| at fixed ρ: Gaussian vs PB-DP (paper's accounting and exact)."""

    title = "ε against the smallest preferred region |S| at fixed ρ (Gaussian vs PB-DP)"

    def panel_grid(self, params: Any, panel: str) -> tuple[list[float], list[float], float]:
        low = panel in ("a", "c")
        rho = params.rho_low if low else params.rho_high
        sens = params.sensitivity_low if low else params.sensitivity_high
        return [float(rho)] * len(params.sizes), [float(s) for s in params.sizes], float(sens)

    def plot(self, table: pd.DataFrame, params: Any) -> Any:
        titles = {
            "a": f"(a) DP, ρ={params.rho_low:g}, Δ={params.sensitivity_low:g}",
            "b": f"(b) DP, ρ={params.rho_high:g}, Δ={params.sensitivity_high:g}",
            "c": f"(c) RDP, ρ={params.rho_low:g}, Δ={params.sensitivity_low:g}",
            "d": f"(d) RDP, ρ={params.rho_high:g}, Δ={params.sensitivity_high:g}",
        }
        return plot_sweep(
            table,
            "size",
            math_text("|S(Q(X̃))|"),
            titles,
            "pb Fig. 2 — ε vs region size; solid: paper's accounting, dashed: exact at its ε₀, "
            "dotted: exact at the best design",
        )

    def summarize(self, table: pd.DataFrame, params: Any) -> pd.DataFrame:
        """ε of each series at every point (metric ``epsilon``), the exact/paper ratio, and the
        points where Algorithm 2's design is, exactly, no better than the Gaussian."""
        out = pb.epsilon_metrics(table)
        point = pb.EPSILON_KEYS[:-1]
        paper = out[out["accountant"] == "paper"].set_index(point)["value"]
        exact = out[out["accountant"] == "exact"].set_index(point)["value"]
        both = pd.concat([paper.rename("paper"), exact.rename("exact")], axis=1).dropna()
        understated = both[both["exact"] > both["paper"] * (1 + 1e-6)]
        # the same point without its case: the utility-matched Gaussian's ε there
        no_case = [k for k in point if k != "case"]
        gauss = out[out["case"] == "gaussian"].set_index(no_case)["value"]
        at_gauss = gauss.reindex(both.index.droplevel("case")).to_numpy()
        above = [float((both["exact"].to_numpy() >= at_gauss).sum())]
        extra = [
            {"metric": "paper_understates_points", "value": float(len(understated))},
            {"metric": "paper_design_at_or_above_gaussian_points", "value": above[0]},
            {
                "metric": "max_exact_over_paper",
                "value": float(np.max(both["exact"] / both["paper"])) if len(both) else np.nan,
            },
        ]
        return pd.concat([out, pd.DataFrame(extra)], ignore_index=True)
