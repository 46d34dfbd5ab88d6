"""The privacy auditor's cost against drawing the same samples alone (same run)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from privrepro.audit import audit
from privrepro.benchmark_harness import row
from privrepro.dp.gaussian import analytic_sigma


def bench(device: str = "cpu", quick: bool = False) -> list[dict[str, Any]]:
    sigma = float(analytic_sigma(1.0, 1e-5))
    n = 20_000 if quick else 1_000_000  # draws per input

    def p(k: int, rng: np.random.Generator) -> np.ndarray:
        return rng.normal(1.0, sigma, k)

    def q(k: int, rng: np.random.Generator) -> np.ndarray:
        return rng.normal(0.0, sigma, k)

    t0 = time.perf_counter()
    rep = audit(p, q, 1.0, 1e-5, n, np.random.default_rng(0), progress=False)
    t_audit = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for _ in range(2):
        p(n, rng)
        q(n, rng)
    t_raw = time.perf_counter() - t0
    return [
        row(
            "auditor",
            f"audit of {rep.n_samples:.0e} draws (incl. threshold search and bounds)",
            t_audit,
            "s",
            t_raw,
            "the same numpy draws alone",
            "floor",
            f"Gaussian at analytic σ(1, 1e-5); ε_LB = {rep.epsilon_lower_bound:.3f}",
        )
    ]


if __name__ == "__main__":
    for r in bench():
        print(r)
