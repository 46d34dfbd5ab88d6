"""Exact accounting of PB-DP, computed from the two boosted output densities themselves.

For a pair of true values ``(c, c')`` the outputs of PB-DP have densities
``P(y) = a(y) f_M(y − c)`` and ``Q(y) = b(y) f_M(y − c')`` (pb paper, eq. 2) where ``a, b`` are
piecewise constant on the pieces cut by the four region ends. On each piece the log-likelihood
ratio of a symmetric log-concave kernel is monotone, so

* the hockey-stick divergence ``δ(ε) = ∫ (P − e^ε Q)_+`` is a sum over pieces of kernel-CDF
  differences up to the crossing point (closed form for Gaussian and Laplace kernels);
* the Rényi divergence of a Gaussian kernel is a sum over pieces of shifted-Gaussian masses
  (closed form, in log space); other kernels use adaptive quadrature per piece;
* the privacy-loss distribution is discretised pessimistically (losses rounded up) for
  composition with ``dp_accounting``.

The worst case is the supremum over every neighbouring pair of the query's domain (the real
line, the paper stating none; the fixed region's ``S``) in both orders: for the Gaussian kernel
the search of :mod:`privrepro.boosting.worst_pairs` with its closed-form bound beyond the
search's reach (run by :class:`~privrepro.boosting.exact_batch.GaussianPBBatch`); for another
kernel the maximum over :meth:`~privrepro.boosting.regions.Region.exact_pairs` (a search
without the tail bound). The only error is the
floating-point error of the CDFs (about 1e-16 absolute), so no bound on discretisation is needed
except for the composed PLD, where ``value_discretization_interval`` bounds it (pessimistic).

:func:`sound_delta` is the rigorous bound of the note (§2.2): since the boosting weights lie in
``[1 − q, 1]``, PB-DP is ``(ε₀ + L1 + L2, δ_Z(ε₀)/(1 − p̄ q))``-DP, pair by pair (no ``L2`` for a
fixed region).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate, special

from privrepro.boosting.kernels import GaussianKernel, Kernel, log_interval_mass_std_normal
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.worst_pairs import check_query_domain
from privrepro.config import ConfigError
from privrepro.dp.pld import DiscretePLD

__all__ = [
    "Pieces",
    "exact_delta",
    "exact_delta_pair",
    "exact_epsilon",
    "exact_pld",
    "exact_plds_connect_dots",
    "exact_rdp",
    "exact_renyi_pair",
    "first_crossing",
    "numeric_delta_pair",
    "pieces",
    "sound_delta",
    "sound_epsilon",
    "sound_rdp",
]


@dataclass(frozen=True)
class Pieces:
    """The two boosted densities of a pair on common pieces ``[edges[i], edges[i+1]]``.

    ``a[i]``, ``b[i]``: the constant factors of ``P`` and ``Q`` on piece ``i`` (weight/normaliser).
    ``c, c2``: the two true values (kernel centres).
    """

    edges: np.ndarray
    a: np.ndarray
    b: np.ndarray
    c: float
    c2: float


def pieces(mech: BoostedMechanism, c: float, c2: float) -> Pieces:
    """Cut the line at the region ends of both inputs; record eq. (2)'s factors on each piece."""
    lo1, hi1 = (float(v) for v in mech.region.bounds(c))
    lo2, hi2 = (float(v) for v in mech.region.bounds(c2))
    inner = np.unique([lo1, hi1, lo2, hi2])
    edges = np.concatenate([[-np.inf], inner, [np.inf]])
    mid = np.empty(len(edges) - 1)
    mid[0] = edges[1] - 1.0
    mid[-1] = edges[-2] + 1.0
    if len(mid) > 2:
        mid[1:-1] = 0.5 * (edges[1:-2] + edges[2:-1])
    q = mech.q
    z1, z2 = float(mech.normaliser(c)), float(mech.normaliser(c2))
    a = np.where((mid >= lo1) & (mid <= hi1), 1.0, 1.0 - q) / z1
    b = np.where((mid >= lo2) & (mid <= hi2), 1.0, 1.0 - q) / z2
    return Pieces(edges, a, b, float(c), float(c2))


