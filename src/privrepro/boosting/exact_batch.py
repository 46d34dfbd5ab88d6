"""Exact accounting of many Gaussian-kernel PB-DP mechanisms at once.

The same computation as :mod:`privrepro.boosting.exact` (the hockey-stick and Rényi divergences
of the two boosted output densities, eq. 2 of the pb paper, maximised over the region's
neighbouring pairs in both orders), written on arrays: one row per mechanism (σ, ρ, Δ, region),
so that the design searches of :mod:`privrepro.boosting.exact_design` evaluate hundreds of
mechanisms per numpy call. Gaussian kernel only (the pb experiments' kernel).

A pair's divergences are closed forms on its five pieces (:mod:`privrepro.boosting.pair_pieces`).

The pairs are :meth:`privrepro.boosting.regions.Region.exact_pairs`' (the tests hold the two
modules equal to 1e-12). The only error is floating point (Gaussian CDFs accurate in both tails);
for the relative and fixed regions the worst pair is the maximum over ``n_pairs`` positions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from privrepro.boosting._roots import smallest_epsilon
from privrepro.boosting.batch import gaussian_epsilon_batch
from privrepro.boosting.kernels import _interval_mass_std_normal
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.pair_pieces import (
    DeltaTerms,
    Pieces,
    pair_deltas,
    pair_renyi,
    pick_rows,
    prepare_pieces,
    take_pairs,
)
from privrepro.boosting.regions import AbsoluteRegion, FixedRegion, RelativeRegion
from privrepro.boosting.worst_pairs import (
    RDP_STEP,
    STEP,
    check_query_domain,
    golden_max,
    pair_starts,
    relative_reach_dp,
    relative_reach_rdp,
    relative_start_range,
    relative_tail_delta,
    relative_tail_rdp,
    tail_applies,
)
from privrepro.config import ConfigError

__all__ = [
    "GaussianPBBatch",
    "boosting_rate_batch",
    "min_coverage_batch",
    "pair_grid",
]

Array = NDArray[np.float64]
CASES = ("absolute", "relative", "fixed")


def pair_grid(
    case: str,
    sensitivity: Array,
    size: Array,
    n_pairs: int,
    sigma: Array | None = None,
    theta: float | Array = 0.05,
) -> tuple[Array, Array]:
    """The searched neighbouring pairs ``(c, c')`` of each mechanism, both orders: ``[N, 2K]``.

    The starts of :func:`privrepro.boosting.worst_pairs.pair_starts` (the relative region's
    reach needs the kernel's ``sigma``; default ``|S|/2``, only for looking at the grid).
    """
    d = np.asarray(sensitivity, float)
    w = np.broadcast_to(np.asarray(size, float), d.shape)
    s = w / 2 if sigma is None else np.broadcast_to(np.asarray(sigma, float), d.shape)
    th = np.broadcast_to(np.asarray(theta, float), d.shape)
    if case not in CASES:
        raise ConfigError("case", case, f"must be one of {list(CASES)}")
    starts, dist = pair_starts(case, s, d, w, th, n_pairs)
    c, c2 = starts, starts + dist[:, None]
    return np.concatenate([c, c2], axis=1), np.concatenate([c2, c], axis=1)


def _domain(case: str, domain: Sequence[float] | None, d: Array, w: Array) -> tuple[Array, Array]:
    """``(lo, hi)`` of the query domain per mechanism (``±inf`` for none), checked first."""
    n = len(d)
    if domain is None:
        return np.full(n, -np.inf), np.full(n, np.inf)
    check_query_domain(domain, float(np.max(d)))
    lo, hi = float(domain[0]), float(domain[1])
    if case == "fixed" and not (np.all(hi > -w / 2) and np.all(lo < w / 2)):
        half = float(np.min(w)) / 2
        raise ConfigError(
            "query_domain", [lo, hi], f"must overlap the fixed region [{-half!r}, {half!r}]"
        )
    return np.full(n, lo), np.full(n, hi)


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

    ``sigma``, ``q``, ``sensitivity``, ``size`` (``|S| = 2τ``), ``theta``: ``[N]``; ``starts``:
    the searched pairs ``(s, s + d)`` (``[N, K]``, :func:`~privrepro.boosting.worst_pairs.
    pair_starts`), ``d`` their distance; ``pieces``: the densities of those pairs in both orders
    (``P = 2K``); ``domain_lo, domain_hi``: the query's domain (``±inf``: the real line). Build
    it with :meth:`build` (or :meth:`from_mechanism`).
    """

    case: str
    sigma: Array
    q: Array
    sensitivity: Array
    size: Array
    theta: Array
    n_pairs: int
    starts: Array
    d: Array
    pieces: Pieces
    reach: Array
    domain_lo: Array
    domain_hi: Array

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
        q: ArrayLike | None = None,
        *,
        domain: Sequence[float] | None = None,
    ) -> GaussianPBBatch:
        """Mechanisms ``(σ, ρ, Δ, |S|)`` (broadcast to one length ``N``) of region ``case``
        (``|S| = 2τ``; a fixed region ``[−|S|/2, |S|/2]``; θ of a relative region);
        ``n_pairs``: the starts searched near 0 (relative) or the fewest grid starts (fixed);
        ``q``: the boosting rate where the caller has it (default eq. 3 from ρ); ``domain``:
        ``[lo, hi]`` of the query's true values (default ``None``, the real line; in the fixed
        region's frame; no effect on the absolute region, translation invariant), checked by
        :func:`~privrepro.boosting.worst_pairs.check_query_domain` (a fixed region must also
        meet it)."""
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
        lo, hi = _domain(case, domain, d, w)
        if q is None:
            qq = boosting_rate_batch(min_coverage_batch(case, s, w), r)
        else:
            qq = np.ascontiguousarray(np.broadcast_to(np.asarray(q, float), s.shape))
        reach = relative_reach_dp(s, d, w / 2)
        starts, dist = pair_starts(case, s, d, w, th, int(n_pairs), reach, domain=(lo, hi))
        pieces = prepare_pieces(case, s, qq, w, th, starts, starts + dist[:, None])
        return cls(case, s, qq, d, w, th, int(n_pairs), starts, dist, pieces, reach, lo, hi)

    @classmethod
    def from_mechanism(
        cls, mech: BoostedMechanism, sensitivity: float, n_pairs: int = 9, copies: int = 1
    ) -> GaussianPBBatch:
        """``copies`` rows of one Gaussian-kernel mechanism (any region of the paper; a fixed
        region ``[τ_l, τ_u]`` is translated to ``[−|S|/2, |S|/2]``, which changes no divergence)."""
        region = mech.region
        domain = None if mech.domain is None else [float(v) for v in mech.domain]
        if isinstance(region, AbsoluteRegion):
            case, size, theta = "absolute", 2 * region.tau, 0.0
        elif isinstance(region, RelativeRegion):
            case, size, theta = "relative", 2 * region.tau, region.theta
        elif isinstance(region, FixedRegion):
            case, size, theta = "fixed", region.size(), 0.0
            if domain is not None:  # into the frame of [−|S|/2, |S|/2]
                mid = 0.5 * (region.lower + region.upper)
                domain = [domain[0] - mid, domain[1] - mid]
        else:
            raise ConfigError("region", type(region).__name__, f"must be one of {list(CASES)}")
        ones = np.ones(int(copies))
        return cls.build(
            case,
            mech.kernel.scale * ones,
            mech.rho * ones,
            sensitivity * ones,
            size * ones,
            theta * ones,
            n_pairs,
            q=mech.q * ones,
            domain=domain,
        )

    def __len__(self) -> int:
        return len(self.sigma)

    def _rows(self, rows: slice) -> GaussianPBBatch:
        p = self.pieces
        return GaussianPBBatch(
            self.case,
            self.sigma[rows],
            self.q[rows],
            self.sensitivity[rows],
            self.size[rows],
            self.theta[rows],
            self.n_pairs,
            self.starts[rows],
            self.d[rows],
            Pieces(p.lo[rows], p.hi[rows], p.a[rows], p.b[rows], p.c[rows], p.c2[rows]),
            self.reach[rows],
            self.domain_lo[rows],
            self.domain_hi[rows],
        )

    def starts_for(self, reach: Array, step: float = STEP) -> Array:
        """The searched starts of these mechanisms' pairs out to ``z_C = reach`` at ``step``
        kernel scales, inside their query domain
        (:func:`~privrepro.boosting.worst_pairs.pair_starts`)."""
        starts, _ = pair_starts(
            self.case,
            self.sigma,
            self.sensitivity,
            self.size,
            self.theta,
            self.n_pairs,
            reach,
            step,
            domain=(self.domain_lo, self.domain_hi),
        )
        return starts

    @cached_property
    def _terms(self) -> DeltaTerms:
        """The ε-free part of the searched pairs' δ (kept: a root search reads it many times)."""
        return DeltaTerms.of(self.pieces, self.sigma)

    def _with_reach(self, reach: Array) -> GaussianPBBatch:
        """The same mechanisms with the relative search reaching ``z_C = reach``."""
        starts = self.starts_for(reach)
        pieces = prepare_pieces(
            self.case, self.sigma, self.q, self.size, self.theta, starts, starts + self.d[:, None]
        )
        return replace(self, starts=starts, pieces=pieces, reach=np.asarray(reach, float))

    def _at(self, start: Array) -> Pieces:
        """The pieces of the pairs ``(s, s + d)`` for one start per mechanism, both orders."""
        st = np.asarray(start, float)[:, None]
        return prepare_pieces(
            self.case, self.sigma, self.q, self.size, self.theta, st, st + self.d[:, None]
        )

    def delta(self, epsilon: ArrayLike) -> Array:
        """The exact profile ``δ(ε)`` of each mechanism at its own ``ε`` (``[N]``, broadcast),
        any real ε: the largest over the searched pairs and, for a relative region, the bound
        on every pair beyond the search's reach (:mod:`privrepro.boosting.worst_pairs`)."""
        eps = np.broadcast_to(np.asarray(epsilon, float), self.sigma.shape)
        out = np.max(self._terms.at(eps), axis=-1)
        if self.case == "relative":
            tail = relative_tail_delta(eps, self.sigma, self.sensitivity, self.q, self.reach)
            out = np.maximum(out, np.where(self._tail_on(self.reach), tail, 0.0))
        return np.asarray(out)

    def _delta_rows(self, epsilon: Array, rows: NDArray[np.intp]) -> Array:
        """:meth:`delta` of the mechanisms ``rows`` only, at their ε (``[len(rows)]``)."""
        out = np.max(self._terms.rows(rows).at(epsilon), axis=-1)
        if self.case == "relative":
            tail = relative_tail_delta(
                epsilon,
                self.sigma[rows],
                self.sensitivity[rows],
                self.q[rows],
                self.reach[rows],
            )
            out = np.maximum(out, np.where(self._tail_on(self.reach)[rows], tail, 0.0))
        return np.asarray(out)

    def _tail_on(self, reach: Array) -> NDArray[np.bool_]:
        """Where the relative search's starts reach past ``reach`` (the tail bound counts)."""
        _, up = relative_start_range(self.sensitivity, self.domain_lo, self.domain_hi)
        return tail_applies(self.sigma, self.size / 2, self.theta, reach, up)

    def _refine_start(self, values: Array, f: Callable[[Array], Array]) -> tuple[Array, Array]:
        """The start maximising ``f`` in the grid cells around the grid's worst start
        (``values``: ``[N, 2K]``, both orders) and around the worst start above 0 (a relative
        region's far grid: its first cell, from 0 to one grid step, can hide a peak above the
        whole grid while the worst grid start is the mirror-symmetric pair near 0): per bracket
        a scan of :data:`SCAN` points, then golden section around the best of them (a pair's δ
        can jump where a misaligned piece's loss passes ε, so the scan comes first)."""
        k = self.starts.shape[1]
        per_start = np.maximum(values[:, :k], values[:, k:])
        j_all = np.argmax(per_start, axis=1)
        above = self.starts > 0
        j_far = np.where(
            np.any(above, axis=1), np.argmax(np.where(above, per_start, -np.inf), axis=1), j_all
        )
        best_x, best_f = self._refine_around(j_all, f)
        far_x, far_f = self._refine_around(j_far, f)
        better = far_f > best_f
        return np.where(better, far_x, best_x), np.where(better, far_f, best_f)

    def _refine_around(
        self, j: NDArray[np.intp], f: Callable[[Array], Array]
    ) -> tuple[Array, Array]:
        """Scan and golden section between the grid neighbours of start ``j`` of each row."""
        k = self.starts.shape[1]
        rows = np.arange(len(j))
        lo = self.starts[rows, np.maximum(j - 1, 0)]
        hi = self.starts[rows, np.minimum(j + 1, k - 1)]
        t = np.linspace(0.0, 1.0, SCAN)
        best_x, best_f = lo.copy(), np.full(len(j), -np.inf)
        for ti in t:
            x = lo + ti * (hi - lo)
            v = f(x)
            better = v > best_f
            best_x, best_f = np.where(better, x, best_x), np.where(better, v, best_f)
        step = (hi - lo) / (SCAN - 1)
        x, v = golden_max(f, np.maximum(best_x - step, lo), np.minimum(best_x + step, hi))
        better = v > best_f
        return np.where(better, x, best_x), np.where(better, v, best_f)

    def worst_delta(self, epsilon: ArrayLike) -> Array:
        """:meth:`delta` with the worst start refined at each mechanism's ε (the profile the
        report reads at a single ε; :meth:`epsilon` refines the same way)."""
        eps = np.broadcast_to(np.asarray(epsilon, float), self.sigma.shape)
        out = self.delta(eps)
        if self.starts.shape[1] < 2:
            return out

        def f(st: Array) -> Array:
            return np.asarray(np.max(pair_deltas(self._at(st), self.sigma, eps), axis=-1))

        _, refined = self._refine_start(self._terms.at(eps), f)
        return np.asarray(np.maximum(out, refined))

    def _coarse_epsilon(self, level: Array, xtol: float) -> tuple[Array, Array]:
        """ε of :meth:`delta` (every searched pair, the tail bound) and every pair's δ there.

        On a large batch the root is found on an active set of pairs: the few worst at the
        kernel's own ε, then, while any pair exceeds the level at the root, the worst of them
        added and the root found again. The result is the same as on every pair: the root of a
        subset is at most the full root, and at it no pair of the full set exceeds the level.
        """
        n, p = self.pieces.a.shape[:2]
        if n * p * 5 <= ACTIVE_SET_CELLS:
            eps = smallest_epsilon(self.delta, level, xtol, rows=self._delta_rows)
            return eps, self._terms.at(eps)
        probe = gaussian_epsilon_batch(self.sensitivity / self.sigma, level)
        values = self._terms.at(probe)
        idx = np.argsort(-values, axis=1)[:, :ACTIVE_START]
        eps = np.zeros(n)
        todo = np.arange(n)
        for _ in range(p):
            pieces = pick_rows(self.pieces, todo)
            sig, lev = self.sigma[todo], level[todo]
            sub = DeltaTerms.of(take_pairs(pieces, idx[todo]), sig)
            tail = (
                (
                    self.sensitivity[todo],
                    self.q[todo],
                    self.reach[todo],
                    self._tail_on(self.reach)[todo],
                )
                if self.case == "relative"
                else None
            )

            def fn(e: Array, sub: DeltaTerms = sub, sig: Array = sig, tail=tail) -> Array:  # type: ignore[no-untyped-def]
                out = np.max(sub.at(e), axis=-1)
                if tail is not None:
                    bound = relative_tail_delta(e, sig, tail[0], tail[1], tail[2])
                    out = np.maximum(out, np.where(tail[3], bound, 0.0))
                return np.asarray(out)

            def fn_rows(
                e: Array, i: NDArray[np.intp], sub: DeltaTerms = sub, sig: Array = sig, tail=tail
            ) -> Array:  # type: ignore[no-untyped-def]
                out = np.max(sub.rows(i).at(e), axis=-1)
                if tail is not None:
                    bound = relative_tail_delta(e, sig[i], tail[0][i], tail[1][i], tail[2][i])
                    out = np.maximum(out, np.where(tail[3][i], bound, 0.0))
                return np.asarray(out)

            eps[todo] = smallest_epsilon(fn, lev, xtol, rows=fn_rows)
            values[todo] = (
                self._terms.at(eps) if len(todo) == n else pair_deltas(pieces, sig, eps[todo])
            )
            order = np.argsort(-values[todo], axis=1)[:, :ACTIVE_STEP]
            over = values[todo, order[:, 0]] > lev * (1 + 1e-12)
            if not np.any(over):
                break
            grow = np.repeat(idx[:, :1], ACTIVE_STEP, axis=1)
            grow[todo] = order
            idx = np.concatenate([idx, grow], axis=1)
            todo = todo[over]
        return eps, values

    def epsilon(self, delta: ArrayLike, xtol: float = 1e-10) -> Array:
        """The smallest ``ε ≥ 0`` with exact ``δ(ε) ≤ delta``, for each mechanism (``[N]``): on
        the searched pairs (and the tail bound), then at the worst start refined at that ε,
        repeated at the new ε until it stops rising (at most :data:`ROUNDS` times)."""
        level = np.broadcast_to(np.asarray(delta, float), self.sigma.shape).copy()
        if self.case == "relative":
            z = self.sensitivity / self.sigma - special.ndtri(TAIL_SHARE * level)
            return self._with_reach(np.maximum(z, self.size / (2 * self.sigma)))._epsilon(
                level, xtol
            )
        return self._epsilon(level, xtol)

    def _epsilon(self, level: Array, xtol: float) -> Array:
        eps, values = self._coarse_epsilon(level, xtol)
        if self.starts.shape[1] < 2:
            return eps
        for _ in range(ROUNDS):
            at = eps

            def f(st: Array, at: Array = at) -> Array:
                return np.asarray(np.max(pair_deltas(self._at(st), self.sigma, at), axis=-1))

            best, _ = self._refine_start(values, f)
            terms = DeltaTerms.of(self._at(best), self.sigma)

            def refined(e: Array, terms: DeltaTerms = terms) -> Array:
                return np.asarray(np.max(terms.at(e), axis=-1))

            def refined_rows(e: Array, i: NDArray[np.intp], terms: DeltaTerms = terms) -> Array:
                return np.asarray(np.max(terms.rows(i).at(e), axis=-1))

            new = np.maximum(eps, smallest_epsilon(refined, level, xtol, rows=refined_rows))
            rose = new > eps + xtol
            eps = new
            if not np.any(rose):
                break
            values = self._terms.at(eps)
        return np.asarray(eps)

    def renyi(self, alpha: ArrayLike) -> Array:
        """The exact Rényi divergence of order ``alpha > 1`` of each mechanism: the largest over
        pairs searched up to the order's own reach, the worst start refined, and (relative
        region) the bound beyond the reach."""
        al = np.broadcast_to(np.asarray(alpha, float), self.sigma.shape)
        if np.any(al <= 1):
            raise ConfigError("alpha", float(al[al <= 1].flat[0]), "must lie in (1, inf)")
        if self.case != "relative":
            return self._renyi_on(self.starts, al)
        reach = relative_reach_rdp(self.sigma, self.sensitivity, self.size / 2, self.q, al)
        starts = self.starts_for(reach, RDP_STEP)
        out = self._renyi_on(starts, al, reach)
        tail = relative_tail_rdp(al, self.sigma, self.sensitivity, self.q, reach)
        return np.asarray(np.maximum(out, np.where(self._tail_on(reach), tail, -np.inf)))

    def _renyi_on(self, starts: Array, al: Array, reach: Array | None = None) -> Array:
        """Largest Rényi divergence over ``starts`` (both orders), refined around the worst;
        computed in row blocks of bounded size."""
        n, k = starts.shape
        reach = self.reach if reach is None else reach
        block = max(1, CELLS // (2 * k * 5))
        out = np.empty(n)
        for i in range(0, n, block):
            rows = slice(i, min(n, i + block))
            sub = replace(self._rows(rows), starts=starts[rows], reach=reach[rows])
            a = al[rows]
            sp = sub.sigma
            pieces = prepare_pieces(
                sub.case, sp, sub.q, sub.size, sub.theta, sub.starts, sub.starts + sub.d[:, None]
            )
            values = pair_renyi(pieces, sp, a)
            best = np.max(values, axis=-1)
            if k > 1:

                def f(st: Array, sub: GaussianPBBatch = sub, a: Array = a) -> Array:
                    return np.asarray(np.max(pair_renyi(sub._at(st), sub.sigma, a), axis=-1))

                _, refined = sub._refine_start(values, f)
                best = np.maximum(best, refined)
            out[rows] = best
        return out


ACTIVE_SET_CELLS = 100_000
"""Above this many cells (mechanism × pair × piece) :meth:`GaussianPBBatch.epsilon` finds its
root on an active set of pairs."""
ACTIVE_START = 6
"""Pairs of the first active set."""
ACTIVE_STEP = 3
"""Pairs added to the active set per round (the worst at the last root)."""
TAIL_SHARE = 1e-4
"""At level δ the relative search reaches ``z_C = Δ/σ + Φ̄⁻¹(TAIL_SHARE · δ)``: the tail bound's
mass term is ``TAIL_SHARE · δ``, so where it decides, ε exceeds the kernel's own (the pairs'
limit) by the ε-change of a ``1e-4`` relative change of δ."""
SCAN = 7
"""Points of the scan between the worst grid start's neighbours, before golden section."""
ROUNDS = 2
"""Refinements of the worst start of :meth:`GaussianPBBatch.epsilon`, each at the ε the last
one gave (the worst start at ε* maximises δ at ε*: a fixed point, reached in one or two)."""
CELLS = 2_000_000
"""Array cells (mechanism × pair × piece) of one block of the Rényi search."""
