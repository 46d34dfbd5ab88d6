"""Preferred output regions ``S(Q(X))`` of the three special cases (pb paper, Sec. 4).

* :class:`RelativeRegion` — data-dependent, relative error: ``|y − Q| ≤ θ|Q| + τ`` (Sec. 4.1).
* :class:`FixedRegion` — fixed output region ``[τ_l, τ_u]`` (Sec. 4.2).
* :class:`AbsoluteRegion` — data-independent, absolute error: ``|y − Q| ≤ τ`` (Sec. 4.3).

Each region gives its bounds at a true value, the kernel's coverage ``p_S(Q)`` there, the true
value that minimises the coverage (which sets the boosting rate, eq. 3), the paper's dominating
pair, the paper's extra-loss terms ``L1, L2, W1, W2`` (Props. 4, 5, 6 as printed) and the set of
neighbouring pairs over which the exact accounting takes its maximum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from privrepro.boosting.kernels import Kernel
from privrepro.boosting.worst_pairs import FIXED_STARTS, pair_starts
from privrepro.config import ConfigError

__all__ = [
    "AbsoluteRegion",
    "FixedRegion",
    "PaperTerms",
    "Region",
    "RelativeRegion",
    "boosting_rate",
    "make_region",
]


def boosting_rate(p_min: float, rho: float) -> float:
    """Boosting rate ``q`` (pb paper, eq. 3) from the smallest kernel coverage ``p_min``.

    ``q = 1/ρ + 1/p̄ − 1/(ρ p̄) = (ρ − p)/(ρ(1 − p))``; 0 when the kernel already meets ρ.
    """
    if not 0 < rho <= 1:
        raise ConfigError("rho", rho, "must lie in (0, 1]")
    if p_min >= rho:
        return 0.0
    if p_min >= 1.0:
        return 0.0
    return float((rho - p_min) / (rho * (1.0 - p_min)))


@dataclass(frozen=True)
class PaperTerms:
    """The extra losses and their probabilities of Theorem 1 / eq. (4), (6).

    Attributes:
        L1: ``log((1 − p̄' q)/(1 − p̄ q))``, the normalisation loss (eq. 4).
        L2: ``−log(1 − q)``, the boosting loss (eq. 4); 0 when the region does not move.
        W1, W2: kernel masses of the misaligned region parts (eq. 6, Props. 4–6).
        q: the boosting rate (eq. 3).
    """

    L1: float
    L2: float
    W1: float
    W2: float
    q: float

    @property
    def W3(self) -> float:
        return 1.0 - self.W1 - self.W2


class Region:
    """Interface of a preferred region; see the subclasses."""

    kind: str = "region"
    moves_with_query: bool = True

    def bounds(self, center: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def coverage(self, kernel: Kernel, center: float | np.ndarray) -> np.ndarray:
        """``p_S(Q)``: kernel mass of the region at true value ``center``."""
        lo, hi = self.bounds(center)
        c = np.asarray(center, float)
        return kernel.interval_mass(lo - c, hi - c)

    def worst_center(self) -> float:
        """The true value that minimises the coverage (``X̃`` of Sec. 5.1)."""
        raise NotImplementedError

    def size(self) -> float:
        """``|S(Q(X̃))|``: the length of the smallest region (the x-axis of Fig. 2)."""
        lo, hi = self.bounds(self.worst_center())
        return float(hi - lo)

    def min_coverage(self, kernel: Kernel) -> float:
        return float(self.coverage(kernel, self.worst_center()))

    def q(self, kernel: Kernel, rho: float) -> float:
        return boosting_rate(self.min_coverage(kernel), rho)

    def paper_pair(self, sensitivity: float) -> tuple[float, float]:
        """The paper's dominating pair ``(Q(X), Q(X'))``."""
        raise NotImplementedError

    def paper_terms(self, kernel: Kernel, rho: float, sensitivity: float) -> PaperTerms:
        raise NotImplementedError

    def exact_pairs(
        self,
        sensitivity: float,
        n: int = 9,
        scale: float | None = None,
        domain: tuple[float, float] | None = None,
    ) -> list[tuple[float, float]]:
        """Neighbouring pairs the exact accounting searches (both orders are tried); ``scale``:
        the kernel's, which sets how far a relative region's search reaches
        (:mod:`privrepro.boosting.worst_pairs`); ``domain``: ``[lo, hi]`` of the query's true
        values (default the real line)."""
        raise NotImplementedError


class _AroundQuery(Region):
    """A region around the true value that widens (or not) with ``|Q|``: the coverage is
    smallest at ``Q = 0``, and the paper's pair is ``(0, Δ)`` (Props. 4, 6)."""

    def worst_center(self) -> float:
        return 0.0

    def paper_pair(self, sensitivity: float) -> tuple[float, float]:
        return 0.0, float(sensitivity)


