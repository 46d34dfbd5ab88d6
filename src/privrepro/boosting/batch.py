"""The paper's accounting and Algorithm 2 vectorised over many settings (Gaussian kernel).

The figures sweep hundreds of (ρ, Δ, |S|, δ or α) points; this module runs the same formulas as
:mod:`privrepro.boosting.design` (Props. 1, 2, 4–6 and the literal ternary search of
Algorithm 2) on arrays, so that each bisection or ternary step is one numpy call for all points.
The fixed region uses the paper's pair (Prop. 5); the scalar path serves the ``worst`` rule.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from privrepro.boosting._roots import decreasing_root, smallest_epsilon
from privrepro.boosting.gaussian_mu import gaussian_delta_mu

__all__ = [
    "analytic_sigma_batch",
    "gaussian_baseline_batch",
    "optimise_eps0_batch",
    "paper_epsilon_batch",
    "paper_terms_batch",
]


def analytic_sigma_batch(
    eps0: np.ndarray, delta: np.ndarray, sensitivity: np.ndarray
) -> np.ndarray:
    """σ with exact Gaussian ``δ(ε₀) = δ`` (bisection in log σ; δ falls as σ grows)."""
    eps0, delta, sensitivity = np.broadcast_arrays(
        *(np.asarray(x, float) for x in (eps0, delta, sensitivity))
    )
    lo = np.log(sensitivity) - 25.0
    hi = np.log(sensitivity) + 25.0
    ls = decreasing_root(
        lambda x: gaussian_delta_mu(eps0, sensitivity / np.exp(x)), delta, lo, hi, 1e-12
    )
    return np.exp(ls)


def _phi(x: np.ndarray) -> np.ndarray:
    return special.ndtr(x)


def paper_terms_batch(
    case: str,
    rho: np.ndarray,
    sensitivity: np.ndarray,
    size: np.ndarray,
    theta: float,
    sigma: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """``(q, L1, L2, W1, W2)`` of Props. 4 (relative), 5 (fixed, paper pair), 6 (absolute)."""
    tau = size / 2
    d = sensitivity
    if case == "fixed":
        w = size
        p = _phi(w / sigma) - 0.5
        p2 = _phi((w - d) / sigma) - _phi(-d / sigma)
    else:
        p = 1 - 2 * _phi(-tau / sigma)
        p2 = 1 - 2 * _phi(-(theta * d + tau) / sigma) if case == "relative" else p
    q = np.where(p < rho, (rho - p) / (rho * (1 - p)), 0.0)
    L1 = np.log((1 - (1 - p2) * q) / (1 - (1 - p) * q))
    zeros = np.zeros_like(q)
    if case == "fixed":
        return q, L1, zeros, zeros, zeros
    L2 = -np.log1p(-q)
    if case == "absolute":
        W = _phi((d - tau) / sigma) - _phi(-tau / sigma)
        return q, zeros, L2, W, W
    W1 = _phi((theta * d + tau) / sigma) - _phi(tau / sigma)
    W2 = _phi((theta * d - tau) / sigma) - _phi(-tau / sigma)
    return q, L1, L2, W1, W2


def _sigma(
    notion: str, eps0: np.ndarray, level: np.ndarray, sensitivity: np.ndarray, calibration: str
) -> np.ndarray:
    if notion == "rdp":
        return np.sqrt(level * sensitivity**2 / (2 * eps0))
    if calibration == "classical":
        return np.sqrt(2 * np.log(1.25 / level)) * sensitivity / eps0
    return analytic_sigma_batch(eps0, level, sensitivity)


def paper_epsilon_batch(
    case: str,
    notion: str,
    rho: np.ndarray,
    sensitivity: np.ndarray,
    size: np.ndarray,
    level: np.ndarray,
    eps0: np.ndarray,
    theta: float = 0.05,
    calibration: str = "analytic",
) -> np.ndarray:
    """PB-DP's total ε by the paper's formulas (Prop. 1 at δ = ``level`` for ``dp``, Prop. 2 at
    α = ``level`` for ``rdp``) at kernel level ``eps0``; all arrays broadcast."""
    rho, sensitivity, size, level, eps0 = np.broadcast_arrays(
        *(np.asarray(x, float) for x in (rho, sensitivity, size, level, eps0))
    )
    sigma = _sigma(notion, eps0, level, sensitivity, calibration)
    _q, L1, L2, W1, W2 = paper_terms_batch(case, rho, sensitivity, size, theta, sigma)
    W3 = 1 - W1 - W2
    if notion == "rdp":
        a1 = level - 1
        k_rdp = level * sensitivity**2 / (2 * sigma**2)
        with np.errstate(divide="ignore"):
            logs = np.stack([np.log(W1) + a1 * L2, np.log(W2) - a1 * L2, np.log(W3)])
        return k_rdp + L1 + special.logsumexp(logs, axis=0) / a1
    mu = sensitivity / sigma

    def prop1(e: np.ndarray) -> np.ndarray:
        x = e - L1
        return (
            W3 * gaussian_delta_mu(x, mu)
            + W1 * gaussian_delta_mu(x - L2, mu)
            + W2 * gaussian_delta_mu(x + L2, mu)
        )

    return smallest_epsilon(prop1, level, 1e-11)


def gaussian_baseline_batch(
    notion: str,
    rho: np.ndarray,
    sensitivity: np.ndarray,
    size: np.ndarray,
    level: np.ndarray,
    calibration: str = "analytic",
) -> np.ndarray:
    """ε of the Gaussian with ``Pr[|noise| ≤ |S|/2] = ρ`` (σ = τ/Φ⁻¹((1+ρ)/2), note §2.4)."""
    rho, sensitivity, size, level = np.broadcast_arrays(
        *(np.asarray(x, float) for x in (rho, sensitivity, size, level))
    )
    sigma = (size / 2) / special.ndtri((1 + rho) / 2)
    if notion == "rdp":
        return level * sensitivity**2 / (2 * sigma**2)
    if calibration == "classical":
        return np.sqrt(2 * np.log(1.25 / level)) * sensitivity / sigma
    return gaussian_epsilon_batch(sensitivity / sigma, level)


def gaussian_epsilon_batch(mu: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """ε at ``delta`` of the Gaussian with μ = Δ/σ (μ√T after T compositions), vectorised."""
    mu, level = np.broadcast_arrays(np.asarray(mu, float), np.asarray(delta, float))
    return smallest_epsilon(lambda e: gaussian_delta_mu(e, mu), level, 1e-13)


def optimise_eps0_batch(
    case: str,
    notion: str,
    rho: np.ndarray,
    sensitivity: np.ndarray,
    size: np.ndarray,
    level: np.ndarray,
    eps_max: np.ndarray,
    tol: float = 1e-6,
    theta: float = 0.05,
    calibration: str = "analytic",
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 2 (literal ternary search on ``(0, eps_max]``) for every point at once.

    Returns ``(ε₀*, ε(ε₀*))``. Every point takes the same number of steps, the one its own
    interval needs (points already narrower than ``tol`` are frozen).
    """
    rho, sensitivity, size, level, eps_max = np.broadcast_arrays(
        *(np.asarray(x, float) for x in (rho, sensitivity, size, level, eps_max))
    )
    lo = np.zeros_like(eps_max)
    hi = eps_max.copy()

    def obj(e: np.ndarray) -> np.ndarray:
        return paper_epsilon_batch(
            case, notion, rho, sensitivity, size, level, e, theta, calibration
        )

    while np.any(hi - lo > tol):
        active = hi - lo > tol
        e1 = lo + (hi - lo) / 3
        e2 = hi - (hi - lo) / 3
        v1, v2 = obj(e1), obj(e2)
        move_lo = active & (v1 > v2)
        move_hi = active & ~(v1 > v2)
        lo = np.where(move_lo, e1, lo)
        hi = np.where(move_hi, e2, hi)
    x = (lo + hi) / 2
    return x, obj(x)