def _mirror(p: Pieces) -> Pieces:
    return Pieces(-p.edges[::-1], p.a[::-1], p.b[::-1], -p.c, -p.c2)


def exact_delta_pair(
    mech: BoostedMechanism, c: float, c2: float, epsilon: float | np.ndarray
) -> np.ndarray:
    """``δ(ε) = ∫ (P − e^ε Q)_+`` with ``P`` the output at ``c`` and ``Q`` at ``c2`` (any real ε).

    Vectorised over pieces × ε: on piece ``i`` the integrand is positive exactly below the
    crossing ``y*`` of the kernel's log-ratio with ``ε − log(a_i/b_i)`` (above it if ``c > c2``,
    handled by mirroring), so the piece contributes ``a_i P_K[lo, y*] − e^ε b_i Q_K[lo, y*]``.
    """
    p = pieces(mech, c, c2)
    if p.c > p.c2:
        p = _mirror(p)
    total = _delta_from_pieces(mech.kernel, p, np.atleast_1d(np.asarray(epsilon, float)))
    return total if np.ndim(epsilon) else total[0]


def _delta_from_pieces(k: Kernel, p: Pieces, eps_vec: np.ndarray) -> np.ndarray:
    eps = eps_vec[None, :]
    lo = p.edges[:-1][:, None]
    hi = p.edges[1:][:, None]
    a = p.a[:, None]
    b = p.b[:, None]
    pos_a = a > 0
    pos_b = b > 0
    with np.errstate(divide="ignore"):
        log_ratio = np.where(
            pos_a & pos_b, np.log(np.where(pos_a, a, 1.0) / np.where(pos_b, b, 1.0)), 0.0
        )
    level = eps - log_ratio
    if p.c2 > p.c:
        y_star = k.crossing(p.c, p.c2, level)
    else:  # same centre: the ratio is the constant a/b
        y_star = np.where(level < 0, np.inf, -np.inf)
    y_star = np.where(pos_b, y_star, np.inf)  # Q has no mass here: all of P counts
    top = np.minimum(hi, y_star)
    ok = (top > lo) & pos_a
    topc = np.where(ok, top, lo)
    lo_b = np.broadcast_to(lo, topc.shape)
    mass_p = k.interval_mass(lo_b - p.c, topc - p.c)
    mass_q = k.interval_mass(lo_b - p.c2, topc - p.c2)
    with np.errstate(over="ignore", invalid="ignore"):
        contrib = a * mass_p - np.exp(eps) * np.where(pos_b, b, 0.0) * mass_q
    contrib = np.where(ok & np.isfinite(contrib), np.maximum(contrib, 0.0), 0.0)
    return np.asarray(contrib.sum(axis=0))


def _pairs(mech: BoostedMechanism, sensitivity: float, n_pairs: int) -> list[tuple[float, float]]:
    if mech.domain is not None:
        check_query_domain(list(mech.domain), sensitivity)
    pairs = mech.region.exact_pairs(
        sensitivity, n_pairs, scale=mech.kernel.scale, domain=mech.domain
    )
    return pairs + [(b, a) for a, b in pairs]


def _no_domain_off_gaussian(mech: BoostedMechanism) -> None:
    """A query domain is searched with the Gaussian kernel's bounds only."""
    if mech.domain is not None and not _gaussian(mech):
        raise ConfigError(
            "query_domain", list(mech.domain), "is supported with the Gaussian kernel only"
        )


def _gaussian(mech: BoostedMechanism) -> bool:
    return isinstance(mech.kernel, GaussianKernel)


