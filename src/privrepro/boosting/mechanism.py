"""The privacy-boosted mechanism PB-DP: its output density and exact samplers.

pb paper, eq. (2): with kernel density ``f_M`` centred at the true value ``Q(X)`` and kernel miss
probability ``p̄ = 1 − p_S(Q(X))``,

    f_pb(y | Q) = f_M(y) / (1 − p̄ q)          for y in S(Q),
    f_pb(y | Q) = f_M(y) (1 − q) / (1 − p̄ q)  otherwise,

with boosting rate ``q`` (eq. 3). At the coverage-minimising ``Q`` the in-region mass is exactly ρ.

Samplers (both exact): the *rejection* sampler proposes ``y ~ f_M`` and accepts with probability
1 inside ``S`` and ``1 − q`` outside; its expected number of proposals per output is
``1/(1 − p̄ q) = ρ/p_S`` at the worst ``Q`` (note §1). The *mixture* sampler picks "inside" with
probability ``p/(1 − p̄ q)`` and draws the kernel truncated to ``S`` or to its complement by the
inverse CDF.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from privrepro.boosting.kernels import Kernel
from privrepro.boosting.regions import PaperTerms, Region
from privrepro.config import ConfigError

__all__ = ["BoostedMechanism", "SampleResult"]


@dataclass(frozen=True)
class SampleResult:
    """Samples and the number of kernel proposals used to produce them."""

    values: np.ndarray
    proposals: int


@dataclass(frozen=True)
class BoostedMechanism:
    """PB-DP over ``kernel`` with preferred region ``region`` at confidence ``rho`` (eq. 1–3).

    The boosting rate is fixed once from the worst-case coverage, so the utility constraint
    ``Pr[M(X) ∈ S(Q(X))] ≥ ρ`` holds for every X, with equality at the worst X. ``ρ = 1`` gives
    ``q = 1``: the kernel truncated to ``S`` (the "bounded" mechanism of Sec. 4.2).

    ``domain``: ``(lo, hi)``, the query's true values when the paper or the user gives them
    (default ``None``: the real line, the paper stating none). The exact accounting takes its
    supremum over the neighbouring pairs inside it (:mod:`privrepro.boosting.worst_pairs`);
    the boosting rate stays eq. (3)'s.
    """

    kernel: Kernel
    region: Region
    rho: float
    domain: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if not 0 < self.rho <= 1:
            raise ConfigError("rho", self.rho, "must lie in (0, 1]")
        if self.domain is not None:
            lo, hi = (float(v) for v in self.domain)
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise ConfigError(
                    "query_domain", list(self.domain), "must be [lo, hi], finite, lo < hi"
                )

    @cached_property
    def q(self) -> float:
        """Boosting rate, eq. (3)."""
        return self.region.q(self.kernel, self.rho)

    def paper_terms(self, sensitivity: float) -> PaperTerms:
        """``L1, L2, W1, W2`` of Props. 4–6 at the paper's dominating pair."""
        return self.region.paper_terms(self.kernel, self.rho, sensitivity)

    def normaliser(self, center: float | np.ndarray) -> np.ndarray:
        """``1 − p̄_S(Q) q``, the denominator of eq. (2)."""
        return 1.0 - (1.0 - self.region.coverage(self.kernel, center)) * self.q

    def in_region_mass(self, center: float | np.ndarray) -> np.ndarray:
        """``Pr[M_pb(X) ∈ S(Q(X))] = p_S / (1 − p̄_S q)`` (≥ ρ, = ρ at the worst Q)."""
        return self.region.coverage(self.kernel, center) / self.normaliser(center)

    def density(self, y: np.ndarray, center: float) -> np.ndarray:
        """``f_pb(y | Q = center)``, eq. (2)."""
        y = np.asarray(y, float)
        lo, hi = self.region.bounds(center)
        inside = (y >= lo) & (y <= hi)
        w = np.where(inside, 1.0, 1.0 - self.q)
        return w * self.kernel.pdf(y - center) / self.normaliser(center)

    def expected_proposals(self, center: float | None = None) -> float:
        """Mean number of kernel draws per output of the rejection sampler: ``1/(1 − p̄ q)``."""
        c = self.region.worst_center() if center is None else center
        return float(1.0 / self.normaliser(c))

    def sample(
        self, rng: np.random.Generator, center: float, size: int, method: str = "rejection"
    ) -> SampleResult:
        """``size`` exact draws of ``M_pb`` at true value ``center``."""
        if method == "rejection":
            return self._sample_rejection(rng, center, size)
        if method == "mixture":
            return self._sample_mixture(rng, center, size)
        raise ConfigError("method", method, "must be one of ['rejection', 'mixture']")

    def _sample_rejection(self, rng: np.random.Generator, center: float, size: int) -> SampleResult:
        q = self.q
        lo, hi = (float(v) for v in self.region.bounds(center))
        out = np.empty(size)
        filled = 0
        proposals = 0
        batch = int(size * self.expected_proposals(center) * 1.05) + 16
        while filled < size:
            y = center + self.kernel.sample(rng, batch)
            keep = ((y >= lo) & (y <= hi)) | (rng.random(batch) >= q)
            idx = np.flatnonzero(keep)
            need = size - filled
            if idx.size >= need:
                out[filled:] = y[idx[:need]]
                proposals += int(idx[need - 1]) + 1
                filled = size
            else:
                out[filled : filled + idx.size] = y[idx]
                filled += idx.size
                proposals += batch
            batch = max(64, int((size - filled) * self.expected_proposals(center) * 1.2) + 16)
        return SampleResult(out, proposals)

    def _sample_mixture(self, rng: np.random.Generator, center: float, size: int) -> SampleResult:
        k = self.kernel
        lo, hi = (float(v) - center for v in self.region.bounds(center))
        p_in = float(self.in_region_mass(center))
        inside = rng.random(size) < p_in
        u = rng.random(size)
        f_lo, f_hi = float(k.cdf(lo)), float(k.cdf(hi))
        y_in = k.ppf(f_lo + u * (f_hi - f_lo))
        # complement: left tail has mass f_lo, right tail mass 1 - f_hi
        left_mass, right_mass = f_lo, float(k.sf(hi))
        go_left = u * (left_mass + right_mass) < left_mass
        u2 = rng.random(size)
        y_left = k.ppf(u2 * left_mass)
        y_right = -k.ppf(u2 * right_mass)  # symmetric kernel: upper tail by mirroring
        y_out = np.where(go_left, y_left, y_right)
        return SampleResult(center + np.where(inside, y_in, y_out), size)
