"""Gaussian DP core used by the boosting package.

Uses ``privrepro.dp.gaussian`` (``classical_sigma``, ``analytic_sigma``) when that module exists;
otherwise the closed forms below, which are the same formulas:

* exact profile ``δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)``, μ = Δ/σ (Balle & Wang 2018,
  Thm. 8), valid for every real ε;
* classical calibration ``σ = √(2 log(1.25/δ)) Δ/ε`` (pb paper, Sec. 2; Dwork & Roth Thm. A.1);
* analytic calibration: the σ with ``δ(ε) = δ`` exactly (Balle & Wang 2018).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, special

__all__ = ["analytic_sigma", "classical_sigma", "gaussian_delta_mu", "gaussian_epsilon_mu"]

_core: Any
try:  # the shared DP core, when present
    from privrepro.dp import gaussian as _core
except ImportError:  # pragma: no cover - depends on the checkout
    _core = None


def gaussian_delta_mu(epsilon: Any, mu: Any) -> Any:
    """Exact Gaussian privacy profile at μ = Δ/σ (Balle & Wang 2018, Thm. 8), all real ε.

    ``e^ε Φ(b)`` is computed as ``exp(ε + log Φ(b))``, which never overflows because it is at most
    ``Φ(a)``. A scalar ε gives a float, an array an array.
    """
    if np.ndim(epsilon) == 0 and np.ndim(mu) == 0:
        e = float(epsilon)
        if mu <= 0:
            return 0.0 if e >= 0 else -math.expm1(e)
        a = mu / 2 - e / mu
        b = -mu / 2 - e / mu
        val = float(special.ndtr(a)) - math.exp(e + float(special.log_ndtr(b)))
        return min(max(val, 0.0), 1.0)
    eps = np.asarray(epsilon, float)
    m = np.asarray(mu, float)
    if np.ndim(m) == 0 and float(m) <= 0:
        return np.where(eps >= 0, 0.0, -np.expm1(np.minimum(eps, 0.0)))
    a = m / 2 - eps / m
    b = -m / 2 - eps / m
    out = special.ndtr(a) - np.exp(eps + special.log_ndtr(b))
    return np.minimum(np.maximum(out, 0.0), 1.0)


def gaussian_epsilon_mu(delta: float, mu: float, compositions: int = 1) -> float:
    """Smallest ε ≥ 0 with ``δ(ε) ≤ delta`` for the Gaussian at μ√T (0 if δ(0) ≤ delta)."""
    m = mu * math.sqrt(compositions)
    if float(gaussian_delta_mu(0.0, m)) <= delta:
        return 0.0
    hi = max(1.0, m * m)
    while float(gaussian_delta_mu(hi, m)) > delta:
        hi *= 2
    return float(
        optimize.brentq(
            lambda e: float(gaussian_delta_mu(e, m)) - delta, 0.0, hi, xtol=1e-13, rtol=1e-13
        )
    )


def classical_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """``σ = √(2 log(1.25/δ)) Δ / ε`` (pb paper, Sec. 2)."""
    if _core is not None and hasattr(_core, "classical_sigma"):
        return float(_core.classical_sigma(epsilon, delta, sensitivity=sensitivity))
    return math.sqrt(2 * math.log(1.25 / delta)) * sensitivity / epsilon


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest σ whose exact profile meets ``δ(ε) ≤ δ`` (Balle & Wang 2018)."""
    if _core is not None and hasattr(_core, "analytic_sigma"):
        return float(_core.analytic_sigma(epsilon, delta, sensitivity=sensitivity))
    # δ is decreasing in σ; solve in log σ
    f = lambda ls: float(gaussian_delta_mu(epsilon, sensitivity / math.exp(ls))) - delta  # noqa: E731
    lo, hi = math.log(sensitivity) - 10, math.log(sensitivity) + 10
    while f(lo) < 0:
        lo -= 5
    while f(hi) > 0:
        hi += 5
    return math.exp(optimize.brentq(f, lo, hi, xtol=1e-15, rtol=1e-15))