def exact_profile(
    mech: BoostedMechanism, sensitivity: float, n_pairs: int = 9
) -> Callable[[np.ndarray], np.ndarray]:
    """The worst-case exact profile as a function of an ε array: for a Gaussian kernel the
    supremum over every neighbouring pair (:class:`~privrepro.boosting.exact_batch.
    GaussianPBBatch`: the searched pairs, the worst refined at each ε, the tail bound beyond);
    for another kernel the maximum over the searched pairs of :meth:`Region.exact_pairs`."""
    if _gaussian(mech):
        from privrepro.boosting.exact_batch import GaussianPBBatch

        def gaussian_profile(eps: np.ndarray) -> np.ndarray:
            e = np.atleast_1d(np.asarray(eps, float))
            batch = GaussianPBBatch.from_mechanism(mech, sensitivity, n_pairs, copies=len(e))
            return batch.worst_delta(e)

        return gaussian_profile
    _no_domain_off_gaussian(mech)
    prepared = []
    for a, b in _pairs(mech, sensitivity, n_pairs):
        p = pieces(mech, a, b)
        prepared.append(_mirror(p) if p.c > p.c2 else p)
    k = mech.kernel

    def profile(eps: np.ndarray) -> np.ndarray:
        e = np.atleast_1d(np.asarray(eps, float))
        return np.max(np.stack([_delta_from_pieces(k, p, e) for p in prepared]), axis=0)

    return profile


def exact_delta(
    mech: BoostedMechanism, sensitivity: float, epsilon: float | np.ndarray, n_pairs: int = 9
) -> Any:
    """Worst-case exact profile: the supremum of :func:`exact_delta_pair` over neighbouring
    pairs in both orders (:func:`exact_profile`)."""
    if _gaussian(mech):
        out = exact_profile(mech, sensitivity, n_pairs)(np.atleast_1d(np.asarray(epsilon, float)))
        return out if np.ndim(epsilon) else float(out[0])
    _no_domain_off_gaussian(mech)
    vals = [exact_delta_pair(mech, a, b, epsilon) for a, b in _pairs(mech, sensitivity, n_pairs)]
    return (
        np.max(np.stack([np.atleast_1d(v) for v in vals]), axis=0)
        if np.ndim(epsilon)
        else float(max(float(v) for v in vals))
    )


def first_crossing(delta_fn, delta: float, xtol: float = 1e-10, grid: int = 48) -> float:  # type: ignore[no-untyped-def]
    """Smallest ε ≥ 0 with ``delta_fn(ε) ≤ delta`` for a non-increasing, vectorised profile.

    The profile is evaluated on a grid of ``grid`` points at once, the bracket of the crossing is
    kept and refined the same way until it is narrower than ``xtol`` (each round shrinks it by a
    factor ``grid − 1``). Returns the upper end of the bracket (a point meeting ``delta``).
    """

    def f(e: np.ndarray) -> np.ndarray:
        return np.asarray(delta_fn(e), float)

    if float(f(np.array([0.0]))[0]) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while float(f(np.array([hi]))[0]) > delta:
        lo, hi = hi, hi * 4
        if hi > 1e6:
            return math.inf
    while hi - lo > xtol * max(1.0, hi):
        pts = np.linspace(lo, hi, grid)
        vals = f(pts)
        idx = int(np.argmax(vals <= delta))  # first grid point meeting δ (pts[-1] always does)
        lo, hi = float(pts[max(idx - 1, 0)]), float(pts[idx])
    return hi


def exact_epsilon(
    mech: BoostedMechanism, sensitivity: float, delta: float, n_pairs: int = 9, xtol: float = 1e-10
) -> float:
    """Smallest ε ≥ 0 with exact ``δ(ε) ≤ delta``: for a Gaussian kernel
    :meth:`~privrepro.boosting.exact_batch.GaussianPBBatch.epsilon` (the supremum over every
    neighbouring pair), else :func:`first_crossing` on the profile over the searched pairs."""
    if _gaussian(mech):
        from privrepro.boosting.exact_batch import GaussianPBBatch

        batch = GaussianPBBatch.from_mechanism(mech, sensitivity, n_pairs)
        return float(batch.epsilon(delta, xtol)[0])
    return first_crossing(exact_profile(mech, sensitivity, n_pairs), delta, xtol)


