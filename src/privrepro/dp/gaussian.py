"""The Gaussian mechanism: calibration, exact privacy profile, its inverse, RDP and composition.

Mechanism: M(x) = f(x) + N(0, σ² I) for a query f with ℓ2-sensitivity Δ = sup ‖f(x) − f(x')‖₂
over neighbouring x ≃ x'. Every quantity depends on σ and Δ only through μ = Δ/σ (the mechanism
is μ-GDP, Dong, Roth & Su 2019), and the worst pair of outputs is N(0, σ²) vs N(Δ, σ²).

More in ``docs/modules.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from privrepro.dp.checks import as_float_array, check_range

__all__ = [
    "GaussianMechanism",
    "analytic_sigma",
    "classical_sigma",
    "compose_mu",
    "delta_for_epsilon",
    "epsilon_for_delta",
    "log_delta_for_epsilon",
    "rdp_epsilon",
]

Floats: TypeAlias = float | NDArray[np.float64]
"""A float for scalar inputs, else an ndarray of the broadcast shape."""

_SQRT1_2 = math.sqrt(0.5)
_LOG_HALF = math.log(0.5)
_BISECT_MAX = 400
_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)
_TWO_OVER_SQRTPI = 2.0 / math.sqrt(math.pi)
_SMALL_MU = 0.01  # below this μ the erfcx difference is integrated instead of subtracted
_SMALL = 64  # arrays up to this size are solved element by element (lower overhead)


def _out(x: NDArray[np.float64]) -> Floats:
    return float(x) if x.ndim == 0 else x


# ---- scalar fast path (same arithmetic as the array path, without array overheads) ----------


def _erfcx_diff(x1: NDArray[np.float64], x2: NDArray[np.float64]) -> NDArray[np.float64]:
    """erfcx(x1) − erfcx(x2) for x1 < x2 close together, as ∫_{x1}^{x2} (2/√π − 2t erfcx(t)) dt
    (−erfcx' under the integral) by 8-point Gauss–Legendre: no cancellation when x2 − x1 is
    tiny (small μ), where the plain difference loses digits like 1e−16/μ."""
    half = 0.5 * (x2 - x1)
    mid = 0.5 * (x1 + x2)
    t = mid[..., None] + half[..., None] * _GL_X
    g = _TWO_OVER_SQRTPI - 2.0 * t * special.erfcx(t)
    return np.asarray(half * (g @ _GL_W), dtype=float)


def _is_scalar(*xs: object) -> bool:
    return all(isinstance(x, (int, float, np.floating, np.integer)) for x in xs)


def _chk(
    name: str,
    value: object,
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
) -> float:
    v = float(value)  # type: ignore[arg-type]
    if (
        v != v
        or (gt is not None and not v > gt)
        or (ge is not None and not v >= ge)
        or (lt is not None and not v < lt)
        or (le is not None and not v <= le)
    ):
        check_range(name, v, gt=gt, ge=ge, lt=lt, le=le)  # raises the ConfigError
    return v


def _log_delta_scalar(e: float, m: float) -> float:
    if m == 0.0:
        return math.log(-math.expm1(e)) if e < 0 else -math.inf
    if math.isinf(m):
        return -math.inf if e == math.inf else 0.0
    if e == math.inf:
        return -math.inf
    if e == -math.inf:
        return 0.0
    a = m / 2.0 - e / m
    b = a - m
    if a < 5.0:
        if m < _SMALL_MU:
            diff = float(_erfcx_diff(np.array(-a * _SQRT1_2), np.array(-b * _SQRT1_2)))
        else:
            diff = float(special.erfcx(-a * _SQRT1_2) - special.erfcx(-b * _SQRT1_2))
        return _LOG_HALF - 0.5 * a * a + math.log(diff) if diff > 0 else -math.inf
    with np.errstate(over="ignore"):
        d = float(special.ndtr(a) - np.exp(e + special.log_ndtr(b)))
    return math.log(d) if d > 0 else -math.inf


def _scalar_mu(sigma: object, sensitivity: object) -> float:
    sig = _chk("sigma", sigma, gt=0)
    sens = _chk("sensitivity", sensitivity, ge=0)
    return 0.0 if sens == 0 else sens / sig


def _epsilon_for_delta_scalar(dlt: float, mu: float) -> float:
    if dlt == 1:
        return -math.inf
    if mu == 0:
        return math.log1p(-dlt)
    if math.isinf(mu) or dlt == 0:
        return math.inf
    log_t = math.log(dlt)
    lo = math.log1p(-dlt)
    hi = max(lo, mu * mu / 2.0 - mu * float(special.ndtri(dlt)))
    for _ in range(_BISECT_MAX):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi or hi - lo <= 1e-300 + 2.2e-16 * abs(hi):
            break
        if _log_delta_scalar(mid, mu) <= log_t:
            hi = mid
        else:
            lo = mid
    return hi


def _analytic_sigma_scalar(eps: float, dlt: float, sens: float) -> float:
    if sens == 0:
        return 0.0
    log_t = math.log(dlt)
    lo = math.log(math.sqrt(2.0 * math.pi) * dlt)
    hi = max(lo + 1.0, 0.0)
    while _log_delta_scalar(eps, math.exp(hi)) <= log_t:
        lo, hi = hi, hi + math.log(2.0)
    for _ in range(_BISECT_MAX):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if _log_delta_scalar(eps, math.exp(mid)) <= log_t:
            lo = mid
        else:
            hi = mid
    sigma = sens / math.exp(lo)
    # Rounding (exp of log δ, Δ/μ) may leave δ a few ulps above the target: step σ up by
    # 1, 2, 4, … ulps until delta_for_epsilon meets it exactly as evaluated.
    for i in range(64):
        if math.exp(_log_delta_scalar(eps, sens / sigma)) <= dlt:
            break
        sigma = sigma * (1.0 + 2.0**-52 * 2.0**i)
    return sigma


def classical_sigma(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike = 1.0) -> Floats:
    """σ = √(2 ln(1.25/δ)) Δ/ε, the classical calibration (Dwork & Roth 2014, Thm. A.1).

    Dwork & Roth prove (ε, δ)-DP only for ε ∈ (0, 1); the ip paper (Thm. 2/3, eq. 10/13) uses the
    formula for every ε. ``delta_for_epsilon(ε, classical_sigma(ε, δ))`` gives the δ it really
    achieves (about 2.265e−5 at ε = 10, δ = 1e−5; ip note §7). Broadcasts over its arguments.

    Args:
        epsilon: ε > 0.
        delta: δ ∈ (0, 1).
        sensitivity: ℓ2-sensitivity Δ ≥ 0.
    """
    eps = check_range("epsilon", epsilon, gt=0)
    dlt = check_range("delta", delta, gt=0, lt=1)
    sens = check_range("sensitivity", sensitivity, ge=0)
    return _out(np.sqrt(2.0 * np.log(1.25 / dlt)) * sens / eps)


def _log_delta_mu(eps: NDArray[np.float64], mu: NDArray[np.float64]) -> NDArray[np.float64]:
    """log δ(ε) of μ-GDP, elementwise over broadcast ``eps`` and ``mu`` (μ ∈ [0, ∞])."""
    eps, mu = np.broadcast_arrays(np.asarray(eps, float), np.asarray(mu, float))
    out = np.empty(eps.shape, dtype=float)
    with np.errstate(all="ignore"):
        zero = mu == 0.0
        inf = np.isinf(mu)
        gen = ~(zero | inf)
        # μ = 0: identical outputs, δ(ε) = (1 − e^ε)_+.
        out[zero] = np.where(eps[zero] < 0, np.log(-np.expm1(eps[zero])), -np.inf)
        # μ = ∞: disjoint outputs, δ(ε) = 1 for every finite ε.
        out[inf] = np.where(eps[inf] == np.inf, -np.inf, 0.0)
        e, m = eps[gen], mu[gen]
        a = np.where(np.isinf(e), -np.sign(e) * np.inf, m / 2.0 - e / m)
        b = a - m
        res = np.empty(e.shape, dtype=float)
        lo = a < 5.0
        al, bl = a[lo], b[lo]
        diff = special.erfcx(-al * _SQRT1_2) - special.erfcx(-bl * _SQRT1_2)
        small = m[lo] < _SMALL_MU
        if np.any(small):
            diff[small] = _erfcx_diff(-al[small] * _SQRT1_2, -bl[small] * _SQRT1_2)
        res[lo] = np.where(diff > 0, _LOG_HALF - 0.5 * al * al + np.log(diff), -np.inf)
        hi = ~lo
        d_hi = special.ndtr(a[hi]) - np.exp(e[hi] + special.log_ndtr(b[hi]))
        res[hi] = np.where(d_hi > 0, np.log(d_hi), -np.inf)
        res = np.where(e == -np.inf, 0.0, np.where(e == np.inf, -np.inf, res))
        out[gen] = res
    return out


def _mu(sigma: ArrayLike, sensitivity: ArrayLike) -> NDArray[np.float64]:
    sig = check_range("sigma", sigma, gt=0)
    sens = check_range("sensitivity", sensitivity, ge=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sens == 0, 0.0, sens / sig)


def log_delta_for_epsilon(
    epsilon: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0
) -> Floats:
    """log δ(ε) of the Gaussian mechanism (see ``docs/modules.md``); −inf where δ = 0."""
    if _is_scalar(epsilon, sigma, sensitivity):
        return _log_delta_scalar(_chk("epsilon", epsilon), _scalar_mu(sigma, sensitivity))
    eps = as_float_array("epsilon", epsilon)
    return _out(_log_delta_mu(eps, _mu(sigma, sensitivity)))


def delta_for_epsilon(epsilon: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0) -> Floats:
    """Exact δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) of the Gaussian mechanism.

    Balle & Wang 2018, Thm. 8. Valid for every real ε (negative ε gives δ ≥ 1 − e^ε), arrays
    broadcast. σ ∈ (0, ∞] (σ = ∞ means no leakage); Δ ≥ 0. Never negative; decreasing in ε and in
    σ. T-fold composition: pass σ/√T (``GaussianMechanism.compose``).
    """
    if _is_scalar(epsilon, sigma, sensitivity):
        return math.exp(_log_delta_scalar(_chk("epsilon", epsilon), _scalar_mu(sigma, sensitivity)))
    eps = as_float_array("epsilon", epsilon)
    return _out(np.exp(_log_delta_mu(eps, _mu(sigma, sensitivity))))


def _bisect_epsilon(
    log_target: NDArray[np.float64],
    mu: NDArray[np.float64],
    lo: NDArray[np.float64],
    hi: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Smallest ε in [lo, hi] with log δ(ε) ≤ log_target, by vectorised bisection."""
    for _ in range(_BISECT_MAX):
        mid = 0.5 * (lo + hi)
        done = (mid <= lo) | (mid >= hi) | (hi - lo <= 1e-300 + 2.2e-16 * np.abs(hi))
        if np.all(done):
            break
        ok = _log_delta_mu(mid, mu) <= log_target
        hi = np.where(ok & ~done, mid, hi)
        lo = np.where(~ok & ~done, mid, lo)
    return hi


