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

from privrepro.figures.api import UnitContext, param
from privrepro.figures.pac.common import CifarPoolParams, Draws, NoiseTable
from privrepro.pac.gaussian import dp_mean_noise_norm
from privrepro.pac.mechanisms import poisson_mean_samples, poisson_mean_spectrum
from privrepro.pac.pools import Pool

__all__ = ["Example3", "Example3Params"]

# "via Algorithm 1": matched to its anisotropic (Theorem 3) noise on the estimated spectrum
PAPER = {"pac_theorem3_estimated": 0.28, "dp_mean": 17.7}


@dataclass
class Example3Params(CifarPoolParams):
    """Data, membership probability, MI target and Algorithm 1's parameters."""

    inclusion: float = param(0.5, gt=0, lt=1, doc="Poisson membership probability p (paper 1/2)")
    v: float = param(1.0, gt=0, doc="MI target (nats)")
    m: int = param(
        4000, ge=2, doc="Algorithm 1's Monte-Carlo samples", assumed="m is not stated in the paper"
    )
    c: float = param(1e-9, gt=0, doc="Algorithm 1's safety floor c", assumed="not stated")
    beta: float = param(0.1, gt=0, doc="Theorem 4's slack β", assumed="not stated")
    linf: float = param(1.0, gt=0, doc="per-coordinate bound of the DP baseline")


class Example3(NoiseTable[Example3Params]):
    """Membership by mean: Algorithm 1 / Theorem 3 noise vs the DP Gaussian mechanism."""

    title = "pac Example 3 — membership from a mean: PAC noise vs DP"
    paper = PAPER

    def mechanism(self, pool: Pool, unit: dict[str, Any], ctx: UnitContext) -> Draws:
        p, linf = unit["inclusion"], unit["linf"]
        samples = poisson_mean_samples(pool.x, unit["m"], ctx.rng("sampling"), p, loops=ctx.loops)
        r = linf * np.sqrt(pool.dim) / p  # every output lies in this ball (all members present)
        dp = dp_mean_noise_norm(pool.dim, pool.size, unit["v"], linf, p)
        return Draws(samples, poisson_mean_spectrum(pool.x, p, ctx.loops), r, ("dp_mean", dp))