@dataclass(frozen=True)
class AbsoluteRegion(_AroundQuery):
    """``S(Q) = [Q − τ, Q + τ]`` (pb paper, Sec. 4.3)."""

    tau: float
    kind = "absolute"

    def bounds(self, center: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = np.asarray(center, float)
        return c - self.tau, c + self.tau

    def paper_terms(self, kernel: Kernel, rho: float, sensitivity: float) -> PaperTerms:
        """Prop. 6: ``L1 = 0``, ``L2 = −log(1 − q)``, ``W1 = W2 = Φ(−τ + Δ) − Φ(−τ)`` (eq. 9)."""
        q = self.q(kernel, rho)
        w = float(kernel.interval_mass(-self.tau, -self.tau + sensitivity))
        return PaperTerms(L1=0.0, L2=-math.log1p(-q) if q < 1 else math.inf, W1=w, W2=w, q=q)

    def exact_pairs(
        self,
        sensitivity: float,
        n: int = 9,
        scale: float | None = None,
        domain: tuple[float, float] | None = None,
    ) -> list[tuple[float, float]]:
        # translation invariant: only the shift matters, and the worst shift is Δ (note §5.3);
        # a domain that holds one pair at distance Δ changes nothing
        return [(0.0, float(sensitivity))]


@dataclass(frozen=True)
class RelativeRegion(_AroundQuery):
    """``S(Q) = [Q − (θ|Q| + τ), Q + (θ|Q| + τ)]`` (pb paper, Sec. 4.1)."""

    theta: float
    tau: float
    kind = "relative"

    def bounds(self, center: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = np.asarray(center, float)
        r = self.theta * np.abs(c) + self.tau
        return c - r, c + r

    def paper_terms(self, kernel: Kernel, rho: float, sensitivity: float) -> PaperTerms:
        """Prop. 4 as printed (the W's use ``θΔ`` where the regions differ by ``(1 ± θ)Δ``)."""
        q = self.q(kernel, rho)
        t, th, d = self.tau, self.theta, sensitivity
        pbar_x2 = 1 - float(kernel.interval_mass(-th * d - t, th * d + t))
        pbar_x = 1 - float(kernel.interval_mass(-t, t))
        L1 = math.log((1 - pbar_x2 * q) / (1 - pbar_x * q))
        W1 = float(kernel.interval_mass(t, th * d + t))
        W2 = float(kernel.interval_mass(-t, th * d - t)) if th * d - t >= -t else 0.0
        return PaperTerms(L1=L1, L2=-math.log1p(-q) if q < 1 else math.inf, W1=W1, W2=W2, q=q)

    def exact_pairs(
        self,
        sensitivity: float,
        n: int = 9,
        scale: float | None = None,
        domain: tuple[float, float] | None = None,
    ) -> list[tuple[float, float]]:
        """``n`` starts in ``[−Δ/2, 0]`` and a grid up to the reach beyond which the tail bound
        of :mod:`privrepro.boosting.worst_pairs` holds (the worst pair is *not* near 0 in
        general: it lies where a misaligned piece meets the privacy-loss level); ``scale``
        defaults to τ (a look at the grid; the accountants pass the kernel's)."""
        sc = self.tau if scale is None else scale
        starts, d = pair_starts(
            "relative",
            np.array([float(sc)]),
            np.array([float(sensitivity)]),
            np.array([2.0 * self.tau]),
            np.array([self.theta]),
            n,
            domain=None if domain is None else (np.array([domain[0]]), np.array([domain[1]])),
        )
        return [(float(s), float(s + d[0])) for s in starts[0]]


@dataclass(frozen=True)
class FixedRegion(Region):
    """``S = [τ_l, τ_u]`` for every input (pb paper, Sec. 4.2); true values lie in ``S``.

    Attributes:
        pair_rule: ``"paper"`` takes the paper's pair ``Q = τ_l, Q' = τ_l + Δ`` (Prop. 5) even when
            ``Q'`` leaves ``S``; ``"worst"`` maximises ``L1`` over all pairs inside ``S`` at distance
            ``≤ Δ`` (401-point grid for the first input, the best partner in closed form; assumed
            correction; the two agree when ``Δ`` is small against the width).
    """

    lower: float
    upper: float
    pair_rule: Literal["paper", "worst"] = "paper"
    kind = "fixed"
    moves_with_query = False

    def __post_init__(self) -> None:
        if not self.upper > self.lower:
            raise ConfigError(
                "upper", self.upper, f"must exceed the fixed region's lower end {self.lower!r}"
            )

    def bounds(self, center: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = np.asarray(center, float)
        return np.full_like(c, self.lower), np.full_like(c, self.upper)

    def worst_center(self) -> float:
        return float(self.lower)

    def size(self) -> float:
        return float(self.upper - self.lower)

    def paper_pair(self, sensitivity: float) -> tuple[float, float]:
        return float(self.lower), float(self.lower + sensitivity)

    def _pbar(self, kernel: Kernel, center: float) -> float:
        return 1.0 - float(self.coverage(kernel, center))

    def paper_terms(self, kernel: Kernel, rho: float, sensitivity: float) -> PaperTerms:
        """Prop. 5: ``W1 = W2 = 0``, ``L1`` at the pair ``(τ_l, τ_l + Δ)``, no ``L2``."""
        q = self.q(kernel, rho)
        if self.pair_rule == "paper":
            c, c2 = self.paper_pair(sensitivity)
            L1 = math.log((1 - self._pbar(kernel, c2) * q) / (1 - self._pbar(kernel, c) * q))
        else:
            # Z(c) = 1 − p̄(c) q is unimodal with its peak at the centre of S, so for each c the
            # worst partner within distance Δ is the point of [c − Δ, c + Δ] nearest the centre
            cs = np.linspace(self.lower, self.upper, 401)
            centre = 0.5 * (self.lower + self.upper)
            partner = np.clip(centre, cs - sensitivity, cs + sensitivity)
            z = 1 - (1 - self.coverage(kernel, cs)) * q
            z2 = 1 - (1 - self.coverage(kernel, partner)) * q
            L1 = float(np.max(np.log(z2 / z)))
        return PaperTerms(L1=L1, L2=0.0, W1=0.0, W2=0.0, q=q)

    def pair_distance(self, sensitivity: float) -> float:
        """The largest distance of two neighbouring true values: ``min(Δ, τ_u − τ_l)`` (true
        values lie in ``S``, so neighbours are never further apart than its width)."""
        return min(float(sensitivity), self.size())

    def exact_pairs(
        self,
        sensitivity: float,
        n: int = 9,
        scale: float | None = None,
        domain: tuple[float, float] | None = None,
    ) -> list[tuple[float, float]]:
        lo, hi = self.lower, self.upper
        if domain is not None:  # true values lie in S ∩ domain
            lo, hi = max(lo, float(domain[0])), min(hi, float(domain[1]))
        d = min(float(sensitivity), hi - lo)
        starts = np.linspace(lo, hi - d, max(n, FIXED_STARTS))
        return [(float(s), float(s + d)) for s in starts]


def make_region(
    kind: str,
    *,
    tau: float = 5.0,
    theta: float = 0.05,
    lower: float | None = None,
    upper: float | None = None,
    pair_rule: str = "paper",
) -> Region:
    """A region by name: ``absolute`` (τ), ``relative`` (θ, τ) or ``fixed`` (``[lower, upper]``,
    by default ``[−τ, τ]`` so that its size matches the other two)."""
    if kind == "absolute":
        return AbsoluteRegion(tau)
    if kind == "relative":
        return RelativeRegion(theta, tau)
    if kind == "fixed":
        lo = -tau if lower is None else lower
        hi = tau if upper is None else upper
        return FixedRegion(lo, hi, pair_rule)  # type: ignore[arg-type]
    raise ConfigError("kind", kind, "must be one of ['absolute', 'relative', 'fixed']")