def numeric_delta_pair(mech: BoostedMechanism, c: float, c2: float, epsilon: float) -> float:
    """Adaptive quadrature of ``(P − e^ε Q)_+`` over each piece: an independent cross-check."""
    p = pieces(mech, c, c2)
    span = 40.0 * mech.kernel.scale + abs(c) + abs(c2)
    total = 0.0
    for i in range(len(p.a)):
        lo, hi = max(p.edges[i], -span), min(p.edges[i + 1], span)
        if hi <= lo:
            continue

        def f(y: float, i: int = i) -> float:
            pv = p.a[i] * float(mech.kernel.pdf(y - c))
            qv = p.b[i] * float(mech.kernel.pdf(y - c2))
            return max(pv - math.exp(epsilon) * qv, 0.0)

        val, _ = integrate.quad(
            f,
            lo,
            hi,
            limit=400,
            epsabs=1e-14,
            epsrel=1e-10,
            points=[c, c2] if lo < c < hi or lo < c2 < hi else None,
        )
        total += val
    return total


def exact_renyi_pair(mech: BoostedMechanism, c: float, c2: float, alpha: float) -> float:
    """Rényi divergence ``D_α(P ‖ Q)`` of the outputs at ``c`` and ``c2`` (α > 1)."""
    p = pieces(mech, c, c2)
    k = mech.kernel
    logs = []
    for i in range(len(p.a)):
        ai, bi = p.a[i], p.b[i]
        if ai <= 0:
            continue
        if bi <= 0:
            return math.inf
        lo, hi = p.edges[i], p.edges[i + 1]
        base = alpha * math.log(ai) + (1 - alpha) * math.log(bi)
        if isinstance(k, GaussianKernel):
            s = k.sigma
            m = alpha * c + (1 - alpha) * c2
            shift = alpha * (alpha - 1) * (c - c2) ** 2 / (2 * s * s)
            logs.append(
                base + shift + float(log_interval_mass_std_normal((lo - m) / s, (hi - m) / s))
            )
        else:
            centre = alpha * c + (1 - alpha) * c2
            ref = float(alpha * k.logpdf(centre - c) + (1 - alpha) * k.logpdf(centre - c2))

            def g(y: float, ref: float = ref) -> float:
                return math.exp(
                    float(alpha * k.logpdf(y - c) + (1 - alpha) * k.logpdf(y - c2)) - ref
                )

            span = 60.0 * k.scale + abs(c) + abs(c2) + abs(centre)
            val, _ = integrate.quad(
                g, max(lo, -span), min(hi, span), limit=400, epsabs=0, epsrel=1e-11
            )
            if val > 0:
                logs.append(base + ref + math.log(val))
    return float(special.logsumexp(logs) / (alpha - 1))


def exact_rdp(mech: BoostedMechanism, sensitivity: float, alpha: float, n_pairs: int = 9) -> float:
    """Worst-case exact Rényi divergence over neighbouring pairs, both orders: for a Gaussian
    kernel :meth:`~privrepro.boosting.exact_batch.GaussianPBBatch.renyi` (the supremum), else
    the maximum over the searched pairs."""
    if _gaussian(mech):
        from privrepro.boosting.exact_batch import GaussianPBBatch

        return float(GaussianPBBatch.from_mechanism(mech, sensitivity, n_pairs).renyi(alpha)[0])
    _no_domain_off_gaussian(mech)
    return max(exact_renyi_pair(mech, a, b, alpha) for a, b in _pairs(mech, sensitivity, n_pairs))


