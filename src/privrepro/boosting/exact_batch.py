"""Exact accounting of many Gaussian-kernel PB-DP mechanisms at once.

The same computation as :mod:`privrepro.boosting.exact` (the hockey-stick and Rényi divergences
of the two boosted output densities, eq. 2 of the pb paper, maximised over the region's
neighbouring pairs in both orders), written on arrays: one row per mechanism (σ, ρ, Δ, region),
so that the design searches of :mod:`privrepro.boosting.exact_design` evaluate hundreds of
mechanisms per numpy call. Gaussian kernel only (the pb experiments' kernel).

For a pair of true values ``(c, c')`` the line is cut at the four region ends into five pieces;
on piece ``i`` the densities are ``a_i φ_σ(y − c)`` and ``b_i φ_σ(y − c')`` with constant
factors (``1`` or ``1 − q`` over the normaliser ``1 − p̄(c) q``). On a piece the log-likelihood
ratio ``log(a_i/b_i) − (d/σ²)(y − (c + c')/2)``, ``d = c' − c``, is monotone, so

* ``δ(ε) = Σ_i [a_i P_σ(I_i − c) − e^ε b_i P_σ(I_i − c')]`` where ``I_i`` is the part of the
  piece on which the ratio exceeds ``e^ε`` (closed form in Gaussian CDFs);
* ``D_α = log Σ_i a_i^α b_i^{1−α} e^{α(α−1)d²/(2σ²)} P_σ(piece − (αc + (1 − α)c'))/(α − 1)``.

The pairs are :meth:`privrepro.boosting.regions.Region.exact_pairs`' (the tests hold the two
modules equal to 1e-12). The only error is floating point (Gaussian CDFs accurate in both tails);
for the relative and fixed regions the worst pair is the maximum over ``n_pairs`` positions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from privrepro.boosting._roots import smallest_epsilon
from privrepro.boosting.kernels import _interval_mass_std_normal, log_interval_mass_std_normal
from privrepro.config import ConfigError

__all__ = [
    "GaussianPBBatch",
    "boosting_rate_batch",
    "min_coverage_batch",
    "pair_grid",
]

Array = NDArray[np.float64]
CASES = ("absolute", "relative", "fixed")


def pair_grid(case: str, sensitivity: Array, size: Array, n_pairs: int) -> tuple[Array, Array]:
    """The neighbouring pairs ``(c, c')`` of each mechanism, both orders: arrays ``[N, P]``.

    absolute: ``(0, Δ)``; relative: ``(s, s + Δ)`` for ``n_pairs`` starts ``s`` in ``[−Δ, 0]``;
    fixed ``[−|S|/2, |S|/2]``: ``(s, s + d)``, ``d = min(Δ, |S|)``, starts in ``[τ_l, τ_u − d]``
    (as :meth:`~privrepro.boosting.regions.Region.exact_pairs`).
    """
    d = np.asarray(sensitivity, float)[:, None]
    if case == "absolute":
        c, c2 = np.zeros_like(d), d.copy()
    elif case == "relative":
        t = np.linspace(0.0, 1.0, n_pairs)[None, :]
        c = -d + t * d
        c2 = c + d
    elif case == "fixed":
        w = np.asarray(size, float)[:, None]
        dd = np.minimum(d, w)
        t = np.linspace(0.0, 1.0, n_pairs)[None, :]
        c = -w / 2 + t * (w - dd)
        c2 = c + dd
    else:
        raise ConfigError("case", case, f"must be one of {list(CASES)}")
    return np.concatenate([c, c2], axis=1), np.concatenate([c2, c], axis=1)


def _bounds(case: str, c: Array, tau: Array, theta: Array) -> tuple[Array, Array]:
    if case == "absolute":
        return c - tau, c + tau
    if case == "relative":
        r = theta * np.abs(c) + tau
        return c - r, c + r
    return np.broadcast_to(-tau, c.shape), np.broadcast_to(tau, c.shape)


def min_coverage_batch(case: str, sigma: Array, size: Array) -> Array:
    """The kernel's smallest coverage ``p_S`` (at ``Q = 0`` around the query; at the edge ``τ_l``
    of a fixed region)."""
    s, w = np.asarray(sigma, float), np.asarray(size, float)
    if case == "fixed":
        return np.asarray(special.ndtr(w / s) - 0.5)
    return np.asarray(_interval_mass_std_normal(-w / (2 * s), w / (2 * s)))


COVERAGE_ROUNDING = 1e-12
"""A coverage within this (relative) of ρ counts as meeting it: σ_G = τ/Φ⁻¹((1+ρ)/2) gives
``p = ρ`` up to rounding, and must give ``q = 0`` exactly (the Gaussian itself)."""


def boosting_rate_batch(p_min: Array, rho: Array) -> Array:
    """Eq. (3): ``q = (ρ − p)/(ρ(1 − p))`` where the kernel misses ρ, else 0 (the Gaussian)."""
    p, r = np.asarray(p_min, float), np.asarray(rho, float)
    misses = r - p > COVERAGE_ROUNDING * r
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(misses, (r - p) / (r * (1.0 - p)), 0.0)
    return np.asarray(np.clip(q, 0.0, 1.0))


@dataclass(frozen=True)
class GaussianPBBatch:
    """``N`` PB-DP mechanisms with Gaussian kernels, prepared for exact accounting.

    Arrays ``[N, P, 5]`` (mechanism, pair, piece): the piece ends ``lo, hi``, the factors
    ``a, b`` of the two output densities, the centres ``c, c2``; ``sigma`` and ``q`` are ``[N]``.
    Build it with :meth:`build`.
    """

    sigma: Array
    q: Array
    lo: Array
    hi: Array
    a: Array
    b: Array
    c: Array
    c2: Array

    @classmethod
    def build(
        cls,
        case: str,
        sigma: ArrayLike,
        rho: ArrayLike,
        sensitivity: ArrayLike,
        size: ArrayLike,
        theta: ArrayLike = 0.05,
        n_pairs: int = 9,
    ) -> GaussianPBBatch:
        """Mechanisms ``(σ, ρ, Δ, |S|)`` (broadcast to one length ``N``) of region ``case``
        (``|S| = 2τ``; a fixed region ``[−|S|/2, |S|/2]``; θ of a relative region)."""
        if case not in CASES:
            raise ConfigError("case", case, f"must be one of {list(CASES)}")
        if int(n_pairs) != n_pairs or n_pairs < 1:
            raise ConfigError("n_pairs", n_pairs, "must be an integer >= 1")
        arrays = np.broadcast_arrays(
            *(np.atleast_1d(np.asarray(x, float)) for x in (sigma, rho, sensitivity, size, theta))
        )
        s, r, d, w, th = (np.ascontiguousarray(x) for x in arrays)
        if np.any(~(s > 0)) or np.any(~np.isfinite(s)):
            raise ConfigError(
                "sigma", float(s[~(s > 0) | ~np.isfinite(s)][0]), "must lie in (0, inf)"
            )
        q = boosting_rate_batch(min_coverage_batch(case, s, w), r)
        c, c2 = pair_grid(case, d, w, int(n_pairs))  # [N, P]
        tau, thp, sp, qp = (x[:, None] for x in (w / 2, th, s, q))
        lo1, hi1 = _bounds(case, c, tau, thp)
        lo2, hi2 = _bounds(case, c2, tau, thp)

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
        return cls(s, q, lo, hi, a, b, c[..., None], c2[..., None])

    def __len__(self) -> int:
        return len(self.sigma)

    def delta(self, epsilon: ArrayLike) -> Array:
        """The worst-case exact profile ``δ(ε)`` of each mechanism at its own ``ε`` (``[N]``,
        broadcast), any real ε."""
        eps = np.broadcast_to(np.asarray(epsilon, float), self.sigma.shape)[:, None, None]
        s = self.sigma[:, None, None]
        d = self.c2 - self.c
        m = 0.5 * (self.c + self.c2)
        pos_a, pos_b = self.a > 0, self.b > 0
        with np.errstate(divide="ignore"):
            log_ratio = np.where(
                pos_a & pos_b,
                np.log(np.where(pos_a, self.a, 1.0)) - np.log(np.where(pos_b, self.b, 1.0)),
                0.0,
            )
        # P − e^ε Q > 0 where the log-ratio exceeds ε: below y* when c < c', above it otherwise
        y_star = m - (s * s / d) * (eps - log_ratio)
        y_star = np.where(pos_b, y_star, np.where(d > 0, np.inf, -np.inf))
        top = np.where(d > 0, np.minimum(self.hi, y_star), self.hi)
        bot = np.where(d > 0, self.lo, np.maximum(self.lo, y_star))
        ok = (top > bot) & pos_a
        top = np.where(ok, top, bot)
        mass_p = _interval_mass_std_normal((bot - self.c) / s, (top - self.c) / s)
        mass_q = _interval_mass_std_normal((bot - self.c2) / s, (top - self.c2) / s)
        with np.errstate(over="ignore", invalid="ignore"):
            contrib = self.a * mass_p - np.exp(eps) * np.where(pos_b, self.b, 0.0) * mass_q
        contrib = np.where(ok & np.isfinite(contrib), np.maximum(contrib, 0.0), 0.0)
        return np.asarray(np.max(contrib.sum(axis=-1), axis=-1))

    def epsilon(self, delta: ArrayLike, xtol: float = 1e-10) -> Array:
        """The smallest ``ε ≥ 0`` with exact ``δ(ε) ≤ delta``, for each mechanism (``[N]``)."""
        level = np.broadcast_to(np.asarray(delta, float), self.sigma.shape).copy()
        return smallest_epsilon(self.delta, level, xtol)

    def renyi(self, alpha: ArrayLike) -> Array:
        """The worst-case exact Rényi divergence of order ``alpha > 1`` of each mechanism."""
        al = np.broadcast_to(np.asarray(alpha, float), self.sigma.shape)[:, None, None]
        if np.any(al <= 1):
            raise ConfigError("alpha", float(al[al <= 1].flat[0]), "must lie in (1, inf)")
        s = self.sigma[:, None, None]
        d = self.c2 - self.c
        centre = al * self.c + (1 - al) * self.c2
        with np.errstate(divide="ignore"):
            base = al * np.log(self.a) + (1 - al) * np.log(self.b)
        shift = al * (al - 1) * d * d / (2 * s * s)
        logs = (
            base
            + shift
            + log_interval_mass_std_normal((self.lo - centre) / s, (self.hi - centre) / s)
        )
        logs = np.where(self.a > 0, logs, -np.inf)
        # a piece where Q has no mass and P has some makes the divergence infinite
        infinite = np.any((self.a > 0) & (self.b <= 0) & (self.hi > self.lo), axis=-1)
        out = special.logsumexp(logs, axis=-1) / (al[..., 0] - 1)
        out = np.where(infinite, np.inf, out)
        return np.asarray(np.max(out, axis=-1))
