"""pb Fig. 4: sampling runtime of PB-DP against Gaussian-DP as |S| grows (Sec. 5.2).

ρ = 0.9, Δ = 1, ε₀ from Algorithm 2; "10,000 samples across 100 iterations". Runtimes are
measured with the project's samplers in the same process and reported as a ratio to Gaussian
sampling (the paper's absolute times are for an i9-14900KF and not comparable). The
hardware-independent quantity is the rejection sampler's mean number of kernel proposals per
output, ``ρ/p_S`` (note §1, §5.5), which falls as |S| grows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.boosting.design import PBSetting
from privrepro.boosting.plots import plot_runtime
from privrepro.boosting.runtime import sampler_runtime
from privrepro.data.provenance import DataSource
from privrepro.figures.api import Figure, MemoryEstimate, UnitContext, grid_units, param
from privrepro.figures.pb import _common as pb

__all__ = ["Fig4Params", "Runtime"]


@dataclass
class Fig4Params:
    """Fig. 4 settings."""

    sizes: list[float] = pb.sizes_param(
        [10.0, 20.0, 30.0, 40.0, 50.0], "|S(Q(X̃))| from 10 to 50", assumed="the step is not stated"
    )
    rho: float = pb.rho_param(0.9, "ρ (Sec. 5.2)")
    sensitivity: float = pb.sensitivity_param(1.0, "Δ (Sec. 5.2)")
    case: str = pb.case_param()
    delta: float = pb.delta_param(
        1e-5, "δ of Algorithm 2's objective", assumed="the DP notion of Fig. 4 is not stated"
    )
    samples: int = param(10_000, ge=1, doc="samples per call (Sec. 5.2)")
    iterations: int = param(100, ge=1, doc="timed calls per sampler and size (Sec. 5.2)")
    samplers: list[str] = param(
        ["rejection", "mixture"],
        choices=["rejection", "mixture"],
        unique=True,
        doc="PB-DP samplers timed (both exact)",
    )


class Runtime(Figure[Fig4Params]):
    """Mean time per call of 10,000 samples, PB-DP vs Gaussian, and mean proposals per sample."""

    title = "Sampling runtime of PB-DP vs Gaussian-DP against |S| (ratio measured in one run)"

    def data_source(self, unit: Mapping[str, Any], data_dir: Path) -> DataSource:
        return DataSource("none (the samplers' runtime on this machine)")

    def units(self, p: Fig4Params) -> list[dict[str, Any]]:
        keys = ("sizes", "rho", "sensitivity", "case", "delta", "samples", "iterations", "samplers")
        return grid_units({k: getattr(p, k) for k in keys})

    def estimate_memory(self, params: Fig4Params) -> MemoryEstimate:
        """One call's draws (8 B each) and the rejection sampler's proposal batch (17 B per
        proposal, about 1/(1 − ρ) proposals per draw at most)."""
        per_draw = 8 + 17 * min(1.0 / (1.0 - params.rho), 1e3)
        return MemoryEstimate(
            int(params.samples * per_draw),
            "params.samples",
            params.samples,
            f"samples × {per_draw:.0f} B",
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        setting = PBSetting(unit["case"], unit["rho"], unit["sensitivity"], delta=unit["delta"])
        return sampler_runtime(
            setting,
            unit["sizes"],
            rng=ctx.rng("noise"),
            samples=unit["samples"],
            iterations=unit["iterations"],
            samplers=unit["samplers"],
            loops=ctx.loops,
        )

    def plot(self, table: pd.DataFrame, p: Fig4Params) -> Any:
        title = f"pb Fig. 4 — PB-DP vs Gaussian sampling, ρ={p.rho:g}, Δ={p.sensitivity:g}"
        return plot_runtime(table, title)

    def summarize(self, table: pd.DataFrame, p: Fig4Params) -> pd.DataFrame:
        """The runtime ratio of every sampler; the rejection sampler's proposals per output."""
        rows = []
        for _, r in table.iterrows():
            metrics = ["ratio_to_gaussian"]
            if r["sampler"] == "pb_rejection":
                metrics += ["expected_proposals", "proposals_per_sample"]
            rows += [
                {"metric": m, "size": r["size"], "sampler": r["sampler"], "value": r[m]}
                for m in metrics
            ]
        return pd.DataFrame(rows)
