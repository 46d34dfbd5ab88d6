"""Composition and calibration of (subsampled) Gaussian mechanisms through reference accountants.

One interface over four methods, each result saying what kind of number it is (more in
``docs/modules.md``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from privrepro.config import ConfigError
from privrepro.dp.gaussian import analytic_sigma, epsilon_for_delta

__all__ = [
    "DEFAULT_RDP_ORDERS",
    "OPACUS_RDP_ORDERS",
    "AccountingResult",
    "Method",
    "calibrate_noise_multiplier",
    "gaussian_epsilon",
    "prv_estimate",
]

Method = Literal["exact", "pld", "rdp", "prv"]
METHODS: tuple[str, ...] = ("exact", "pld", "rdp", "prv")
Kind = Literal["exact", "bound", "estimate"]

OPACUS_RDP_ORDERS: tuple[float, ...] = tuple(
    [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
)
"""opacus' ``RDPAccountant.DEFAULT_ALPHAS`` (1.1 … 10.9, 12 … 63): what opacus' DP-SGD uses."""
DEFAULT_RDP_ORDERS: tuple[float, ...] = (*OPACUS_RDP_ORDERS, 80, 128, 256, 512)
"""opacus' default orders plus a few large ones for small δ."""
MAX_NOISE_MULTIPLIER = 1e6
"""opacus' ``MAX_SIGMA``: a target that needs more noise is refused."""


@dataclass(frozen=True)
class AccountingResult:
    """An (ε, δ) pair with what it is: ``kind`` is "exact" (closed form), "bound" (a valid upper
    bound on the true ε at δ, up to floating point) or "estimate" (neither side guaranteed)."""

    epsilon: float
    delta: float
    kind: Kind
    method: str
    noise_multiplier: float
    sampling_rate: float
    steps: int


def _check(
    noise_multiplier: float, sampling_rate: float, steps: int, delta: float, method: str
) -> None:
    if not noise_multiplier > 0:
        raise ConfigError("noise_multiplier", noise_multiplier, "must lie in (0, inf)")
    if not 0 < sampling_rate <= 1:
        raise ConfigError("sampling_rate", sampling_rate, "must lie in (0, 1]")
    if int(steps) != steps or steps < 1:
        raise ConfigError("steps", steps, "must be an integer >= 1")
    if not 0 < delta < 1:
        raise ConfigError("delta", delta, "must lie in (0, 1)")
    if method not in METHODS:
        raise ConfigError("method", method, f"must be one of {list(METHODS)}")
    if method == "exact" and sampling_rate != 1:
        raise ConfigError(
            "method",
            method,
            "'exact' needs sampling_rate = 1 (no subsampling); use 'pld', 'rdp' or 'prv'",
        )


@functools.lru_cache(maxsize=65536)
def _pld_epsilon(sigma: float, q: float, steps: int, delta: float, discretization: float) -> float:
    import dp_accounting
    from dp_accounting.pld import PLDAccountant

    event: dp_accounting.DpEvent = dp_accounting.GaussianDpEvent(sigma)
    if q < 1:
        event = dp_accounting.PoissonSampledDpEvent(q, event)
    acc = PLDAccountant(value_discretization_interval=discretization)
    acc.compose(event, int(steps))
    return float(acc.get_epsilon(delta))


def _opacus_history(accountant: object, sigma: float, q: float, steps: int) -> None:
    accountant.history = [(sigma, q, int(steps))]  # type: ignore[attr-defined]


def _memoise_opacus_rdp() -> None:
    """Memoise opacus' RDP of the sampled Gaussian mechanism at one order, ``_compute_rdp(q, σ,
    α)`` (Mironov, Talwar and Zhang 2019, Sec. 3.3), once per process.

    It is a pure function of three floats that opacus calls again and again with the same
    arguments: the RDP accountant at every σ a calibration tries (a bisection that visits the
    same σ for every (steps, ε) at one sampling rate), and the PRV accountant's domain size
    (Gopi et al. 2021, remark 5.6) twice per evaluation. The same inputs give the same float, so
    every ε and σ stays opacus' bit for bit (``tests/dp/test_accounting.py``); the series for
    fractional orders it evaluates in pure Python was most of the cl PEFT figures' calibration
    time. Both modules that call it by name get the memoised function; an opacus without it is
    left as it is.
    """
    from opacus.accountants.analysis import rdp
    from opacus.accountants.analysis.prv import prvs

    fn = getattr(rdp, "_compute_rdp", None)
    if fn is None or hasattr(fn, "cache_info"):
        return
    memo = functools.lru_cache(maxsize=1 << 18)(fn)
    rdp._compute_rdp = memo
    if getattr(prvs, "_compute_rdp", None) is fn:
        prvs._compute_rdp = memo


