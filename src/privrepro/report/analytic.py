"""Tables behind the papers' analytic claims that no figure draws (a claim's ``computed:``).

Each function takes plain arguments (numbers, strings, lists, as a reference file holds them),
calls the project's library and returns a tidy table the claim's ``table: computed`` selectors
read. Nothing here needs a dataset.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import special

from privrepro.boosting.batch import (
    analytic_sigma_batch,
    gaussian_baseline_batch,
    paper_epsilon_batch,
)
from privrepro.boosting.exact_batch import GaussianPBBatch
from privrepro.inference.calibration import calibrate, gaussian_true_delta

__all__ = [
    "count_local_minima",
    "ip_classical_true_delta",
    "ip_noise_norms",
    "ip_noise_scales",
    "pb_appendix_d_check",
    "pb_objective_minima",
]


def ip_noise_scales(
    alphas: Sequence[float], epsilons: Sequence[float], delta: float = 1e-5
) -> pd.DataFrame:
    """σ of Gauss-Input (Δ = α) and Gauss-Output (Δ = α μ_C, μ_C = 1 as the notebooks) at every
    (α, ε), under the paper's classical calibration (``repo_compat``) and the exact-δ one
    (``corrected``: classical where its exact δ holds, else analytic), with ``ratio`` = α/ε
    (12 significant digits, so equal ratios group together)."""
    rows = []
    for mode in ("repo_compat", "corrected"):
        for a in alphas:
            for e in epsilons:
                cal = calibrate(float(e), delta, float(a), mode)
                for mech in ("gauss_input", "gauss_output"):
                    rows.append(
                        {
                            "mode": mode,
                            "mechanism": mech,
                            "alpha": float(a),
                            "epsilon": float(e),
                            "ratio": float(f"{a / e:.12g}"),
                            "sigma": cal.sigma,
                            "rule": cal.rule,
                        }
                    )
    return pd.DataFrame(rows)


def _expected_norm(sigma: float, dim: int) -> float:
    """``E‖N(0, σ² I_d)‖ = σ √2 Γ((d+1)/2) / Γ(d/2)`` (the chi distribution's mean)."""
    return float(
        sigma * math.sqrt(2.0) * math.exp(special.gammaln((dim + 1) / 2) - special.gammaln(dim / 2))
    )


def ip_noise_norms(
    alpha: float,
    epsilons: Sequence[float],
    outputs: Sequence[int] = (10, 100),
    inputs: int = 3072,
    delta: float = 1e-5,
) -> pd.DataFrame:
    """The expected norm of the noise Gauss-Output adds to ``k`` logits and Gauss-Input adds to
    ``n`` pixels at the same σ (classical calibration, Δ = α, μ_C = 1): one row per (ε, k)."""
    rows = []
    for e in epsilons:
        sigma = calibrate(float(e), delta, float(alpha), "repo_compat").sigma
        for k in outputs:
            rows.append(
                {
                    "epsilon": float(e),
                    "logits": int(k),
                    "pixels": int(inputs),
                    "sigma": sigma,
                    "output_norm": _expected_norm(sigma, int(k)),
                    "input_norm": _expected_norm(sigma, int(inputs)),
                }
            )
    return pd.DataFrame(rows)


def ip_classical_true_delta(
    epsilons: Sequence[float], delta: float = 1e-5, sensitivity: float = 0.1
) -> pd.DataFrame:
    """The exact δ(ε) (Balle & Wang 2018) of the classical σ = √(2 ln(1.25/δ)) Δ/ε at each ε (it
    does not depend on Δ): rows ``epsilon, sigma, nominal_delta, true_delta``."""
    rows = []
    for e in epsilons:
        sigma = calibrate(float(e), delta, sensitivity, "repo_compat").sigma
        rows.append(
            {
                "epsilon": float(e),
                "sigma": sigma,
                "nominal_delta": float(delta),
                "true_delta": float(gaussian_true_delta(float(e), sigma, sensitivity)),
            }
        )
    return pd.DataFrame(rows)


def count_local_minima(values: Sequence[float] | np.ndarray, rtol: float = 1e-9) -> int:
    """Local minima of a sampled curve, ends included (a curve still falling at an end has a
    minimum there); steps smaller than ``rtol`` (relative) count as flat."""
    v = np.asarray(values, float)
    d = np.diff(v)
    s = np.sign(np.where(np.abs(d) <= rtol * np.maximum(np.abs(v[:-1]), 1e-300), 0.0, d))
    s = s[s != 0]
    if s.size == 0:
        return 1
    inner = int(np.sum((s[:-1] < 0) & (s[1:] > 0)))
    return inner + int(s[0] > 0) + int(s[-1] < 0)


def pb_objective_minima(
    cases: Sequence[str],
    rhos: Sequence[float],
    sensitivities: Sequence[float],
    sizes: Sequence[float],
    deltas: Sequence[float],
    alphas: Sequence[float],
    points: int = 400,
    smallest: float = 1e-5,
    exact_pairs: int = 5,
    theta: float = 0.05,
) -> pd.DataFrame:
    """ε₀ ↦ ε on ``points`` log-spaced ε₀ in ``[smallest·ε_G, ε_G]`` (Algorithm 2's interval) for
    every setting ``(case, ρ, Δ) × |S| × (δ or α)`` (``rhos`` and ``sensitivities`` paired):
    the paper's Prop. 1 / Prop. 2 and the exact ε of the same mechanisms. Rows: the setting,
    ``accountant`` (``paper`` / ``exact``), ``minima`` (local minima, ends included), ``best``
    (the smallest value) and ``eps0_best``."""
    rows = []
    for case in cases:
        for rho, d in zip(rhos, sensitivities, strict=True):
            for size in sizes:
                for notion, levels in (("dp", deltas), ("rdp", alphas)):
                    for lev in levels:
                        r_, d_, w_, l_ = (np.array([float(x)]) for x in (rho, d, size, lev))
                        top = float(gaussian_baseline_batch(notion, r_, d_, w_, l_)[0])
                        e0 = top * np.geomspace(smallest, 1.0, int(points))
                        paper = paper_epsilon_batch(case, notion, r_, d_, w_, l_, e0, theta)
                        if notion == "dp":
                            full = np.full_like(e0, 1.0)
                            sig = analytic_sigma_batch(e0, full * lev, full * d)
                        else:
                            sig = np.sqrt(lev * d * d / (2 * e0))
                        batch = GaussianPBBatch.build(case, sig, rho, d, size, theta, exact_pairs)
                        exact = batch.epsilon(lev) if notion == "dp" else batch.renyi(lev)
                        for acc, vals in (("paper", paper), ("exact", exact)):
                            i = int(np.argmin(vals))
                            rows.append(
                                {
                                    "case": case,
                                    "notion": notion,
                                    "level": float(lev),
                                    "rho": float(rho),
                                    "sensitivity": float(d),
                                    "size": float(size),
                                    "accountant": acc,
                                    "minima": count_local_minima(vals),
                                    "best": float(vals[i]),
                                    "eps0_best": float(e0[i]),
                                }
                            )
    return pd.DataFrame(rows)


def pb_appendix_d_check(
    cases: Sequence[str],
    rhos: Sequence[float],
    sensitivities: Sequence[float],
    sizes: Sequence[float],
    delta: float = 1e-5,
    eps0s: Sequence[float] = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0),
    exact_pairs: int = 5,
    theta: float = 0.05,
) -> pd.DataFrame:
    """Appendix D: a kernel that is (ε₀, δ)-DP makes PB-DP (ε₀ − 2 log(1 − q), δ)-DP. For each
    setting and ε₀ (analytic σ), the exact δ of the boosted outputs at that ε (``exact_delta``)
    beside ``delta``; ``ratio`` = exact_delta/delta (≤ 1: the bound holds)."""
    rows = []
    for case in cases:
        for rho, d in zip(rhos, sensitivities, strict=True):
            for size in sizes:
                e0 = np.asarray(eps0s, float)
                sig = analytic_sigma_batch(e0, np.full_like(e0, delta), np.full_like(e0, d))
                batch = GaussianPBBatch.build(case, sig, rho, d, size, theta, exact_pairs)
                bound = e0 - 2 * np.log1p(-np.minimum(batch.q, 1 - 1e-16))
                exact = batch.worst_delta(bound)
                for i in range(len(e0)):
                    rows.append(
                        {
                            "case": case,
                            "rho": float(rho),
                            "sensitivity": float(d),
                            "size": float(size),
                            "eps0": float(e0[i]),
                            "q": float(batch.q[i]),
                            "epsilon_bound": float(bound[i]),
                            "delta": float(delta),
                            "exact_delta": float(exact[i]),
                            "ratio": float(exact[i] / delta),
                        }
                    )
    return pd.DataFrame(rows)
