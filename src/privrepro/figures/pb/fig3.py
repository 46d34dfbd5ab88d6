"""pb Fig. 3: ε against the confidence level ρ at a fixed smallest region S = [−10, 10].

Panels (Sec. 5.1): (a) (ε, δ)-DP, Δ = 1 (the caption says 2); (b) (ε, δ)-DP, Δ = 4; (c) RDP,
Δ = 1; (d) RDP, Δ = 4. Series as in Fig. 2: paper's accounting solid, exact at its ε₀ dashed,
exact at the best design dotted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from privrepro.boosting.plots import plot_sweep
from privrepro.figures.api import param
from privrepro.figures.pb import _common as pb

__all__ = ["Fig3Params", "PrivacyVsConfidence"]


@dataclass
class Fig3Params(pb.SweepParams):
    """Fig. 3: the ρ axis, the region and the sensitivities."""

    rhos: list[float] = param(
        [round(0.6 + 0.01 * i, 2) for i in range(40)] + [0.995, 0.999],
        gt=0,
        lt=1,
        unique=True,
        doc="ρ grid ('from 0.6 to 1'; ρ = 1 gives ε = ∞)",
        assumed="spacing not stated: 0.01 from 0.6 to 0.99, then 0.995, 0.999",
    )
    size: float = param(
        20.0, gt=0, doc="|S| of the smallest region: 'inf S = [−10, 10]' read as τ = 10"
    )
    sensitivity_a: float = pb.sensitivity_param(
        1.0, "Δ of panel (a)", assumed="the text says 1, the caption 2; the text is followed"
    )
    sensitivity_b: float = pb.sensitivity_param(4.0, "Δ of panel (b)")
    sensitivity_c: float = pb.sensitivity_param(1.0, "Δ of panel (c)")
    sensitivity_d: float = pb.sensitivity_param(4.0, "Δ of panel (d)")


class PrivacyVsConfidence(pb.SweepFigure[Fig3Params]):
    """ε vs ρ at fixed |S|: Gaussian vs PB-DP (paper's accounting and exact)."""

    title = "ε against the confidence level ρ at fixed smallest region (Gaussian vs PB-DP)"

    def panel_grid(self, params: Any, panel: str) -> tuple[list[float], list[float], float]:
        sens = float(getattr(params, f"sensitivity_{panel}"))
        return [float(r) for r in params.rhos], [float(params.size)] * len(params.rhos), sens

    def plot(self, table: pd.DataFrame, params: Any) -> Any:
        titles = {
            p: f"({p}) {'DP' if p in 'ab' else 'RDP'}, |S|={params.size:g}, "
            f"Δ={getattr(params, f'sensitivity_{p}'):g}"
            for p in "abcd"
        }
        return plot_sweep(
            table,
            "rho",
            "ρ",
            titles,
            "pb Fig. 3 — ε vs ρ; solid: paper's accounting, dashed: exact at its ε₀, "
            "dotted: exact at the best design",
        )

    def summarize(self, table: pd.DataFrame, params: Any) -> pd.DataFrame:
        return pb.epsilon_metrics(table)
