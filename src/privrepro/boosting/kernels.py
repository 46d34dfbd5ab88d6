"""Additive-noise kernels of the boosted mechanism: Gaussian and Laplace.

A kernel is the noise density of the DP mechanism that PB-DP boosts (pb paper, Sec. 3.1, "the
kernel"): the output of the kernel at a true value ``c`` is ``c + noise``. The accountants need the
noise CDF ``Φ_M`` (Props. 4–6), the kernel's privacy profile ``δ_Z(ε)`` at every real ε (Prop. 1
evaluates it at ``ε − L1 ± L2``, possibly negative), its Rényi divergence (Prop. 2) and, for the
exact accounting, the point where the log-likelihood ratio of two shifted copies crosses a level.

The Gaussian profile is Balle & Wang (2018), Thm. 8, valid for all real ε; the Laplace profile is
its well-known closed form. Both are written here in closed form; ``privrepro.dp.gaussian`` is
used for the Gaussian calibration when it is available (see :mod:`privrepro.boosting.gaussian_mu`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from privrepro.boosting import gaussian_mu
from privrepro.config import ConfigError

__all__ = ["GaussianKernel", "Kernel", "LaplaceKernel", "log_interval_mass_std_normal"]

ArrayLike = float | np.ndarray


def log_interval_mass_std_normal(lo: ArrayLike, hi: ArrayLike) -> np.ndarray:
    """``log(Φ(hi) − Φ(lo))`` for a standard normal, accurate in both tails (lo ≤ hi)."""
    lo, hi = np.broadcast_arrays(np.asarray(lo, float), np.asarray(hi, float))
    out = np.full(lo.shape, -np.inf)
    upper = lo > 0  # both in the upper tail: use the mirror image
    a = np.where(upper, -hi, lo)
    b = np.where(upper, -lo, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        lb = special.log_ndtr(b)
        la = special.log_ndtr(a)
        ok = b > a
        diff = np.where(ok, la - lb, -np.inf)
        val = lb + np.log1p(-np.exp(np.minimum(diff, 0.0)))
    out = np.where(ok, val, -np.inf)
    return out


def _interval_mass_std_normal(lo: ArrayLike, hi: ArrayLike) -> np.ndarray:
    """``Φ(hi) − Φ(lo)``, accurate in both tails."""
    lo, hi = np.broadcast_arrays(np.asarray(lo, float), np.asarray(hi, float))
    upper = lo > 0  # both in the upper tail: the mirror image, Φ(−lo) − Φ(−hi)
    return np.asarray(
        special.ndtr(np.where(upper, -lo, hi)) - special.ndtr(np.where(upper, -hi, lo))
    )


@dataclass(frozen=True)
class Kernel:
    """Base class: a symmetric, log-concave, additive noise density with one scale parameter."""

    scale: float

    name = "kernel"

    def __post_init__(self) -> None:
        if not (self.scale > 0 and math.isfinite(self.scale)):
            raise ConfigError("scale", self.scale, "must lie in (0, inf)")

    # --- noise distribution (centred at 0) -------------------------------------------------
    def cdf(self, x: ArrayLike) -> np.ndarray:
        """``Φ_M(x)``: the noise CDF."""
        raise NotImplementedError

    def sf(self, x: ArrayLike) -> np.ndarray:
        """``1 − Φ_M(x)``, accurate in the upper tail."""
        return self.cdf(-np.asarray(x, float))

    def interval_mass(self, lo: ArrayLike, hi: ArrayLike) -> np.ndarray:
        """``Φ_M(hi) − Φ_M(lo)`` for ``lo ≤ hi``, accurate in both tails."""
        lo, hi = np.broadcast_arrays(np.asarray(lo, float), np.asarray(hi, float))
        return np.where(lo > 0, self.sf(lo) - self.sf(hi), self.cdf(hi) - self.cdf(lo))

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        raise NotImplementedError

    def pdf(self, x: ArrayLike) -> np.ndarray:
        return np.exp(self.logpdf(x))

    def ppf(self, u: ArrayLike) -> np.ndarray:
        """Inverse CDF of the noise."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError

    # --- privacy of the kernel --------------------------------------------------------------
    def delta(
        self, epsilon: ArrayLike, sensitivity: float = 1.0, compositions: int = 1
    ) -> np.ndarray:
        """Privacy profile ``δ_Z(ε)`` of the kernel at shift ``sensitivity``, for every real ε."""
        raise NotImplementedError

    def rdp(self, alpha: float, sensitivity: float = 1.0) -> float:
        """Rényi divergence of order α between the kernel at 0 and at ``sensitivity``."""
        raise NotImplementedError

    def crossing(self, c: float, c2: float, level: ArrayLike) -> np.ndarray:
        """The ``y`` where ``log f(y−c) − log f(y−c2) = level`` (``c < c2``: the ratio falls in y).

        Returns ``-inf`` where the ratio never exceeds the level and ``+inf`` where it always does.
        """
        raise NotImplementedError


