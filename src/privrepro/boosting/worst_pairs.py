"""Where the worst neighbouring pair of PB-DP lies: the pairs the exact accounting searches and
the closed-form bound on every pair beyond them (pb paper, Sec. 4; Gaussian kernel).

The exact ε is the supremum over every pair of true values ``|c − c'| ≤ Δ``, both orders, taken
at ``d = Δ`` (``min(Δ, |S|)`` in a fixed region). Absolute region: one pair (translation
invariance). Fixed region: a grid of starts in ``S``, refined around the worst. Relative region:
starts ``s ≥ −Δ/2`` (mirror symmetry) near 0 and on a grid of step :data:`STEP` in the region
end's distance ``z = (θs + τ)/σ`` up to a reach ``z_C``, refined around the worst; beyond the
reach :func:`relative_tail_delta` and :func:`relative_tail_rdp` bound every pair. A query domain
``[lo, hi]`` keeps the pairs inside it (:func:`relative_start_range`).

Proofs (where the supremum lies, the tail bounds, the domain's start interval): docs/pb.md,
"Proofs of the exact accountant".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from privrepro.boosting.gaussian_mu import gaussian_delta_mu
from privrepro.config import ConfigError

__all__ = [
    "DP_REACH",
    "FIXED_STARTS",
    "RDP_REACH_LOG",
    "RDP_STEP",
    "STEP",
    "check_query_domain",
    "golden_max",
    "pair_starts",
    "relative_reach_dp",
    "relative_reach_rdp",
    "relative_start_range",
    "relative_tail_delta",
    "relative_tail_rdp",
    "tail_applies",
]

Array = NDArray[np.float64]
STEP = 0.5
"""Grid step of the relative region's search for δ, in kernel scales of the region end's
distance (a pair's δ can rise sharply where a misaligned piece's loss passes ε)."""
RDP_STEP = 1.0
"""The same for Rényi, whose far term is a Gaussian bump of unit width in those scales."""
DP_REACH = 9.5
"""``z_C − Δ/σ`` for δ: the misaligned piece's mass beyond the reach is below ``Φ̄(9.5) ≈ 1e-21``."""
RDP_REACH_LOG = 35.0
"""For Rényi, ``(α − 1)L₂ + log Φ̄(z_C − αΔ/σ) ≤ −35``: the tail term adds at most ``e⁻³⁵/(α−1)``."""
FIXED_STARTS = 9
"""Fewest grid starts of a fixed region's pairs before refinement."""
MAX_GRID = 4000
"""A guard on the relative grid's length (a reach this far is never needed at |S|, Δ, σ of the
paper's figures; the bound beyond the reach stays valid whatever the grid)."""
REFINE_STEPS = 16
"""Golden-section steps refining the worst start (the bracket, two scan steps, shrinks by
0.618¹⁶ ≈ 5e-4)."""


def _q_loss(q: Array) -> Array:
    with np.errstate(divide="ignore"):
        return np.asarray(-np.log1p(-np.minimum(q, 1.0)))


def relative_reach_dp(sigma: Array, sensitivity: Array, tau: Array) -> Array:
    """``z_C`` of the δ search: ``max(τ/σ, Δ/σ + DP_REACH)``."""
    return np.asarray(np.maximum(tau / sigma, sensitivity / sigma + DP_REACH))


def relative_reach_rdp(
    sigma: Array, sensitivity: Array, tau: Array, q: Array, alpha: Array
) -> Array:
    """``z_C`` of the Rényi search at order α: ``max(τ/σ, αΔ/σ + √(2(35 + (α − 1)L₂)))``
    (``Φ̄(x) ≤ e^{−x²/2}``)."""
    l2 = np.minimum(_q_loss(q), 1e6)
    x = np.sqrt(2.0 * (RDP_REACH_LOG + (alpha - 1.0) * l2))
    return np.asarray(np.maximum(tau / sigma, alpha * sensitivity / sigma + x))


def check_query_domain(domain: Any, sensitivity: float, key: str = "query_domain") -> None:
    """``ConfigError`` unless ``domain`` is ``None`` (the real line) or ``[lo, hi]``: two finite
    numbers, ``lo < hi``, with the neighbouring distance ``sensitivity`` fitting inside
    (``hi − lo ≥ Δ``: some neighbouring pair lies in the domain)."""
    if domain is None:
        return
    allowed = (
        f"must be null (the real line) or [lo, hi], finite, lo < hi, hi - lo >= Δ = {sensitivity!r}"
    )
    items = list(domain) if isinstance(domain, (list, tuple)) else None
    if items is None or len(items) != 2:
        raise ConfigError(key, domain, allowed)
    lo, hi = items
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items)
    if not numbers or not (math.isfinite(lo) and math.isfinite(hi)) or not hi - lo >= sensitivity:
        raise ConfigError(key, items, allowed)