def epsilon_for_delta(delta: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0) -> Floats:
    """ε(δ) = inf{ε : δ(ε) ≤ δ}, the inverse of :func:`delta_for_epsilon`.

    The result is the exact root (to one ulp, by bisection on a bracket that is provably valid:
    δ(ε) ≥ 1 − e^ε below it and δ(ε) ≤ Φ(μ/2 − ε/μ) above it). It is negative when δ exceeds
    δ(0) = 2Φ(μ/2) − 1; take ``max(ε, 0)`` for an (ε, δ)-DP statement. δ ∈ [0, 1]: δ = 0 gives
    +inf (μ > 0) and δ = 1 gives −inf. Arrays broadcast.
    """
    if _is_scalar(delta, sigma, sensitivity):
        return _epsilon_for_delta_scalar(
            _chk("delta", delta, ge=0, le=1), _scalar_mu(sigma, sensitivity)
        )
    dlt = check_range("delta", delta, ge=0, le=1)
    mu = _mu(sigma, sensitivity)
    dlt, mu = np.broadcast_arrays(dlt, mu)
    if dlt.size <= _SMALL:  # per-element scalar path is faster for short arrays
        flat = [
            _epsilon_for_delta_scalar(float(d), float(m))
            for d, m in zip(dlt.ravel(), mu.ravel(), strict=True)
        ]
        return np.asarray(flat, dtype=float).reshape(dlt.shape)
    with np.errstate(all="ignore"):
        log_t = np.log(dlt)
        interior = (dlt > 0) & (dlt < 1) & np.isfinite(mu) & (mu > 0)
        lo = np.where(interior, np.log1p(-dlt), 0.0)
        hi = np.where(interior, np.maximum(lo, mu * mu / 2.0 - mu * special.ndtri(dlt)), 0.0)
        root = _bisect_epsilon(np.where(interior, log_t, 0.0), np.where(interior, mu, 1.0), lo, hi)
        out = np.where(interior, root, np.nan)
        # Edge cases: δ(ε) = (1 − e^ε)_+ for μ = 0, δ(ε) = 1 for μ = ∞.
        out = np.where(dlt == 1, -np.inf, out)
        out = np.where((dlt == 0) & (mu > 0), np.inf, out)
        out = np.where((mu == 0) & (dlt < 1), np.log1p(-dlt), out)
        out = np.where(np.isinf(mu) & (dlt < 1), np.inf, out)
    return _out(np.asarray(out, dtype=float))


