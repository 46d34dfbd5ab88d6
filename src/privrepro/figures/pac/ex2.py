"""pac Example 2 (Sec. 5): local publishing of one image, PAC noise against local DP.

``M(x) = x`` for ``x`` uniform over the pool (CIFAR-10's 60,000 images in [0, 1]^3072 in the
paper). PAC: Algorithm 1 (with ``M`` = identity) or Theorem 3 on the covariance, ``E||B|| <=
sum_j sqrt(lambda_j) / sqrt(2v)`` — the paper prints ``1.6 × 10^2``. Local DP (footnote 5, zCDP,
l_inf bound 1 per pixel): ``E||B|| ~ d / sqrt(2v)`` = 2,172.2 (printed ``2.2 × 10^3``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privrepro.figures.api import UnitContext, param
from privrepro.figures.pac.common import CifarPoolParams, Draws, NoiseTable
from privrepro.pac.gaussian import dp_local_noise_norm
from privrepro.pac.mechanisms import local_publishing_samples, local_publishing_spectrum
from privrepro.pac.pools import Pool

__all__ = ["Example2", "Example2Params"]

PAPER = {"pac_theorem3_exact": 160.0, "dp_local": 2200.0}


@dataclass
class Example2Params(CifarPoolParams):
    """Data, MI target and Algorithm 1's parameters."""

    v: float = param(1.0, gt=0, doc="MI target (nats)")
    m: int = param(
        20_000,
        ge=2,
        doc="Algorithm 1's Monte-Carlo samples",
        assumed="m is not stated in the paper",
    )
    c: float = param(1e-6, gt=0, doc="Algorithm 1's safety floor c", assumed="not stated")
    beta: float = param(0.1, gt=0, doc="Theorem 4's slack β", assumed="not stated")
    linf: float = param(1.0, gt=0, doc="per-coordinate bound of the DP baseline (pixels in [0,1])")


class Example2(NoiseTable[Example2Params]):
    """Local publishing: Algorithm 1 / Theorem 3 noise vs the local-DP Gaussian mechanism."""

    title = "pac Example 2 — local publishing: PAC noise vs local DP"
    paper = PAPER

    def mechanism(self, pool: Pool, unit: dict[str, Any], ctx: UnitContext) -> Draws:
        samples = local_publishing_samples(pool.x, unit["m"], ctx.rng("data"))
        r = unit["linf"] * np.sqrt(pool.dim)  # pixels in [0, linf]
        dp = dp_local_noise_norm(pool.dim, unit["v"], unit["linf"])
        return Draws(samples, local_publishing_spectrum(pool.x, ctx.loops), r, ("dp_local", dp))