def relative_start_range(sensitivity: Array, lo: Array, hi: Array) -> tuple[Array, Array]:
    """``[L, U]``: the starts ``s ≥ −d/2`` whose pairs ``(s, s + d)``, both orders, are those of
    the domain ``[lo, hi]`` up to the mirror ``y ↦ −y``: ``L = −d/2 + max(0, lo + d/2, d/2 − hi)``,
    ``U = max(hi, −lo) − d`` (docs/pb.md, "Proofs of the exact accountant"); ``[N]`` each,
    ``[−d/2, ∞)`` on the real line."""
    d = np.asarray(sensitivity, float)
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    low = -d / 2 + np.maximum(0.0, np.maximum(lo + d / 2, d / 2 - hi))
    return np.asarray(low), np.asarray(np.maximum(hi, -lo) - d)


def tail_applies(
    sigma: Array, tau: Array, theta: Array, reach: Array, upper: Array
) -> NDArray[np.bool_]:
    """Where the bound beyond the reach ``z_C`` is needed: the relative starts reach past
    ``C = (σ z_C − τ)/θ`` (``upper``: ``U`` of :func:`relative_start_range`; always on a
    domain unbounded on a side)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        c = (sigma * reach - tau) / theta
    return np.asarray(np.isinf(upper) | ~(upper <= c))


def pair_starts(
    case: str,
    sigma: Array,
    sensitivity: Array,
    size: Array,
    theta: Array,
    n_near: int,
    reach: Array | None = None,
    step: float = STEP,
    *,
    domain: tuple[Array, Array] | None = None,
) -> tuple[Array, Array]:
    """The starts ``s`` of the searched pairs ``(s, s + d)`` of each mechanism (``[N, K]``,
    ascending) and the distance ``d`` (``[N]``); the module docstring says which.

    Args:
        case: ``absolute``, ``relative`` or ``fixed`` (a fixed region ``[−|S|/2, |S|/2]``).
        sigma, sensitivity, size, theta: ``[N]`` (``|S| = 2τ``).
        n_near: starts in ``[−Δ/2, 0]`` (relative) or the fewest grid starts (fixed).
        reach: ``z_C`` of the relative search (default :func:`relative_reach_dp`).
        step: the relative grid's step in ``z``.
        domain: ``(lo, hi)`` (``[N]`` each, ``±inf`` for an open side) of the query's true
            values, in the frame of the fixed region ``[−|S|/2, |S|/2]``; default the real line.
            Ignored by the absolute region (translation invariant).
    """
    d = np.asarray(sensitivity, float)
    n = len(d)
    if case == "absolute":
        return np.zeros((n, 1)), d
    lo, hi = (np.full(n, -np.inf), np.full(n, np.inf)) if domain is None else domain
    lo, hi = (
        np.broadcast_to(np.asarray(lo, float), (n,)),
        np.broadcast_to(np.asarray(hi, float), (n,)),
    )
    if case == "fixed":
        w = np.asarray(size, float)
        a, b = np.maximum(-w / 2, lo), np.minimum(w / 2, hi)
        width = b - a
        dd = np.minimum(d, width)
        t = np.linspace(0.0, 1.0, max(int(n_near), FIXED_STARTS))[None, :]
        return a[:, None] + t * (width - dd)[:, None], dd
    s, tau, th = np.asarray(sigma, float), np.asarray(size, float) / 2, np.asarray(theta, float)
    low, up = relative_start_range(d, lo, hi)
    near_lo = np.maximum(-d / 2, low)
    near_hi = np.maximum(near_lo, np.minimum(0.0, up))
    t = np.linspace(0.0, 1.0, int(n_near))[None, :]
    if np.all(th <= 0):  # translation invariant: every pair is the same
        near = near_lo[:, None] + (near_hi - near_lo)[:, None] * t
        return np.clip(near, low[:, None], up[:, None]), d
    z0 = tau / s
    zc = relative_reach_dp(s, d, tau) if reach is None else np.maximum(reach, z0)
    with np.errstate(divide="ignore", invalid="ignore"):
        # a domain whose starts all lie beyond 0 (L > 0): the near points spread over its
        # searched starts instead, so that the refinement has a bracket at every grid point
        top = np.minimum(up, np.where(th > 0, (s * zc - tau) / th, np.inf))
        spread = (near_hi <= near_lo) & np.isfinite(top)
        near_hi = np.where(spread, np.maximum(near_lo, top), near_hi)
        near = near_lo[:, None] + (near_hi - near_lo)[:, None] * t
        za = np.where(low > 0, (th * low + tau) / s, z0)
        zb = np.minimum(zc, np.where(up > 0, (th * up + tau) / s, z0))
    span = np.where(th > 0, np.maximum(zb - za, 0.0), 0.0)
    count = int(min(max(math.ceil(float(span.max()) / step), 1), MAX_GRID))
    z = za[:, None] + span[:, None] * (np.arange(1, count + 1) / count)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        far = np.where(th[:, None] > 0, (s[:, None] * z - tau[:, None]) / th[:, None], 0.0)
    starts = np.clip(np.concatenate([near, far], axis=1), low[:, None], up[:, None])
    return starts, d


def relative_tail_delta(
    epsilon: Array, sigma: Array, sensitivity: Array, q: Array, reach: Array
) -> Array:
    """Bound on ``δ(ε)`` of every pair with ``s ≥ C`` (``z_C = reach``):
    ``[δ_σ(ε − ℓ) + Φ̄(z_C − Δ/σ)]/Z(C)``, ``Z(C) = 1 − 2qΦ̄(z_C)``, ``ℓ = −log Z(C)``, ``δ_σ`` the
    kernel's profile (proof: docs/pb.md, "Proofs of the exact accountant"); ``[N]``."""
    z_c = 1.0 - 2.0 * q * special.ndtr(-reach)
    ell = -np.log(z_c)
    mass = special.ndtr(-(reach - sensitivity / sigma))
    kernel = gaussian_delta_mu(np.asarray(epsilon, float) - ell, sensitivity / sigma)
    # q = 0 is the kernel itself (no misaligned weight anywhere): every pair is the kernel's
    return np.asarray(np.where(q > 0, np.minimum((kernel + mass) / z_c, 1.0), 0.0))