def analytic_sigma(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike = 1.0) -> Floats:
    """Smallest σ with δ(ε; σ) ≤ δ: the analytic Gaussian mechanism (Balle & Wang 2018, Alg. 1).

    Solved for μ = Δ/σ by bisection in log μ to full double precision; the returned σ is the
    side of the final bracket that satisfies the target, so δ(ε; σ) ≤ δ holds as evaluated
    (the mechanism never gives more than the target ε at δ). About 3.7306 at ε = 1, δ = 1e−5,
    Δ = 1 (cl note, check 5). ε ≥ 0, δ ∈ (0, 1), Δ ≥ 0; arrays broadcast.
    """
    if _is_scalar(epsilon, delta, sensitivity):
        return _analytic_sigma_scalar(
            _chk("epsilon", epsilon, ge=0),
            _chk("delta", delta, gt=0, lt=1),
            _chk("sensitivity", sensitivity, ge=0),
        )
    eps = check_range("epsilon", epsilon, ge=0)
    dlt = check_range("delta", delta, gt=0, lt=1)
    sens = check_range("sensitivity", sensitivity, ge=0)
    eps, dlt, sens = np.broadcast_arrays(eps, dlt, sens)
    if eps.size <= _SMALL:  # per-element scalar path is faster for short arrays
        flat = [
            _analytic_sigma_scalar(float(e), float(d), float(c))
            for e, d, c in zip(eps.ravel(), dlt.ravel(), sens.ravel(), strict=True)
        ]
        return np.asarray(flat, dtype=float).reshape(eps.shape)
    log_t = np.log(dlt)
    # δ(ε; μ) ≤ δ(0; μ) = 2Φ(μ/2) − 1 ≤ μ/√(2π): μ = √(2π)·δ satisfies the target.
    lo = np.log(math.sqrt(2.0 * math.pi) * dlt)
    hi = np.maximum(lo + 1.0, 0.0)
    for _ in range(2000):  # δ(ε; μ) → 1 as μ → ∞, so doubling finds a violating μ
        bad = _log_delta_mu(eps, np.exp(hi)) <= log_t
        if not np.any(bad):
            break
        lo = np.where(bad, hi, lo)
        hi = np.where(bad, hi + math.log(2.0), hi)
    for _ in range(_BISECT_MAX):
        mid = 0.5 * (lo + hi)
        done = (mid <= lo) | (mid >= hi)
        if np.all(done):
            break
        ok = _log_delta_mu(eps, np.exp(mid)) <= log_t
        lo = np.where(ok & ~done, mid, lo)
        hi = np.where(~ok & ~done, mid, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma = np.where(sens == 0, 0.0, sens / np.exp(lo))
        # Rounding in exp and in Δ/μ may cross the target: step σ up by 1, 2, 4, … ulps until
        # δ(ε; Δ/σ) ≤ δ holds exactly as delta_for_epsilon evaluates it.
        for i in range(64):
            mu_eval = np.where(sens > 0, sens / sigma, 0.0)
            bad = (sens > 0) & (np.exp(_log_delta_mu(eps, mu_eval)) > dlt)
            if not np.any(bad):
                break
            sigma = np.where(bad, sigma * (1.0 + 2.0**-52 * 2.0**i), sigma)
    return _out(np.asarray(sigma, dtype=float))


def rdp_epsilon(alpha: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0) -> Floats:
    """Rényi-DP ε(α) = αΔ²/(2σ²) of the Gaussian mechanism (Mironov 2017, Prop. 7); α > 1.

    The RDP of a T-fold composition is T times this (pb note §2.4).
    """
    alp = check_range("alpha", alpha, gt=1)
    mu = _mu(sigma, sensitivity)
    return _out(np.asarray(alp * mu * mu / 2.0, dtype=float))


def compose_mu(mus: ArrayLike, axis: int = -1) -> Floats:
    """μ of the composition of Gaussian mechanisms with μ_i = Δ_i/σ_i: √(Σ μ_i²) (exact).

    T identical releases give μ√T (Dong, Roth & Su 2019, Cor. 3.3; pb note §2.4).
    """
    m = check_range("mus", mus, ge=0)
    return _out(np.asarray(np.sqrt(np.sum(m * m, axis=axis)), dtype=float))


@dataclass(frozen=True)
class GaussianMechanism:
    """M(x) = f(x) + N(0, σ² I) with ℓ2-sensitivity Δ of f over neighbouring inputs.

    Neighbouring relation: whatever the sensitivity Δ is computed for (add/remove or replace one
    record for DP; ‖x − x'‖ ≤ α for ip's inference privacy). Its exact profile is
    δ(ε) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) (Balle & Wang 2018, Thm. 8) and its RDP is
    αΔ²/2σ² (Mironov 2017). ``compose(T)`` is the T-fold composition, again a Gaussian mechanism
    with σ/√T (exact, μ√T).
    """

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        check_range("sigma", self.sigma, gt=0)
        check_range("sensitivity", self.sensitivity, ge=0)

    @classmethod
    def classical(cls, epsilon: float, delta: float, sensitivity: float = 1.0) -> GaussianMechanism:
        """The mechanism with the classical σ (:func:`classical_sigma`)."""
        return cls(float(classical_sigma(epsilon, delta, sensitivity)), sensitivity)

    @classmethod
    def analytic(cls, epsilon: float, delta: float, sensitivity: float = 1.0) -> GaussianMechanism:
        """The mechanism with the analytic σ (:func:`analytic_sigma`)."""
        return cls(float(analytic_sigma(epsilon, delta, sensitivity)), sensitivity)

    @property
    def mu(self) -> float:
        """μ = Δ/σ (the mechanism is μ-GDP)."""
        return self.sensitivity / self.sigma

    def delta(self, epsilon: ArrayLike) -> Floats:
        """Exact δ(ε), see :func:`delta_for_epsilon`."""
        return delta_for_epsilon(epsilon, self.sigma, self.sensitivity)

    def epsilon(self, delta: ArrayLike) -> Floats:
        """Exact ε(δ), see :func:`epsilon_for_delta`."""
        return epsilon_for_delta(delta, self.sigma, self.sensitivity)

    def rdp(self, alpha: ArrayLike) -> Floats:
        """RDP ε(α) = αΔ²/2σ²."""
        return rdp_epsilon(alpha, self.sigma, self.sensitivity)

    def compose(self, times: int) -> GaussianMechanism:
        """The ``times``-fold composition: the same mechanism with σ/√T."""
        if int(times) != times or times < 1:
            from privrepro.config import ConfigError

            raise ConfigError("times", times, "must be an integer >= 1")
        return GaussianMechanism(self.sigma / math.sqrt(times), self.sensitivity)

    def sample(self, value: ArrayLike, rng: np.random.Generator) -> NDArray[np.float64]:
        """f(x) + N(0, σ² I) for ``value`` = f(x) (any shape)."""
        v = np.asarray(value, dtype=float)
        return v + rng.normal(0.0, self.sigma, size=v.shape)
