"""The Laplace mechanism: calibration b = Δ/ε, exact privacy profile, its inverse and RDP.

Mechanism: M(x) = f(x) + Lap(0, b) per coordinate, for a query with ℓ1-sensitivity Δ; the worst
pair of outputs is Lap(0, b) vs Lap(Δ, b) and everything depends on ε₀ = Δ/b only (ε₀-DP, Dwork,
McSherry, Nissim & Smith 2006). Its privacy loss is ε₀ on x ≤ 0, (Δ − 2x)/b on (0, Δ) and −ε₀ on
x ≥ Δ, which gives the exact profile, for every real ε (more in ``docs/modules.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privrepro.dp.checks import as_float_array, check_range
from privrepro.dp.gaussian import Floats, _out

__all__ = [
    "LaplaceMechanism",
    "laplace_delta_for_epsilon",
    "laplace_epsilon_for_delta",
    "laplace_rdp_epsilon",
    "laplace_scale",
]


def laplace_scale(epsilon: ArrayLike, sensitivity: ArrayLike = 1.0) -> Floats:
    """b = Δ/ε, the scale that makes the Laplace mechanism ε-DP (ip note §7: b(ε=1, Δ=0.1) = 0.1)."""
    eps = check_range("epsilon", epsilon, gt=0)
    sens = check_range("sensitivity", sensitivity, ge=0)
    return _out(np.asarray(sens / eps, dtype=float))


def _eps0(scale: ArrayLike, sensitivity: ArrayLike) -> NDArray[np.float64]:
    b = check_range("scale", scale, gt=0)
    sens = check_range("sensitivity", sensitivity, ge=0)
    return np.asarray(sens / b, dtype=float)


def laplace_delta_for_epsilon(
    epsilon: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike = 1.0
) -> Floats:
    """Exact δ(ε) of the Laplace mechanism (``docs/modules.md``); every real ε, arrays broadcast."""
    eps = as_float_array("epsilon", epsilon)
    e0 = _eps0(scale, sensitivity)
    eps, e0 = np.broadcast_arrays(eps, e0)
    with np.errstate(over="ignore", invalid="ignore"):
        mid = -np.expm1((eps - e0) / 2.0)
        low = -np.expm1(eps)
        out = np.where(eps >= e0, 0.0, np.where(eps <= -e0, low, mid))
    return _out(np.asarray(out, dtype=float))


def laplace_epsilon_for_delta(
    delta: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike = 1.0
) -> Floats:
    """ε(δ) = inf{ε : δ(ε) ≤ δ}: ε₀ + 2 ln(1 − δ) when that exceeds −ε₀, else ln(1 − δ)."""
    dlt = check_range("delta", delta, ge=0, le=1)
    e0 = _eps0(scale, sensitivity)
    dlt, e0 = np.broadcast_arrays(dlt, e0)
    with np.errstate(divide="ignore"):
        l1 = np.log1p(-dlt)
        out = np.where(e0 + 2.0 * l1 > -e0, e0 + 2.0 * l1, l1)
    return _out(np.asarray(out, dtype=float))


def laplace_rdp_epsilon(alpha: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike = 1.0) -> Floats:
    """Rényi-DP of the Laplace mechanism (Mironov 2017, Prop. 6), α > 1:

    ε(α) = 1/(α−1) · log( α/(2α−1) e^{(α−1)ε₀} + (α−1)/(2α−1) e^{−αε₀} ),

    evaluated with logaddexp so large α ε₀ does not overflow.
    """
    alp = check_range("alpha", alpha, gt=1)
    e0 = _eps0(scale, sensitivity)
    alp, e0 = np.broadcast_arrays(alp, e0)
    t1 = np.log(alp / (2 * alp - 1)) + (alp - 1) * e0
    t2 = np.log((alp - 1) / (2 * alp - 1)) - alp * e0
    return _out(np.asarray(np.logaddexp(t1, t2) / (alp - 1), dtype=float))


@dataclass(frozen=True)
class LaplaceMechanism:
    """M(x) = f(x) + Lap(0, b) per coordinate, f with ℓ1-sensitivity Δ over neighbouring inputs.

    It is ε₀-DP with ε₀ = Δ/b (Dwork et al. 2006); the exact profile and RDP are in the module
    docstring. Neighbouring relation: whatever Δ is computed for.
    """

    scale: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        check_range("scale", self.scale, gt=0)
        check_range("sensitivity", self.sensitivity, ge=0)

    @classmethod
    def calibrated(cls, epsilon: float, sensitivity: float = 1.0) -> LaplaceMechanism:
        """The ε-DP mechanism, b = Δ/ε."""
        return cls(float(laplace_scale(epsilon, sensitivity)), sensitivity)

    @property
    def epsilon0(self) -> float:
        """ε₀ = Δ/b, the pure-DP parameter."""
        return self.sensitivity / self.scale

    def delta(self, epsilon: ArrayLike) -> Floats:
        """Exact δ(ε)."""
        return laplace_delta_for_epsilon(epsilon, self.scale, self.sensitivity)

    def epsilon(self, delta: ArrayLike) -> Floats:
        """Exact ε(δ)."""
        return laplace_epsilon_for_delta(delta, self.scale, self.sensitivity)

    def rdp(self, alpha: ArrayLike) -> Floats:
        """RDP ε(α)."""
        return laplace_rdp_epsilon(alpha, self.scale, self.sensitivity)

    def sample(self, value: ArrayLike, rng: np.random.Generator) -> NDArray[np.float64]:
        """f(x) + Lap(0, b) for ``value`` = f(x) (any shape)."""
        v = np.asarray(value, dtype=float)
        return v + rng.laplace(0.0, self.scale, size=v.shape)
