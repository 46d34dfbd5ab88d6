"""pac Example 3 (Sec. 6): membership inference from a mean, PAC noise against DP.

Each ``u_i`` of the pool (CIFAR-10, N = 60,000) joins ``X`` with probability 1/2;
``M(X) = sum(X) / 30,000``. PAC via Algorithm 1: the paper prints ``E||B|| = 0.28``. DP worst
case (independent sampling, O(1/N) sensitivity, footnote 5): ``d sqrt(2/(N v))`` = 17.736
(printed 17.7, "63x larger"). The exact ``Sigma_M = p(1-p)/(pN)^2 sum u_i u_i^T`` is an uncentred
second moment (see docs/pac.md on the 0.28).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.figures.api import Figure, MemoryEstimate, UnitContext, param
from privrepro.figures.pac._memory import POOL_LOADING, algorithm1_bytes, largest, pool_shape
from privrepro.figures.pac._rows import DATA_LABELS, algorithm1_rows, exact_rows
from privrepro.figures.pac.ex2 import NoiseTableMixin
from privrepro.pac.algorithms import algorithm1_from_samples
from privrepro.pac.gaussian import dp_mean_noise_norm
from privrepro.pac.mechanisms import poisson_mean_samples, poisson_mean_spectrum
from privrepro.pac.pools import load_pool

__all__ = ["Example3", "Example3Params"]

# "via Algorithm 1": matched to its anisotropic (Theorem 3) noise on the estimated spectrum
PAPER = {"pac_theorem3_estimated": 0.28, "dp_mean": 17.7}


@dataclass
class Example3Params:
    """Data, membership probability, MI target and Algorithm 1's parameters."""

    dataset: str = param(
        "cifar10",
        choices=["cifar10", "digits", "synthetic_images"],
        doc="the pool U (smoke: digits stands in for CIFAR-10)",
    )
    splits: str = param("all", choices=["all", "train", "test"], doc="all = train + test")
    inclusion: float = param(0.5, gt=0, lt=1, doc="Poisson membership probability p (paper 1/2)")
    v: float = param(1.0, gt=0, doc="MI target (nats)")
    m: int = param(
        4000, ge=2, doc="Algorithm 1's Monte-Carlo samples", assumed="m is not stated in the paper"
    )
    c: float = param(1e-9, gt=0, doc="Algorithm 1's safety floor c", assumed="not stated")
    beta: float = param(0.1, gt=0, doc="Theorem 4's slack β", assumed="not stated")
    linf: float = param(1.0, gt=0, doc="per-coordinate bound of the DP baseline")


class Example3(NoiseTableMixin, Figure[Example3Params]):
    """Membership by mean: Algorithm 1 / Theorem 3 noise vs the DP Gaussian mechanism."""

    params_type = Example3Params
    title = "pac Example 3 — membership from a mean: PAC noise vs DP"
    kind = "table"

    def units(self, params: Example3Params) -> list[dict[str, Any]]:
        return [
            {
                "dataset": params.dataset,
                "splits": params.splits,
                "inclusion": params.inclusion,
                "v": params.v,
                "m": params.m,
                "c": params.c,
                "beta": params.beta,
                "linf": params.linf,
            }
        ]

    def estimate_memory(self, params: Example3Params) -> MemoryEstimate:
        """The float32 pool and its d × d Gram matrix, and Algorithm 1 on m samples."""
        n, d = pool_shape(params.dataset, params.splits)
        return largest(
            {
                "params.dataset": (POOL_LOADING + 4 * n * d + 8 * 3 * d * d, params.dataset),
                "params.m": (algorithm1_bytes(params.m, d), params.m),
            },
            f"pool {n} × {d} × 4 B + d² × 24 B + Algorithm 1 on m × d",
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        pool = load_pool(unit["dataset"], ctx.data_dir, unit["splits"], seed=ctx.seed)
        d, n, v, p = pool.dim, pool.size, unit["v"], unit["inclusion"]
        dp = dp_mean_noise_norm(d, n, v, unit["linf"], p)
        samples = poisson_mean_samples(pool.x, unit["m"], ctx.rng("sampling"), p)
        # every output lies in the ball of radius linf sqrt(d) / p (all members present)
        res = algorithm1_from_samples(
            samples, v, unit["beta"], unit["c"], r=unit["linf"] * np.sqrt(d) / p
        )
        rows = algorithm1_rows(res, dp) + exact_rows(poisson_mean_spectrum(pool.x, p), v, dp)
        rows.append({"method": "dp_mean", "noise_norm": dp, "dp_over_pac": 1.0})
        out = pd.DataFrame(rows)
        # the paper's numbers are for CIFAR-10; a stand-in pool gets none
        out["paper_value"] = out["method"].map(PAPER) if unit["dataset"] == "cifar10" else np.nan
        out.insert(0, "data", f"{DATA_LABELS[unit['dataset']]}: {n} × {d}")
        out["v"] = v
        return out
