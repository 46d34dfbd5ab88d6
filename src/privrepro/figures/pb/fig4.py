"""pb Fig. 4: sampling runtime of PB-DP against Gaussian-DP as |S| grows (Sec. 5.2).

ρ = 0.9, Δ = 1, ε₀ from Algorithm 2; "10,000 samples across 100 iterations". Runtimes are
measured with the project's samplers in the same process and reported as a ratio to Gaussian
sampling (the paper's absolute times are for an i9-14900KF and not comparable). The
hardware-independent quantity is the rejection sampler's mean number of kernel proposals per
output, ``ρ/p_S`` (note §1, §5.5), which falls as |S| grows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.boosting.design import PBSetting, gaussian_baseline_sigma, optimise_eps0
from privrepro.figures.api import Figure, MemoryEstimate, UnitContext, param
from privrepro.plotting.style import new_figure

__all__ = ["Fig4Params", "Runtime"]


@dataclass
class Fig4Params:
    """Fig. 4 settings."""

    sizes: list[float] = param(
        [10.0, 20.0, 30.0, 40.0, 50.0],
        gt=0,
        unique=True,
        doc="|S(Q(X̃))| from 10 to 50",
        assumed="the step is not stated",
    )
    rho: float = param(0.9, gt=0, lt=1, doc="ρ (Sec. 5.2)")
    sensitivity: float = param(1.0, gt=0, doc="Δ (Sec. 5.2)")
    case: str = param(
        "absolute",
        choices=["absolute", "relative"],
        doc="PB-DP region case",
        assumed="not stated; absolute error",
    )
    delta: float = param(
        1e-5,
        gt=0,
        lt=1,
        doc="δ of Algorithm 2's objective",
        assumed="the DP notion of Fig. 4 is not stated",
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

    params_type = Fig4Params
    title = "Sampling runtime of PB-DP vs Gaussian-DP against |S| (ratio measured in one run)"

    def units(self, p: Fig4Params) -> list[dict[str, Any]]:
        return [
            {
                "sizes": p.sizes,
                "rho": p.rho,
                "sensitivity": p.sensitivity,
                "case": p.case,
                "delta": p.delta,
                "samples": p.samples,
                "iterations": p.iterations,
                "samplers": p.samplers,
            }
        ]

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
        rng = ctx.rng("noise")
        n, iters = int(unit["samples"]), int(unit["iterations"])
        rows = []
        for size in ctx.progress(unit["sizes"], desc="pb fig4 sizes"):
            s = PBSetting(
                unit["case"], unit["rho"], unit["sensitivity"], float(size), delta=unit["delta"]
            )
            res = optimise_eps0(s)
            mech = s.mechanism(res.eps0)
            sigma_g = gaussian_baseline_sigma(float(size), unit["rho"])
            lo, hi = (float(v) for v in mech.region.bounds(0.0))
            timings: dict[str, list[float]] = {"gaussian": []}
            props: dict[str, int] = {}
            inside: dict[str, int] = {}
            for name in unit["samplers"]:
                timings[name] = []
                props[name] = 0
                inside[name] = 0
                mech.sample(rng, 0.0, n, method=name)  # warm-up
            rng.normal(0.0, sigma_g, n)
            for _ in range(iters):  # interleave samplers so drift in machine load hits all alike
                t0 = time.perf_counter()
                rng.normal(0.0, sigma_g, n)
                timings["gaussian"].append(time.perf_counter() - t0)
                for name in unit["samplers"]:
                    t0 = time.perf_counter()
                    out = mech.sample(rng, 0.0, n, method=name)
                    timings[name].append(time.perf_counter() - t0)
                    props[name] += out.proposals
                    inside[name] += int(np.count_nonzero((out.values >= lo) & (out.values <= hi)))
            g_mean = float(np.mean(timings["gaussian"]))
            for name, ts in timings.items():
                arr = np.asarray(ts) * 1e3
                rows.append(
                    {
                        "size": float(size),
                        "sampler": "gaussian" if name == "gaussian" else f"pb_{name}",
                        "eps0": np.nan if name == "gaussian" else res.eps0,
                        "q": 0.0 if name == "gaussian" else mech.q,
                        "time_ms_mean": float(arr.mean()),
                        "time_ms_se": float(arr.std(ddof=1) / np.sqrt(len(arr)))
                        if len(arr) > 1
                        else np.nan,
                        "ratio_to_gaussian": float(np.mean(ts)) / g_mean,
                        "proposals_per_sample": 1.0
                        if name == "gaussian"
                        else props[name] / (n * iters),
                        "expected_proposals": 1.0
                        if name in ("gaussian", "mixture")
                        else mech.expected_proposals(),
                        "in_region_fraction": np.nan
                        if name == "gaussian"
                        else inside[name] / (n * iters),
                        "samples": n,
                        "iterations": iters,
                    }
                )
        return pd.DataFrame(rows)

    def plot(self, table: pd.DataFrame, p: Fig4Params) -> Any:
        fig, axes = new_figure(1, 2, width=4.2, height=3.2, squeeze=False)
        ax, ax2 = axes[0]
        for sampler, g in table.groupby("sampler"):
            g = g.sort_values("size")
            ax.plot(g["size"], g["ratio_to_gaussian"], marker="o", ms=3, label=str(sampler))
        ax.set_xlabel("|S(Q(X̃))|")
        ax.set_ylabel("time per call / Gaussian's (same run)")
        ax.set_title(f"runtime ratio, {p.samples:,} samples × {p.iterations} calls", fontsize=9)
        ax.legend(fontsize=7.5, frameon=False)
        rej = table[table["sampler"] == "pb_rejection"].sort_values("size")
        if not rej.empty:
            ax2.plot(rej["size"], rej["proposals_per_sample"], "o-", label="observed")
            ax2.plot(rej["size"], rej["expected_proposals"], "k--", lw=1, label="ρ / p_S")
            ax2.legend(fontsize=7.5, frameon=False)
        ax2.set_xlabel("|S(Q(X̃))|")
        ax2.set_ylabel("kernel proposals per output")
        ax2.set_title("rejection sampler: proposals per output", fontsize=9)
        fig.suptitle(
            f"pb Fig. 4 — PB-DP vs Gaussian sampling, ρ={p.rho:g}, Δ={p.sensitivity:g}", fontsize=10
        )
        return fig

    def summarize(self, table: pd.DataFrame, p: Fig4Params) -> pd.DataFrame:
        rows = []
        for _, r in table.iterrows():
            rows.append(
                {
                    "metric": "ratio_to_gaussian",
                    "size": r["size"],
                    "sampler": r["sampler"],
                    "value": r["ratio_to_gaussian"],
                }
            )
            if r["sampler"] == "pb_rejection":
                rows.append(
                    {
                        "metric": "expected_proposals",
                        "size": r["size"],
                        "sampler": r["sampler"],
                        "value": r["expected_proposals"],
                    }
                )
                rows.append(
                    {
                        "metric": "proposals_per_sample",
                        "size": r["size"],
                        "sampler": r["sampler"],
                        "value": r["proposals_per_sample"],
                    }
                )
        return pd.DataFrame(rows)