def sound_delta(
    mech: BoostedMechanism, sensitivity: float, epsilon: float | np.ndarray, n_pairs: int = 9
) -> np.ndarray:
    """The rigorous bound (note §2.2): ``max_pairs δ_Z(ε − L1 − L2) / (1 − p̄ q)``.

    ``L1 = log(Z'/Z)`` is the pair's exact normaliser ratio, ``L2 = −log(1 − q)`` (0 for a fixed
    region), ``δ_Z`` the kernel profile at the pair's distance. Every pair, both orders.
    """
    q = mech.q
    L2 = 0.0 if not mech.region.moves_with_query else (-math.log1p(-q) if q < 1 else math.inf)
    eps = np.asarray(epsilon, float)
    best = np.zeros_like(eps)
    for c, c2 in _pairs(mech, sensitivity, n_pairs):
        z1, z2 = float(mech.normaliser(c)), float(mech.normaliser(c2))
        d = abs(c2 - c)
        val = (
            mech.kernel.delta(eps - math.log(z2 / z1) - L2, sensitivity=d) / z1
            if d > 0
            else np.where(eps - math.log(z2 / z1) - L2 >= 0, 0.0, 1.0) / z1
        )
        best = np.maximum(best, np.minimum(val, 1.0))
    return best


def sound_epsilon(
    mech: BoostedMechanism, sensitivity: float, delta: float, n_pairs: int = 9
) -> float:
    """Smallest ε with :func:`sound_delta` ``≤ delta``."""
    return first_crossing(lambda e: sound_delta(mech, sensitivity, e, n_pairs), delta)