@dataclass(frozen=True)
class GaussianKernel(Kernel):
    """Gaussian noise ``N(0, σ²)`` (pb paper, Sec. 2, the only kernel of its experiments)."""

    name = "gaussian"

    @property
    def sigma(self) -> float:
        return self.scale

    def cdf(self, x: ArrayLike) -> np.ndarray:
        return special.ndtr(np.asarray(x, float) / self.scale)

    def sf(self, x: ArrayLike) -> np.ndarray:
        return special.ndtr(-np.asarray(x, float) / self.scale)

    def interval_mass(self, lo: ArrayLike, hi: ArrayLike) -> np.ndarray:
        return _interval_mass_std_normal(
            np.asarray(lo, float) / self.scale, np.asarray(hi, float) / self.scale
        )

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        z = np.asarray(x, float) / self.scale
        return -0.5 * z * z - math.log(self.scale) - 0.5 * math.log(2 * math.pi)

    def ppf(self, u: ArrayLike) -> np.ndarray:
        return self.scale * special.ndtri(np.asarray(u, float))

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
        return rng.normal(0.0, self.scale, size)

    def delta(
        self, epsilon: ArrayLike, sensitivity: float = 1.0, compositions: int = 1
    ) -> np.ndarray:
        """Exact Gaussian profile (Balle & Wang 2018, Thm. 8), μ = √T·Δ/σ, valid for all real ε."""
        mu = math.sqrt(compositions) * sensitivity / self.scale
        return gaussian_mu.gaussian_delta_mu(np.asarray(epsilon, float), mu)

    def rdp(self, alpha: float, sensitivity: float = 1.0) -> float:
        """``α Δ² / (2σ²)`` (Mironov 2017, Prop. 7)."""
        return alpha * sensitivity**2 / (2 * self.scale**2)

    def crossing(self, c: float, c2: float, level: ArrayLike) -> np.ndarray:
        d = c2 - c
        if d <= 0:
            raise ConfigError("c2", c2, f"must exceed c = {c!r}")
        # log f(y-c) - log f(y-c2) = -(d/σ²)(y - (c+c2)/2)
        return (c + c2) / 2 - (self.scale**2 / d) * np.asarray(level, float)


@dataclass(frozen=True)
class LaplaceKernel(Kernel):
    """Laplace noise with scale ``b`` (named as a kernel in pb paper, Secs. 1.1 and 3.1)."""

    name = "laplace"

    def cdf(self, x: ArrayLike) -> np.ndarray:
        z = np.asarray(x, float) / self.scale
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))

    def sf(self, x: ArrayLike) -> np.ndarray:
        return self.cdf(-np.asarray(x, float))

    def logpdf(self, x: ArrayLike) -> np.ndarray:
        return -np.abs(np.asarray(x, float)) / self.scale - math.log(2 * self.scale)

    def ppf(self, u: ArrayLike) -> np.ndarray:
        u = np.asarray(u, float)
        return np.where(
            u < 0.5,
            self.scale * np.log(2 * np.maximum(u, 1e-300)),
            -self.scale * np.log(2 * np.maximum(1 - u, 1e-300)),
        )

    def sample(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
        return rng.laplace(0.0, self.scale, size)

    def delta(
        self, epsilon: ArrayLike, sensitivity: float = 1.0, compositions: int = 1
    ) -> np.ndarray:
        """Laplace profile: ``1 − e^{(ε−ε₀)/2}`` on ``|ε| ≤ ε₀``, ``1 − e^ε`` below, 0 above."""
        if compositions != 1:
            raise NotImplementedError("closed-form composed Laplace profile is not provided")
        e0 = sensitivity / self.scale
        eps = np.asarray(epsilon, float)
        mid = 1 - np.exp((np.clip(eps, -e0, e0) - e0) / 2)
        return np.where(eps >= e0, 0.0, np.where(eps <= -e0, -np.expm1(np.minimum(eps, 0)), mid))

    def rdp(self, alpha: float, sensitivity: float = 1.0) -> float:
        """Mironov (2017), Prop. 6: Laplace Rényi divergence of order α > 1."""
        e0 = sensitivity / self.scale
        a = alpha
        terms = np.array(
            [math.log(a / (2 * a - 1)) + (a - 1) * e0, math.log((a - 1) / (2 * a - 1)) - a * e0]
        )
        return float(special.logsumexp(terms) / (a - 1))

    def crossing(self, c: float, c2: float, level: ArrayLike) -> np.ndarray:
        d = c2 - c
        if d <= 0:
            raise ConfigError("c2", c2, f"must exceed c = {c!r}")
        lev = np.asarray(level, float)
        # log-ratio = (|y-c2| - |y-c|)/b: d/b for y ≤ c, (c+c2-2y)/b between, -d/b for y ≥ c2
        y = (c + c2 - self.scale * lev) / 2
        return np.where(lev >= d / self.scale, -np.inf, np.where(lev < -d / self.scale, np.inf, y))
