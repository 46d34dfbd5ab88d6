"""Noise calibration of the inference-privacy mechanisms (ip paper, Defs. 3–5).

All functions broadcast over numpy arrays, so a whole (α, ε) grid is one call. ``mu`` is the
global Lipschitz constant μ_C of the classifier (ip paper, eq. 8): in ℓ1 for Lap-Output, in ℓ2
for the Gaussian mechanisms. The Gaussian σ is the classical Dwork–Roth calibration used by the
paper, ``σ = sqrt(2 ln(1.25/δ)) · Δ / ε`` with sensitivity ``Δ = α μ_C`` (output) or ``Δ = α``
(input), from :func:`privrepro.dp.gaussian.classical_sigma`. That calibration is only proven for
ε < 1; ``gaussian_true_delta`` (:func:`privrepro.dp.gaussian.delta_for_epsilon`) gives the exact δ
it achieves (Balle & Wang 2018), which exceeds the nominal δ = 1e-5 above ε ≈ 8.42 (the note, M1),
and ``analytic_sigma`` the smallest σ that meets δ exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privrepro.dp.gaussian import analytic_sigma, classical_sigma
from privrepro.dp.gaussian import delta_for_epsilon as gaussian_true_delta

__all__ = [
    "analytic_sigma",
    "classical_sigma",
    "gauss_input_sigma",
    "gauss_output_sigma",
    "gaussian_true_delta",
    "lap_output_scale",
]


def _validate(
    name: str,
    value: ArrayLike,
    *,
    lo: float,
    lo_open: bool,
    hi: float | None = None,
    hi_open: bool = True,
) -> NDArray[np.float64]:
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


def gauss_output_sigma(
    epsilon: ArrayLike, delta: ArrayLike, alpha: ArrayLike, mu: ArrayLike = 1.0
) -> Any:
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
