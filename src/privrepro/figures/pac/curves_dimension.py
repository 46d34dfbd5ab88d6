"""pac, Theorem 3 vs DP as the dimension grows (Sec. 5 and 7.1, described in words).

The paper contrasts PAC noise, which depends on ``sum_j sqrt(lambda_j)`` of the output covariance
and not explicitly on ``d``, with local DP's ``Theta(d)`` (Example 2) and the ``Theta(sqrt d)`` of
constant-sensitivity DP. This draws both for local publishing (Example 2's mechanism) of
synthetic smooth images of growing resolution ``d = side^2``: PAC via Theorem 3 on the exact pool
covariance, and via Algorithm 1 (``m`` Monte-Carlo draws), against ``d / sqrt(2v)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privrepro.data.provenance import DataSource
from privrepro.figures.api import Figure, MemoryEstimate, UnitContext, grid_units, param
from privrepro.figures.pac._memory import algorithm1_bytes, largest
from privrepro.pac import plots
from privrepro.pac.private import smooth_image_noise

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

    title = "pac — PAC (Theorem 3, Algorithm 1) vs local-DP noise as the dimension grows"

    def data_source(self, unit: Mapping[str, Any], data_dir: Path) -> DataSource:
        return DataSource(
            "seeded synthetic smooth images (the paper describes this curve in words only)"
        )

    def units(self, params: DimensionCurvesParams) -> list[dict[str, Any]]:
        fixed = {k: v for k, v in asdict(params).items() if k != "sides"}
        return grid_units(fixed, side=sorted(set(params.sides)))

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
        keys = ("pool_size", "frequencies", "pixel_noise", "v", "m", "beta", "c")
        setting = {k: unit[k] for k in keys}
        rows = smooth_image_noise(
            int(unit["side"]),
            **setting,
            data_rng=ctx.rng("data"),
            mc_rng=ctx.rng("mc"),
            loops=ctx.loops,
        )
        return pd.DataFrame(rows)

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
        return plots.noise_against_dimension(table, params.v)