@functools.lru_cache(maxsize=65536)
def _rdp_epsilon(
    sigma: float, q: float, steps: int, delta: float, orders: tuple[float, ...]
) -> float:
    import warnings

    from opacus.accountants import RDPAccountant

    _memoise_opacus_rdp()
    acc = RDPAccountant()
    _opacus_history(acc, sigma, q, steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "optimal order is the largest alpha"
        return float(acc.get_epsilon(delta, alphas=list(orders)))


@functools.lru_cache(maxsize=65536)
def _prv(
    sigma: float, q: float, steps: int, delta: float, eps_error: float
) -> tuple[float, float, float]:
    from opacus.accountants import PRVAccountant

    _memoise_opacus_rdp()
    acc = PRVAccountant()
    _opacus_history(acc, sigma, q, steps)
    delta_error = delta / 1000
    dprv = acc._get_dprv(eps_error=eps_error, delta_error=delta_error)
    lo, est, hi = dprv.compute_epsilon(delta, delta_error, eps_error)
    return float(lo), float(est), float(hi)


def gaussian_epsilon(
    noise_multiplier: float,
    steps: int,
    delta: float,
    *,
    sampling_rate: float = 1.0,
    method: Method = "pld",
    pld_discretization: float = 1e-4,
    prv_eps_error: float = 0.01,
    rdp_orders: tuple[float, ...] = DEFAULT_RDP_ORDERS,
) -> AccountingResult:
    """ε at δ of ``steps`` (Poisson-subsampled) Gaussian releases with noise multiplier σ.

    ``method`` picks the accountant (``docs/modules.md``); the result's ``kind`` says whether the
    number is exact, an upper bound, or an estimate. ``pld_discretization`` is dp_accounting's
    ``value_discretization_interval``; ``prv_eps_error`` opacus' ``eps_error``; ``rdp_orders``
    the Rényi orders the RDP conversion minimises over.
    """
    _check(noise_multiplier, sampling_rate, steps, delta, method)
    kind: Kind
    if method == "exact":
        eps = float(epsilon_for_delta(delta, noise_multiplier / math.sqrt(steps)))
        kind = "exact"
    elif method == "pld":
        eps, kind = (
            _pld_epsilon(noise_multiplier, sampling_rate, steps, delta, pld_discretization),
            "bound",
        )
    elif method == "rdp":
        eps, kind = (
            _rdp_epsilon(noise_multiplier, sampling_rate, steps, delta, tuple(rdp_orders)),
            "bound",
        )
    else:
        eps, kind = _prv(noise_multiplier, sampling_rate, steps, delta, prv_eps_error)[2], "bound"
    return AccountingResult(eps, delta, kind, method, noise_multiplier, sampling_rate, int(steps))


def prv_estimate(
    noise_multiplier: float,
    steps: int,
    delta: float,
    *,
    sampling_rate: float = 1.0,
    eps_error: float = 0.01,
) -> tuple[AccountingResult, AccountingResult, AccountingResult]:
    """opacus PRV's (lower bound, estimate, upper bound) on ε at δ: kinds "bound", "estimate",
    "bound" (the lower one bounds ε from below, the upper one from above)."""
    _check(noise_multiplier, sampling_rate, steps, delta, "prv")
    lo, est, hi = _prv(noise_multiplier, sampling_rate, steps, delta, eps_error)

    def mk(e: float, kind: Kind, name: str) -> AccountingResult:
        return AccountingResult(e, delta, kind, name, noise_multiplier, sampling_rate, int(steps))

    return (
        mk(lo, "bound", "prv-lower"),
        mk(est, "estimate", "prv-estimate"),
        mk(hi, "bound", "prv-upper"),
    )


@functools.lru_cache(maxsize=4096)
def calibrate_noise_multiplier(
    target_epsilon: float,
    delta: float,
    steps: int,
    *,
    sampling_rate: float = 1.0,
    method: Method = "pld",
    epsilon_tolerance: float = 0.01,
    rdp_orders: tuple[float, ...] = DEFAULT_RDP_ORDERS,
    pld_discretization: float = 1e-4,
    prv_eps_error: float = 0.01,
) -> float:
    """The noise multiplier σ whose ε at δ after ``steps`` lies in ``[target − tol, target]``.

    ``method``: the accountant that measures ε (:func:`gaussian_epsilon`); the σ returned never
    gives more than ``target_epsilon`` under it (the searches: ``docs/modules.md``). Cached.
    """
    if not target_epsilon > 0:
        raise ConfigError("target_epsilon", target_epsilon, "must lie in (0, inf)")
    if not epsilon_tolerance > 0:
        raise ConfigError("epsilon_tolerance", epsilon_tolerance, "must lie in (0, inf)")
    _check(1.0, sampling_rate, steps, delta, method)
    if method == "exact":
        return float(math.sqrt(steps) * analytic_sigma(target_epsilon, delta))
    kw = {"sampling_rate": sampling_rate, "rdp_orders": tuple(rdp_orders)}

    def eps_at(sigma: float, how: Method) -> float:
        return gaussian_epsilon(
            sigma,
            steps,
            delta,
            method=how,
            pld_discretization=pld_discretization,
            prv_eps_error=prv_eps_error,
            **kw,  # type: ignore[arg-type]
        ).epsilon

    if method == "rdp":
        return _opacus_bisection(lambda s: eps_at(s, "rdp"), target_epsilon, epsilon_tolerance)
    sigma_rdp = calibrate_noise_multiplier(
        target_epsilon,
        delta,
        steps,
        method="rdp",
        epsilon_tolerance=epsilon_tolerance / 4,
        **kw,  # type: ignore[arg-type]
    )
    return _illinois_below(
        lambda s: eps_at(s, method) - target_epsilon, sigma_rdp, epsilon_tolerance
    )


def _opacus_bisection(eps_at: Callable[[float], float], target: float, tol: float) -> float:
    """opacus' ``get_noise_multiplier`` search, step for step (so its σ, bit for bit): double σ
    from 20 until ε ≤ target, then bisect from ``[0, σ]`` until ``target − ε(σ) ≤ tol``."""
    sigma_low, sigma_high = 0.0, 10.0
    eps_high = math.inf
    while eps_high > target:
        sigma_high = 2 * sigma_high
        eps_high = eps_at(sigma_high)
        if sigma_high > MAX_NOISE_MULTIPLIER:
            raise ConfigError(
                "target_epsilon",
                target,
                f"unreachable with noise multiplier <= {MAX_NOISE_MULTIPLIER:g}",
            )
    while target - eps_high > tol:
        sigma = (sigma_low + sigma_high) / 2
        eps = eps_at(sigma)
        if eps < target:
            sigma_high, eps_high = sigma, eps
        else:
            sigma_low = sigma
    return sigma_high


def _illinois_below(excess: Callable[[float], float], hi: float, tol: float) -> float:
    """The σ with ``−tol ≤ excess(σ) ≤ 0`` for ``excess = ε(σ) − target`` decreasing in σ,
    searched from the guess ``hi`` (widened by 1.1 until it meets the target) and ``0.85 hi``
    (lowered by 0.85 until it does not): Illinois steps (regula falsi halving the stale end; ε(σ)
    is smooth and monotone), keeping the upper end, which always meets the target."""
    f_hi = excess(hi)
    while f_hi > 0:  # the tighter accountant's margin (PRV's eps_error) can exceed RDP's slack
        hi *= 1.1
        f_hi = excess(hi)
    lo = 0.85 * hi  # PRV's σ is within a few % of RDP's at these budgets (cl note §7.6)
    f_lo = excess(lo)
    while f_lo <= 0:
        hi, f_hi, lo = lo, f_lo, lo * 0.85
        f_lo = excess(lo)
    side = 0
    while -f_hi > tol and hi - lo > 1e-9 * hi:
        mid = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        if not lo < mid < hi:
            mid = (lo + hi) / 2
        f_mid = excess(mid)
        if f_mid <= 0:
            hi, f_hi = mid, f_mid
            if side == -1:
                f_lo /= 2
            side = -1
        else:
            lo, f_lo = mid, f_mid
            if side == 1:
                f_hi /= 2
            side = 1
    return hi
