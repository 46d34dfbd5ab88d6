"""Noise calibration of the inference-privacy mechanisms (ip paper, Defs. 3–5).

All functions broadcast over numpy arrays, so a whole (α, ε) grid is one call. ``mu`` is the
global Lipschitz constant μ_C of the classifier (ip paper, eq. 8): in ℓ1 for Lap-Output, in ℓ2
for the Gaussian mechanisms. The Gaussian σ is the classical Dwork–Roth calibration used by the
paper, ``σ = sqrt(2 ln(1.25/δ)) · Δ / ε`` with sensitivity ``Δ = α μ_C`` (output) or ``Δ = α``
(input); it is delegated to :func:`privrepro.dp.gaussian.classical_sigma` when the DP core provides
it. That calibration is only proven for ε < 1; :func:`gaussian_true_delta` gives the exact δ it
achieves (Balle & Wang 2018), which exceeds the nominal δ = 1e-5 above ε ≈ 8.42 (the note, M1).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special

__all__ = ["analytic_sigma", "classical_sigma", "gauss_input_sigma", "gauss_output_sigma",
           "gaussian_true_delta", "lap_output_scale"]


def _validate(name: str, value: ArrayLike, *, lo: float, lo_open: bool, hi: float | None = None,
              hi_open: bool = True) -> NDArray[np.float64]:
    arr = np.asarray(value, dtype=np.float64)
    bad = ~np.isfinite(arr) | ((arr <= lo) if lo_open else (arr < lo))
    if hi is not None:
        bad |= (arr >= hi) if hi_open else (arr > hi)
    if np.any(bad):
        first = arr[bad].flat[0]
        lb = "(" if lo_open else "["
        ub = "inf)" if hi is None else (f"{hi})" if hi_open else f"{hi}]")
        from privrepro.config.validation import ConfigError

        raise ConfigError(name, float(first), f"must lie in {lb}{lo}, {ub}")
    return arr


def classical_sigma(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike = 1.0) -> Any:
    """Classical Gaussian-mechanism σ = sqrt(2 ln(1.25/δ)) Δ / ε (Dwork & Roth 2014, Thm. A.1).

    Uses :func:`privrepro.dp.gaussian.classical_sigma` when the DP core provides it.
    """
    try:  # the shared DP core, once available
        from privrepro.dp.gaussian import classical_sigma as core  # type: ignore[import-not-found]
    except ImportError:
        core = None
    eps = _validate("epsilon", epsilon, lo=0.0, lo_open=True)
    dlt = _validate("delta", delta, lo=0.0, lo_open=True, hi=1.0)
    sens = _validate("sensitivity", sensitivity, lo=0.0, lo_open=False)
    if core is not None:
        return np.asarray(core(eps, dlt, sensitivity=sens), dtype=np.float64)
    return np.sqrt(2.0 * np.log(1.25 / dlt)) * sens / eps


def gauss_output_sigma(epsilon: ArrayLike, delta: ArrayLike, alpha: ArrayLike,
                       mu: ArrayLike = 1.0) -> Any:
    """σ of Gauss-Output (ip paper, Def. 4 / Thm. 2): σ² = 2 ln(1.25/δ) (α μ_C)² / ε².

    Args:
        epsilon: privacy budget ε > 0.
        delta: δ in (0, 1).
        alpha: the IP radius α ≥ 0 (ℓ2, input space).
        mu: an ℓ2 Lipschitz bound μ_C ≥ 0 of the classifier's logits.
    """
    a = _validate("alpha", alpha, lo=0.0, lo_open=False)
    m = _validate("mu", mu, lo=0.0, lo_open=False)
    return classical_sigma(epsilon, delta, a * m)


def gauss_input_sigma(epsilon: ArrayLike, delta: ArrayLike, alpha: ArrayLike) -> Any:
    """σ of Gauss-Input (ip paper, Def. 5 / Thm. 3): σ² = 2 ln(1.25/δ) α² / ε², any classifier."""
    a = _validate("alpha", alpha, lo=0.0, lo_open=False)
    return classical_sigma(epsilon, delta, a)


def lap_output_scale(epsilon: ArrayLike, alpha: ArrayLike, mu_l1: ArrayLike = 1.0) -> Any:
    """Laplace scale b = μ_C α / ε of Lap-Output (ip paper, Def. 3, eq. 36), μ_C in ℓ1."""
    eps = _validate("epsilon", epsilon, lo=0.0, lo_open=True)
    a = _validate("alpha", alpha, lo=0.0, lo_open=False)
    m = _validate("mu_l1", mu_l1, lo=0.0, lo_open=False)
    return m * a / eps


def gaussian_true_delta(epsilon: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0) -> Any:
    """The exact δ(ε) of the Gaussian mechanism N(f(x), σ²) with ℓ2 sensitivity Δ.

    δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) (Balle & Wang 2018, Thm. 8). Computed in log
    space so that large ε does not overflow.
    """
    eps = np.asarray(epsilon, dtype=np.float64)
    sig = np.asarray(sigma, dtype=np.float64)
    sens = np.asarray(sensitivity, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = sens / sig
        a = r / 2.0 - eps / r
        b = -r / 2.0 - eps / r
        log_first = special.log_ndtr(a)
        log_second = eps + special.log_ndtr(b)
        out = np.exp(log_first) * -np.expm1(np.minimum(log_second - log_first, 0.0))
    out = np.where(sens == 0, 0.0, out)
    return np.where(sig == 0, np.where(sens == 0, 0.0, 1.0), out)


def analytic_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest σ with exact δ(ε) ≤ δ (Balle & Wang 2018's analytic Gaussian), by bisection.

    Used by the ``corrected`` mode where ε is large enough (≳ 8.42 at δ = 1e-5) for the classical
    σ to miss its δ.
    """
    if not epsilon > 0 or not 0 < delta < 1 or not sensitivity >= 0:
        from privrepro.config.validation import ConfigError

        raise ConfigError("epsilon/delta/sensitivity", (epsilon, delta, sensitivity),
                          "need ε > 0, δ in (0, 1), Δ >= 0")
    if sensitivity == 0:
        return 0.0

    def excess(log_s: float) -> float:
        return float(gaussian_true_delta(epsilon, math.exp(log_s), sensitivity)) - delta

    lo, hi = math.log(sensitivity) - 20.0, math.log(sensitivity) + 20.0
    return float(math.exp(optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=1e-14)))
