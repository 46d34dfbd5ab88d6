"""The two boosted output densities of a pair of true values on their common pieces, and their divergences.

For a pair ``(c, c')`` the line is cut at the four region ends into five pieces; on piece ``i``
the densities are ``a_i φ_σ(y − c)`` and ``b_i φ_σ(y − c')`` (pb paper, eq. 2), so the
hockey-stick divergence (:func:`pair_deltas`, :class:`DeltaTerms`) and the Rényi divergence
(:func:`pair_renyi`) of every pair are closed forms in Gaussian CDFs, on arrays ``[N, P, 5]``
(:class:`Pieces`, built by :func:`prepare_pieces`). :mod:`privrepro.boosting.exact_batch`
maximises them over a region's pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import special

from privrepro.boosting.kernels import _interval_mass_std_normal, log_interval_mass_std_normal

__all__ = [
    "DeltaTerms",
    "Pieces",
    "pair_deltas",
    "pair_renyi",
    "pick_rows",
    "prepare_pieces",
    "region_bounds",
    "take_pairs",
]

Array = NDArray[np.float64]


def region_bounds(case: str, c: Array, tau: Array, theta: Array) -> tuple[Array, Array]:
    """The ends of the region around each true value ``c`` (half-width ``tau``; ``theta`` the
    relative part): ``c ± tau`` (absolute), ``c ± (theta |c| + tau)`` (relative), ``±tau`` (fixed)."""
    if case == "absolute":
        return c - tau, c + tau
    if case == "relative":
        r = theta * np.abs(c) + tau
        return c - r, c + r
    return np.broadcast_to(-tau, c.shape), np.broadcast_to(tau, c.shape)


@dataclass(frozen=True)
class Pieces:
    """The two output densities of pairs ``(c, c')`` on their five common pieces: arrays
    ``[N, P, 5]`` (piece ends ``lo, hi``, factors ``a, b``) and the centres ``c, c2``
    (``[N, P, 1]``)."""

    lo: Array
    hi: Array
    a: Array
    b: Array
    c: Array
    c2: Array


def pick_rows(p: Pieces, rows: NDArray[np.intp]) -> Pieces:
    """The mechanisms ``rows``."""
    return Pieces(p.lo[rows], p.hi[rows], p.a[rows], p.b[rows], p.c[rows], p.c2[rows])


def take_pairs(p: Pieces, idx: NDArray[np.intp]) -> Pieces:
    """The pairs ``idx`` (``[N, m]``) of each mechanism."""

    def one(x: Array) -> Array:
        return np.take_along_axis(x, np.broadcast_to(idx[..., None], (*idx.shape, x.shape[-1])), 1)

    return Pieces(one(p.lo), one(p.hi), one(p.a), one(p.b), one(p.c), one(p.c2))


def prepare_pieces(
    case: str, sigma: Array, q: Array, size: Array, theta: Array, c: Array, c_next: Array
) -> Pieces:
    """The pieces of the pairs ``(c, c_next)`` (``[N, K]``) in both orders (``P = 2K``)."""
    c, c2 = np.concatenate([c, c_next], axis=1), np.concatenate([c_next, c], axis=1)
    tau, thp, sp, qp = (x[:, None] for x in (size / 2, theta, sigma, q))
    lo1, hi1 = region_bounds(case, c, tau, thp)
    lo2, hi2 = region_bounds(case, c2, tau, thp)

    def normaliser(cc: Array, lo: Array, hi: Array) -> Array:
        cover = _interval_mass_std_normal((lo - cc) / sp, (hi - cc) / sp)
        return np.asarray(1.0 - (1.0 - cover) * qp)

    z1, z2 = normaliser(c, lo1, hi1), normaliser(c2, lo2, hi2)
    ends = np.sort(np.stack([lo1, hi1, lo2, hi2], axis=-1), axis=-1)  # [N, P, 4]
    inf = np.full((*ends.shape[:-1], 1), np.inf)
    edges = np.concatenate([-inf, ends, inf], axis=-1)  # [N, P, 6]
    lo, hi = edges[..., :-1], edges[..., 1:]
    mid = np.concatenate(
        [ends[..., :1] - 1.0, 0.5 * (ends[..., :-1] + ends[..., 1:]), ends[..., -1:] + 1.0],
        axis=-1,
    )
    one_minus_q = (1.0 - q)[:, None, None]
    inside1 = (mid >= lo1[..., None]) & (mid <= hi1[..., None])
    inside2 = (mid >= lo2[..., None]) & (mid <= hi2[..., None])
    a = np.where(inside1, 1.0, one_minus_q) / z1[..., None]
    b = np.where(inside2, 1.0, one_minus_q) / z2[..., None]
    return Pieces(lo, hi, a, b, c[..., None], c2[..., None])


def _log_ratio(p: Pieces) -> tuple[NDArray[np.bool_], NDArray[np.bool_], Array]:
    """Where each density is positive, and ``log(a_i / b_i)`` per piece (0 where either is 0)."""
    pos_a, pos_b = p.a > 0, p.b > 0
    with np.errstate(divide="ignore"):
        log_ratio = np.where(
            pos_a & pos_b,
            np.log(np.where(pos_a, p.a, 1.0)) - np.log(np.where(pos_b, p.b, 1.0)),
            0.0,
        )
    return pos_a, pos_b, log_ratio


def pair_deltas(p: Pieces, sigma: Array, epsilon: Array) -> Array:
    """``δ(ε)`` of every pair (``[N, P]``) at each mechanism's ε (``[N]``), computed once
    (:class:`DeltaTerms` holds the ε-free part for pairs evaluated at many ε: same numbers)."""
    eps = np.asarray(epsilon, float)[:, None, None]
    s = sigma[:, None, None]
    d = p.c2 - p.c
    m = 0.5 * (p.c + p.c2)
    pos_a, pos_b, log_ratio = _log_ratio(p)
    # P − e^ε Q > 0 where the log-ratio exceeds ε: below y* when c < c', above it otherwise
    y_star = m - (s * s / d) * (eps - log_ratio)
    y_star = np.where(pos_b, y_star, np.where(d > 0, np.inf, -np.inf))
    top = np.where(d > 0, np.minimum(p.hi, y_star), p.hi)
    bot = np.where(d > 0, p.lo, np.maximum(p.lo, y_star))
    ok = (top > bot) & pos_a
    top = np.where(ok, top, bot)
    mass_p = _interval_mass_std_normal((bot - p.c) / s, (top - p.c) / s)
    mass_q = _interval_mass_std_normal((bot - p.c2) / s, (top - p.c2) / s)
    with np.errstate(over="ignore", invalid="ignore"):
        contrib = p.a * mass_p - np.exp(eps) * np.where(pos_b, p.b, 0.0) * mass_q
    contrib = np.where(ok & np.isfinite(contrib), np.maximum(contrib, 0.0), 0.0)
    return np.asarray(contrib.sum(axis=-1))


@dataclass(frozen=True)
class DeltaTerms:
    """The part of :func:`pair_deltas` that does not depend on ε, for pairs whose δ is read at
    many ε (a root search): ``at(ε)`` gives the same numbers with two Gaussian CDFs per piece
    instead of four.

    On a piece the set where the loss exceeds ε is cut by ``y*(ε)`` at one end only: the top
    when ``c < c'`` (the bottom fixed at the piece's ``lo``), the bottom otherwise (the top
    fixed at ``hi``). The CDFs at the fixed end, ``Φ(±x)``, are kept; the mirrored difference
    of :func:`~privrepro.boosting.kernels._interval_mass_std_normal` is then formed from them
    and the one CDF at the moving end, the same floating-point operations as there.
    """

    p: Pieces
    s: Array
    up: NDArray[np.bool_]
    m: Array
    scale: Array
    log_ratio: Array
    pos_a: NDArray[np.bool_]
    pos_b: NDArray[np.bool_]
    b: Array
    fixed_p: tuple[Array, Array, Array]
    fixed_q: tuple[Array, Array, Array]

    @classmethod
    def of(cls, p: Pieces, sigma: Array) -> DeltaTerms:
        s = sigma[:, None, None]
        d = p.c2 - p.c
        pos_a, pos_b, log_ratio = _log_ratio(p)
        up = np.broadcast_to(d > 0, p.lo.shape)
        end = np.where(up, p.lo, p.hi)

        def fixed(c: Array) -> tuple[Array, Array, Array]:
            x = (end - c) / s
            return x, special.ndtr(x), special.ndtr(-x)

        return cls(
            p,
            s,
            up,
            0.5 * (p.c + p.c2),
            s * s / d,
            log_ratio,
            pos_a,
            pos_b,
            np.where(pos_b, p.b, 0.0),
            fixed(p.c),
            fixed(p.c2),
        )

    def rows(self, idx: NDArray[np.intp]) -> DeltaTerms:
        """The mechanisms ``idx`` only."""
        fp, fq = self.fixed_p, self.fixed_q
        return DeltaTerms(
            pick_rows(self.p, idx),
            self.s[idx],
            self.up[idx],
            self.m[idx],
            self.scale[idx],
            self.log_ratio[idx],
            self.pos_a[idx],
            self.pos_b[idx],
            self.b[idx],
            (fp[0][idx], fp[1][idx], fp[2][idx]),
            (fq[0][idx], fq[1][idx], fq[2][idx]),
        )

    def at(self, epsilon: Array) -> Array:
        """``δ(ε)`` of every pair (``[N, P]``) at each mechanism's ε (``[N]``)."""
        p, s, up = self.p, self.s, self.up
        eps = np.asarray(epsilon, float)[:, None, None]
        y_star = self.m - self.scale * (eps - self.log_ratio)
        y_star = np.where(self.pos_b, y_star, np.where(up, np.inf, -np.inf))
        top = np.where(up, np.minimum(p.hi, y_star), p.hi)
        bot = np.where(up, p.lo, np.maximum(p.lo, y_star))
        ok = (top > bot) & self.pos_a
        moving = np.where(up, np.where(ok, top, bot), bot)

        def mass(c: Array, fixed: tuple[Array, Array, Array]) -> Array:
            x_fixed, f_pos, f_neg = fixed
            x = (moving - c) / s
            # the mirror of the interval mass: both ends above 0 (the bottom decides)
            upper = np.where(up, x_fixed > 0, x > 0)
            v = special.ndtr(np.where(upper, -x, x))
            return np.where(
                up, np.where(upper, f_neg - v, v - f_pos), np.where(upper, v - f_neg, f_pos - v)
            )

        mass_p, mass_q = mass(p.c, self.fixed_p), mass(p.c2, self.fixed_q)
        with np.errstate(over="ignore", invalid="ignore"):
            contrib = p.a * mass_p - np.exp(eps) * self.b * mass_q
        contrib = np.where(ok & np.isfinite(contrib), np.maximum(contrib, 0.0), 0.0)
        return np.asarray(contrib.sum(axis=-1))


def pair_renyi(p: Pieces, sigma: Array, alpha: Array) -> Array:
    """``D_α`` of every pair (``[N, P]``) at each mechanism's α (``[N]``)."""
    al = np.asarray(alpha, float)[:, None, None]
    s = sigma[:, None, None]
    d = p.c2 - p.c
    centre = al * p.c + (1 - al) * p.c2
    with np.errstate(divide="ignore", invalid="ignore"):  # a = 0 or b = 0: masked below
        base = al * np.log(p.a) + (1 - al) * np.log(p.b)
    shift = al * (al - 1) * d * d / (2 * s * s)
    logs = base + shift + log_interval_mass_std_normal((p.lo - centre) / s, (p.hi - centre) / s)
    logs = np.where(p.a > 0, logs, -np.inf)
    # a piece where Q has no mass and P has some makes the divergence infinite
    infinite = np.any((p.a > 0) & (p.b <= 0) & (p.hi > p.lo), axis=-1)
    out = special.logsumexp(logs, axis=-1) / (al[..., 0] - 1)
    return np.asarray(np.where(infinite, np.inf, out))