def relative_tail_rdp(
    alpha: Array, sigma: Array, sensitivity: Array, q: Array, reach: Array
) -> Array:
    """Bound on ``D_α`` of every pair with ``s ≥ C`` (``z_C = reach``):
    ``αΔ²/(2σ²) + αℓ/(α − 1) + log(1 + (1 − q)^{1−α} Φ̄(z_C − αΔ/σ))/(α − 1)`` (proof: docs/pb.md,
    "Proofs of the exact accountant"); ``[N]``."""
    z_c = 1.0 - 2.0 * q * special.ndtr(-reach)
    ell = -np.log(z_c)
    log_m = special.log_ndtr(-(reach - alpha * sensitivity / sigma))
    extra = np.logaddexp(0.0, (alpha - 1.0) * _q_loss(q) + log_m) / (alpha - 1.0)
    base = alpha * sensitivity**2 / (2 * sigma**2)
    return np.asarray(np.where(q > 0, base + alpha * ell / (alpha - 1.0) + extra, -np.inf))


def golden_max(
    f: Callable[[Array], Array], lo: Array, hi: Array, steps: int = REFINE_STEPS
) -> tuple[Array, Array]:
    """Maximise ``f`` (``[N] → [N]``) on each ``[lo, hi]`` by golden section; returns the best
    point evaluated and its value (a search: exact when ``f`` is unimodal on the bracket)."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = np.asarray(lo, float).copy(), np.asarray(hi, float).copy()
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, f2 = f(x1), f(x2)
    best_x = np.where(f1 >= f2, x1, x2)
    best_f = np.maximum(f1, f2)
    for _ in range(steps):
        right = f1 < f2  # the maximum lies in [x1, b]
        a = np.where(right, x1, a)
        b = np.where(right, b, x2)
        x_new = np.where(right, a + g * (b - a), b - g * (b - a))
        f_new = f(x_new)
        x1, f1, x2, f2 = (
            np.where(right, x2, x_new),
            np.where(right, f2, f_new),
            np.where(right, x_new, x1),
            np.where(right, f_new, f1),
        )
        better = f_new > best_f
        best_x, best_f = np.where(better, x_new, best_x), np.where(better, f_new, best_f)
    return best_x, best_f