def exact_pld(
    mech: BoostedMechanism,
    c: float,
    c2: float,
    value_discretization_interval: float = 1e-3,
    tail_mass: float = 1e-15,
):  # type: ignore[no-untyped-def]
    """A pessimistic ``dp_accounting`` PLD of the pair: losses ``log P/Q`` under ``P`` rounded up
    to the grid, both orders (remove: ``P`` vs ``Q``; add: ``Q`` vs ``P``).

    Only Gaussian kernels (linear loss per piece) are supported. Each piece's loss range is cut
    where the remaining kernel tail is below ``tail_mass``; mass beyond the upper cut goes to
    ``infinity_mass`` (pessimistic), mass below the lower cut is rounded up to the cut.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    if not isinstance(mech.kernel, GaussianKernel):
        raise NotImplementedError("exact_pld supports the Gaussian kernel only")

    def one(ca: float, cb: float) -> tuple[dict[int, float], float]:
        p = pieces(mech, ca, cb)
        if p.c > p.c2:
            p = _mirror(p)
        s = mech.kernel.scale
        h = value_discretization_interval
        zcut = -special.ndtri(tail_mass)
        d = p.c2 - p.c
        pmf: dict[int, float] = {}
        chunks_k: list[np.ndarray] = []
        chunks_m: list[np.ndarray] = []
        inf_mass = 0.0
        for i in range(len(p.a)):
            ai, bi = p.a[i], p.b[i]
            if ai <= 0:
                continue
            lo = max(p.edges[i], p.c - zcut * s)
            hi = min(p.edges[i + 1], p.c + zcut * s)
            if hi <= lo:
                continue
            if bi <= 0:
                inf_mass += ai * float(mech.kernel.interval_mass(lo - p.c, hi - p.c))
                continue
            off = math.log(ai / bi)
            if d == 0:
                k_idx = math.ceil(off / h - 1e-12)
                pmf[k_idx] = pmf.get(k_idx, 0.0) + ai * float(
                    mech.kernel.interval_mass(lo - p.c, hi - p.c)
                )
                continue
            # loss(y) = off - (d/σ²)(y - (c+c2)/2): decreasing in y
            mid_c = (p.c + p.c2) / 2
            l_top, l_bot = off - (d / s**2) * (lo - mid_c), off - (d / s**2) * (hi - mid_c)
            k_hi, k_lo = math.ceil(l_top / h), math.ceil(l_bot / h)
            ks = np.arange(k_lo, k_hi + 1)
            # bucket k collects losses in ((k-1)h, kh]: y in [y(kh), y((k-1)h))
            y_left = np.clip(mid_c + (off - ks * h) * s**2 / d, lo, hi)
            y_right = np.clip(mid_c + (off - (ks - 1) * h) * s**2 / d, lo, hi)
            masses = ai * mech.kernel.interval_mass(y_left - p.c, y_right - p.c)
            chunks_k.append(ks)
            chunks_m.append(masses)
        if chunks_k:
            allk = np.concatenate(chunks_k)
            allm = np.concatenate(chunks_m)
            base = int(allk.min())
            acc = np.bincount(allk - base, weights=allm)
            for j in np.flatnonzero(acc > 0).tolist():
                pmf[base + j] = pmf.get(base + j, 0.0) + float(acc[j])
        return pmf, inf_mass

    pmf_r, inf_r = one(c, c2)
    pmf_a, inf_a = one(c2, c)
    return pld_lib.PrivacyLossDistribution.create_from_rounded_probability(
        pmf_r,
        inf_r,
        value_discretization_interval,
        pessimistic_estimate=True,
        rounded_probability_mass_function_add=pmf_a,
        infinity_mass_add=inf_a,
        symmetric=False,
    )


def exact_plds_connect_dots(
    mech: BoostedMechanism,
    c: float,
    c2: float,
    interval: float = 1e-2,
    tail_mass: float = 1e-15,
) -> tuple[DiscretePLD, DiscretePLD]:
    """The pair's two privacy-loss distributions (remove: ``P`` at ``c`` vs ``Q`` at ``c2``; add:
    the reverse), pessimistic connect-the-dots on the grid ``k · interval`` from the closed-form
    profile :func:`exact_delta_pair` (any kernel: only the profile is used).

    The grid of each direction runs from ``−ε_rev`` to ``ε_fwd``, where ``ε_fwd`` is the ε with
    profile ``tail_mass`` (what lies above goes to ``+∞``: at most ``tail_mass``) and ``ε_rev``
    the same for the other direction (the loss falls below ``−ε_rev`` with probability at most
    about ``tail_mass · e^{−ε_rev}``). See :mod:`privrepro.dp.pld` for the error.
    """
    from privrepro.dp.pld import from_profile

    def profile(a: float, b: float) -> Callable[[np.ndarray], np.ndarray]:
        return lambda e: np.asarray(exact_delta_pair(mech, a, b, e))

    fwd, rev = profile(c, c2), profile(c2, c)
    top_fwd, top_rev = first_crossing(fwd, tail_mass), first_crossing(rev, tail_mass)
    return (
        from_profile(fwd, interval, -top_rev, max(top_fwd, interval)),
        from_profile(rev, interval, -top_fwd, max(top_rev, interval)),
    )


def sound_rdp(mech: BoostedMechanism, sensitivity: float, alpha: float, n_pairs: int = 9) -> float:
    """Rigorous RDP bound from the weights' range ``[1 − q, 1]`` (same argument as §2.2):
    ``D_α ≤ ε₀(α) + L1 + L2 + log(1/Z)/(α − 1)`` per pair, ``Z = 1 − p̄ q`` of the first input
    (no ``L2`` for a fixed region, whose weights are the same function for both inputs)."""
    q = mech.q
    L2 = 0.0 if not mech.region.moves_with_query else (-math.log1p(-q) if q < 1 else math.inf)
    best = -math.inf
    for c, c2 in _pairs(mech, sensitivity, n_pairs):
        z1, z2 = float(mech.normaliser(c)), float(mech.normaliser(c2))
        val = (
            mech.kernel.rdp(alpha, abs(c2 - c))
            + math.log(z2 / z1)
            + L2
            - math.log(z1) / (alpha - 1)
        )
        best = max(best, val)
    return best
