"""Noise calibration of the inference-privacy mechanisms (ip paper, Defs. 3–5).

More in ``docs/modules.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privrepro.dp.gaussian import analytic_sigma, classical_sigma
from privrepro.dp.gaussian import delta_for_epsilon as gaussian_true_delta

__all__ = [
    "MODES",
    "Calibration",
    "analytic_sigma",
    "calibrate",
    "classical_sigma",
    "gauss_input_sigma",
    "gauss_output_sigma",
    "gaussian_true_delta",
    "lap_output_scale",
    "lipschitz_for_mode",
]

MODES = ("repo_compat", "corrected")
"""The two protocols of the ip experiments. ``repo_compat``, as the notebooks: μ_C = 1 for SLL,
the classical σ, ResNet noise in the normalised space, BN-statistics-only "fine-tuning" selected
on the test set. ``corrected``: μ_C the computed bound including the last layer, the exact-δ
(analytic) σ where the classical σ misses δ, pixel-space noise for every model, real fine-tuning
selected on the validation split."""


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


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        from privrepro.config.validation import ConfigError

        raise ConfigError("mode", mode, f"must be one of {list(MODES)}")
    return mode


@dataclass(frozen=True)
class Calibration:
    """σ of a Gaussian IP mechanism at one point (ε, δ, Δ), and the rule that chose it.

    ``rule`` is ``"classical"`` (σ = sqrt(2 ln(1.25/δ)) Δ/ε, ip paper Defs. 4–5), ``"analytic"``
    (the smallest σ whose exact δ(ε) is δ; Balle & Wang 2018) or ``"none"`` (Δ = 0: no noise).
    """

    epsilon: float
    delta: float
    sensitivity: float
    sigma: float
    rule: str

    @property
    def true_delta(self) -> float:
        """The exact δ the σ achieves at ε (:func:`gaussian_true_delta`); 0 without noise."""
        if self.sigma > 0:
            return float(gaussian_true_delta(self.epsilon, self.sigma, self.sensitivity))
        return 0.0


def calibrate(
    epsilon: float, delta: float, sensitivity: float, mode: str = "corrected"
) -> Calibration:
    """σ of Gauss-Output (Δ = α μ_C) or Gauss-Input (Δ = α) at {(ε, δ), α}.

    ``repo_compat``: the classical σ, as the notebooks (proven only for ε < 1; at δ = 1e-5 its
    exact δ exceeds δ above ε ≈ 8.42, ip note M1). ``corrected``: the classical σ where its exact
    δ is at most δ, else the analytic σ. Δ = 0 gives σ = 0 (rule ``"none"``).

    >>> calibrate(10.0, 1e-5, 0.1, "repo_compat").rule, calibrate(10.0, 1e-5, 0.1).rule
    ('classical', 'analytic')
    """
    _check_mode(mode)
    if sensitivity == 0:
        return Calibration(epsilon, delta, sensitivity, 0.0, "none")
    a = _validate("sensitivity", sensitivity, lo=0.0, lo_open=False)
    s = float(np.asarray(classical_sigma(epsilon, delta, a)))
    if mode == "repo_compat" or float(gaussian_true_delta(epsilon, s, sensitivity)) <= delta:
        return Calibration(epsilon, delta, sensitivity, s, "classical")
    return Calibration(
        epsilon, delta, sensitivity, float(analytic_sigma(epsilon, delta, sensitivity)), "analytic"
    )


def lipschitz_for_mode(mode: str, bound: float) -> float:
    """The μ_C a mode calibrates Gauss-Output with: 1 in ``repo_compat`` (the notebooks' SLL
    assumption, which ignores the row-normalised last layer), the computed ``bound`` otherwise."""
    return 1.0 if _check_mode(mode) == "repo_compat" else float(bound)
