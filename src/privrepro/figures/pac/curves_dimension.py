"""pac, Theorem 3 vs DP as the dimension grows (Sec. 5 and 7.1, described in words).

The paper contrasts PAC noise, which depends on ``sum_j sqrt(lambda_j)`` of the output covariance
and not explicitly on ``d``, with local DP's ``Theta(d)`` (Example 2) and the ``Theta(sqrt d)`` of
constant-sensitivity DP. This draws both for local publishing (Example 2's mechanism) of
synthetic smooth images of growing resolution ``d = side^2``: PAC via Theorem 3 on the exact pool
covariance, and via Algorithm 1 (``m`` Monte-Carlo draws), against ``d / sqrt(2v)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.figures.api import Figure, MemoryEstimate, UnitContext, param
from privrepro.figures.pac._memory import algorithm1_bytes, largest
from privrepro.pac.algorithms import algorithm1_from_samples
from privrepro.pac.gaussian import dp_local_noise_norm
from privrepro.pac.mechanisms import (
    local_publishing_samples,
    local_publishing_spectrum,
    smooth_image_pool,
)
from privrepro.plotting.style import new_figure

__all__ = ["DimensionCurves", "DimensionCurvesParams"]


@dataclass
class DimensionCurvesParams:
    """Resolutions, the synthetic pool and Algorithm 1's parameters."""

    sides: list[int] = param(
        [4, 8, 16, 32, 48], ge=1, le=128, doc="image sides (d = side²)", unique=True
    )
    pool_size: int = param(3000, ge=2, doc="synthetic pool size N", assumed="synthetic data")
    frequencies: int = param(
        6, ge=1, doc="cosine frequencies per axis of the smooth field", assumed="synthetic data"
    )
    pixel_noise: float = param(0.02, ge=0, doc="i.i.d. pixel noise std", assumed="synthetic data")
    v: float = param(1.0, gt=0, doc="MI target (nats)")
    m: int = param(2000, ge=2, doc="Algorithm 1's Monte-Carlo samples")
    c: float = param(1e-6, gt=0, doc="Algorithm 1's floor c", assumed="not stated")
    beta: float = param(0.1, gt=0, doc="Theorem 4's slack β", assumed="not stated")


class DimensionCurves(Figure[DimensionCurvesParams]):
    """E||B|| for MI <= v against d: Theorem 3 / Algorithm 1 vs local DP."""

    params_type = DimensionCurvesParams
    title = "pac — PAC (Theorem 3, Algorithm 1) vs local-DP noise as the dimension grows"

    def units(self, params: DimensionCurvesParams) -> list[dict[str, Any]]:
        return [
            {
                "side": s,
                "pool_size": params.pool_size,
                "frequencies": params.frequencies,
                "pixel_noise": params.pixel_noise,
                "v": params.v,
                "m": params.m,
                "c": params.c,
                "beta": params.beta,
            }
            for s in sorted(set(params.sides))
        ]

    def estimate_memory(self, params: DimensionCurvesParams) -> MemoryEstimate:
        """The largest side: the pool (4 arrays of N × d), its d × d Gram matrix (3 copies),
        and Algorithm 1 on m samples; float64 throughout."""
        d = max(params.sides) ** 2
        return largest(
            {
                "params.pool_size": (8 * 4 * params.pool_size * d, params.pool_size),
                "params.sides": (8 * 3 * d * d, params.sides),
                "params.m": (algorithm1_bytes(params.m, d), params.m),
            },
            f"pool_size × d × 32 B + d² × 24 B + Algorithm 1 on m × d, d = {d}",
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        side, v = int(unit["side"]), unit["v"]
        d = side * side
        pool = smooth_image_pool(
            ctx.rng("data"),
            unit["pool_size"],
            side,
            unit["frequencies"],
            pixel_noise=unit["pixel_noise"],
        )
        lam = local_publishing_spectrum(pool)
        res = algorithm1_from_samples(
            local_publishing_samples(pool, unit["m"], ctx.rng("mc")),
            v,
            unit["beta"],
            unit["c"],
            r=float(np.sqrt(d)),
        )
        base = {"side": side, "d": d, "v": v}
        return pd.DataFrame(
            [
                {
                    **base,
                    "method": "pac_theorem3_exact",
                    "noise_norm": float(np.sqrt(lam).sum() / np.sqrt(2 * v)),
                },
                {
                    **base,
                    "method": "pac_isotropic_exact",
                    "noise_norm": float(np.sqrt(d * lam.sum() / (2 * v))),
                },
                {
                    **base,
                    "method": f"pac_algorithm1 ({res.branch})",
                    "noise_norm": res.noise.expected_norm_upper,
                },
                {**base, "method": "dp_local", "noise_norm": dp_local_noise_norm(d, v)},
            ]
        )

    def summarize(self, table: pd.DataFrame, params: DimensionCurvesParams) -> pd.DataFrame:
        piv = table.pivot_table(index="d", columns="method", values="noise_norm")
        logd = np.log(piv.index.to_numpy(dtype=float))
        rows = []
        for method in piv.columns:
            y = np.log(piv[method].to_numpy())
            slope = float(np.polyfit(logd, y, 1)[0]) if len(logd) > 1 else np.nan
            rows.append({"metric": "loglog_slope_in_d", "method": method, "value": slope})
        return pd.DataFrame(rows)

    def plot(self, table: pd.DataFrame, params: DimensionCurvesParams) -> Any:
        fig, ax = new_figure(width=5.5, height=3.8)
        for i, (method, sub) in enumerate(table.groupby("method", sort=True)):
            sub = sub.sort_values("d")
            ax.plot(sub["d"], sub["noise_norm"], marker="o", ms=3, color=f"C{i}", label=method)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("dimension d (pixels)")
        ax.set_ylabel(f"E‖B‖₂ for MI ≤ {params.v:g}")
        ax.set_title("pac — PAC vs local-DP noise against d (synthetic smooth images)")
        ax.legend(frameon=False, fontsize=8)
        return fig
