"""The Gaussian mechanism in the μ = Δ/σ form the boosting package works in.

Adapters over the shared core :mod:`privrepro.dp.gaussian` (its inverse profile and both
calibrations), plus the profile itself in an unchecked form for the root finders' inner loops:

* exact profile ``δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)`` (Balle & Wang 2018, Thm. 8), all
  real ε;
* its inverse at μ√T, clamped at 0 (an (ε, δ)-DP statement);
* classical calibration ``σ = √(2 log(1.25/δ)) Δ/ε`` (pb paper, Sec. 2; Dwork & Roth Thm. A.1)
  and the analytic one (Balle & Wang 2018).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from privrepro.dp import gaussian as _core

__all__ = ["analytic_sigma", "classical_sigma", "gaussian_delta_mu", "gaussian_epsilon_mu"]


def gaussian_delta_mu(epsilon: Any, mu: Any) -> Any:
    """Exact Gaussian privacy profile at μ = Δ/σ (Balle & Wang 2018, Thm. 8), all real ε.

    The same function as :func:`privrepro.dp.gaussian.delta_for_epsilon` (tested to 1e-14),
    without its argument checks and log-space evaluation: the boosting root finders call it in
    their inner loops, where those make Figs. 2–3 three times slower. ``e^ε Φ(b)`` is computed
    as ``exp(ε + log Φ(b))``, which never overflows because it is at most ``Φ(a)``. A scalar ε
    gives a float, an array an array.
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
    return max(0.0, float(_core.epsilon_for_delta(delta, 1.0, mu * math.sqrt(compositions))))


def classical_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """``σ = √(2 log(1.25/δ)) Δ / ε`` (pb paper, Sec. 2)."""
    return float(_core.classical_sigma(epsilon, delta, sensitivity))


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest σ whose exact profile meets ``δ(ε) ≤ δ`` (Balle & Wang 2018)."""
    return float(_core.analytic_sigma(epsilon, delta, sensitivity))
