"""Composition and calibration of (subsampled) Gaussian mechanisms through reference accountants.

One interface over four methods, each result saying what kind of number it is:

* ``"exact"`` — closed form, no subsampling only: T releases of N(0, σ²) with sensitivity 1 are
  one Gaussian with μ = √T/σ (``dp.gaussian``). Kind ``"exact"``.
* ``"pld"`` — Google's dp_accounting privacy-loss-distribution accountant (the reference;
  pessimistic discretisation, so its ε is an upper bound up to floating point). Kind ``"bound"``.
* ``"rdp"`` — opacus' RDP accountant (Mironov 2017; Poisson-subsampled Gaussian, Mironov, Talwar &
  Zhang 2019), converted to (ε, δ) with opacus' conversion over a grid of orders. Kind ``"bound"``.
* ``"prv"`` — opacus' PRV accountant (Gopi, Lee & Wutschitz 2021). ``get_epsilon`` returns its
  upper end (kind ``"bound"``); ``prv_estimate`` its central estimate (kind ``"estimate"``).

The mechanism is DP-SGD's: ``steps`` releases of a Gaussian with noise multiplier σ (noise std
over ℓ2-sensitivity) on a Poisson subsample with rate q, under add/remove-one neighbours (the
relation all three libraries use by default). Calibration (σ for a target ε) is cached in memory.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Literal

from privrepro.config import ConfigError
from privrepro.dp.gaussian import analytic_sigma, epsilon_for_delta

__all__ = [
    "AccountingResult",
    "Method",
    "calibrate_noise_multiplier",
    "gaussian_epsilon",
    "prv_estimate",
]

Method = Literal["exact", "pld", "rdp", "prv"]
METHODS: tuple[str, ...] = ("exact", "pld", "rdp", "prv")
Kind = Literal["exact", "bound", "estimate"]

DEFAULT_RDP_ORDERS: tuple[float, ...] = tuple(
    [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)) + [80, 128, 256, 512]
)
"""opacus' default orders (1.1 … 10.9, 12 … 63) plus a few large ones for small δ."""


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


def _rdp_epsilon(
    sigma: float, q: float, steps: int, delta: float, orders: tuple[float, ...]
) -> float:
    from opacus.accountants import RDPAccountant

    acc = RDPAccountant()
    _opacus_history(acc, sigma, q, steps)
    return float(acc.get_epsilon(delta, alphas=list(orders)))


def _prv(
    sigma: float, q: float, steps: int, delta: float, eps_error: float
) -> tuple[float, float, float]:
    from opacus.accountants import PRVAccountant

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

    ``method`` picks the accountant (module docstring); the result's ``kind`` says whether the
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
    rel_tol: float = 1e-4,
) -> float:
    """The smallest noise multiplier σ (to ``rel_tol``) whose ε at δ is ≤ ``target_epsilon``.

    "exact" (no subsampling) is closed form: σ = √T · analytic σ(ε, δ). The others bisect on
    ``gaussian_epsilon`` in log σ and return the upper end of the final bracket, so the returned
    σ always meets the target under that accountant. Results are cached (same arguments, same
    answer).
    """
    if not target_epsilon > 0:
        raise ConfigError("target_epsilon", target_epsilon, "must lie in (0, inf)")
    _check(1.0, sampling_rate, steps, delta, method)
    if method == "exact":
        return float(math.sqrt(steps) * analytic_sigma(target_epsilon, delta))

    def eps_at(s: float) -> float:
        return gaussian_epsilon(s, steps, delta, sampling_rate=sampling_rate, method=method).epsilon

    # The no-subsampling analytic σ is a good first guess; bracket by doubling/halving.
    guess = max(
        float(math.sqrt(steps) * analytic_sigma(target_epsilon, delta)) * math.sqrt(sampling_rate),
        1e-3,
    )
    lo, hi = guess, guess
    while eps_at(hi) > target_epsilon:
        hi *= 2.0
        if hi > 1e8:
            raise ConfigError("target_epsilon", target_epsilon, "unreachable with sigma <= 1e8")
    while lo > 1e-3 and eps_at(lo) <= target_epsilon:
        lo /= 2.0
    while hi / lo - 1.0 > rel_tol:
        mid = math.sqrt(lo * hi)
        if eps_at(mid) <= target_epsilon:
            hi = mid
        else:
            lo = mid
    return hi
