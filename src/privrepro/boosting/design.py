"""Designing PB-DP: a setting (region, ρ, Δ, privacy notion, calibration), its accounting in the
three flavours (the paper's formulas, exact, sound bound), the Gaussian baseline that meets the
same utility constraint, the ε₀ search (Algorithm 2) and the inverse uses (Sec. 6.1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from scipy import special

from privrepro.boosting import exact, gaussian_mu
from privrepro.boosting._checks import check_choice
from privrepro.boosting.accounting import epsilon_for_delta, profile_delta, rdp_epsilon
from privrepro.boosting.kernels import GaussianKernel, Kernel, LaplaceKernel
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.regions import Region, make_region
from privrepro.boosting.worst_pairs import check_query_domain
from privrepro.config import ConfigError

__all__ = [
    "PBSetting",
    "SearchResult",
    "gaussian_baseline_epsilon",
    "gaussian_baseline_sigma",
    "largest_rho",
    "narrowest_size",
    "optimise_eps0",
    "ternary_search",
]

Case = Literal["absolute", "relative", "fixed"]
Notion = Literal["dp", "rdp"]
Accountant = Literal["paper", "exact", "sound"]


@dataclass(frozen=True)
class PBSetting:
    """One PB-DP design problem.

    Attributes:
        case: ``absolute`` (Sec. 4.3), ``relative`` (Sec. 4.1) or ``fixed`` (Sec. 4.2).
        rho: confidence level ρ of the utility constraint (eq. 1).
        sensitivity: ``Δ_Q``.
        size: ``|S(Q(X̃))|``, the length of the smallest region: ``2τ`` for absolute/relative, the
            width ``τ_u − τ_l`` of a fixed region centred at 0 (assumed reading of "|S|").
        theta: relative-error ratio θ (relative case only; unstated in the paper).
        notion: ``dp`` (ε at fixed δ) or ``rdp`` (ε at fixed α); δ / α are shared by kernel and
            PB-DP (Sec. 3.4).
        calibration: ``analytic`` (exact Gaussian profile) or ``classical`` (Sec. 2 formula): how
            ε₀ maps to the Gaussian kernel's σ under ``dp``.
        kernel: ``gaussian`` or ``laplace`` (``b = Δ/ε₀``).
        pair_rule: the fixed region's pair rule (see :class:`~privrepro.boosting.regions.FixedRegion`).
        exact_pairs: starts in [−Δ/2, 0] of a relative region's pair search, fewest grid starts
            of a fixed region's (the exact accounting is the supremum over every pair:
            :mod:`privrepro.boosting.worst_pairs`).
        query_domain: ``(lo, hi)``, the query's true values (in the frame of a fixed region
            centred at 0); default ``None``, the real line (the paper states none). The exact
            accounting takes its supremum over the pairs inside it; no effect on the absolute
            region (translation invariant) or on the paper's accountant; Gaussian kernel only.
    """

    case: Case = "absolute"
    rho: float = 0.9
    sensitivity: float = 1.0
    size: float = 10.0
    theta: float = 0.05
    notion: Notion = "dp"
    delta: float = 1e-5
    alpha: float = 2.0
    calibration: Literal["analytic", "classical"] = "analytic"
    kernel: Literal["gaussian", "laplace"] = "gaussian"
    pair_rule: Literal["paper", "worst"] = "paper"
    exact_pairs: int = 9
    query_domain: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        checks = [
            ("rho", self.rho, 0 < self.rho < 1, "(0, 1)"),
            ("sensitivity", self.sensitivity, self.sensitivity > 0, "(0, inf)"),
            ("size", self.size, self.size > 0, "(0, inf)"),
            ("theta", self.theta, 0 <= self.theta <= 1, "[0, 1]"),
            ("delta", self.delta, 0 < self.delta < 1, "(0, 1)"),
            ("alpha", self.alpha, self.alpha > 1, "(1, inf)"),
        ]
        for key, value, ok, allowed in checks:
            if not ok:
                raise ConfigError(key, value, f"must lie in {allowed}")
        check_choice("case", self.case, ("absolute", "relative", "fixed"))
        check_choice("notion", self.notion, ("dp", "rdp"))
        check_choice("calibration", self.calibration, ("analytic", "classical"))
        check_choice("kernel", self.kernel, ("gaussian", "laplace"))
        check_choice("pair_rule", self.pair_rule, ("paper", "worst"))
        if int(self.exact_pairs) != self.exact_pairs or self.exact_pairs < 1:
            raise ConfigError("exact_pairs", self.exact_pairs, "must be an integer >= 1")
        if self.query_domain is not None:
            check_query_domain(list(self.query_domain), self.sensitivity)
            if self.kernel != "gaussian":
                raise ConfigError(
                    "query_domain", list(self.query_domain), "needs kernel = 'gaussian'"
                )
            lo, hi = self.query_domain
            if self.case == "fixed" and not (hi > -self.size / 2 and lo < self.size / 2):
                raise ConfigError(
                    "query_domain",
                    list(self.query_domain),
                    f"must overlap the fixed region [{-self.size / 2!r}, {self.size / 2!r}]",
                )

    def region(self) -> Region:
        return make_region(self.case, tau=self.size / 2, theta=self.theta, pair_rule=self.pair_rule)

    def kernel_for(self, eps0: float) -> Kernel:
        """The kernel whose own privacy level is ``ε₀`` under this setting's notion."""
        if not eps0 > 0:
            raise ConfigError("eps0", eps0, "must lie in (0, inf)")
        if self.kernel == "laplace":
            return LaplaceKernel(self.sensitivity / eps0)
        if self.notion == "rdp":
            return GaussianKernel(math.sqrt(self.alpha * self.sensitivity**2 / (2 * eps0)))
        if self.calibration == "classical":
            return GaussianKernel(gaussian_mu.classical_sigma(eps0, self.delta, self.sensitivity))
        return GaussianKernel(gaussian_mu.analytic_sigma(eps0, self.delta, self.sensitivity))

    def mechanism(self, eps0: float) -> BoostedMechanism:
        return BoostedMechanism(self.kernel_for(eps0), self.region(), self.rho, self.query_domain)

    def mechanism_sigma(self, scale: float) -> BoostedMechanism:
        return BoostedMechanism(
            GaussianKernel(scale) if self.kernel == "gaussian" else LaplaceKernel(scale),
            self.region(),
            self.rho,
            self.query_domain,
        )

    # --- the three accountants -----------------------------------------------------------------
    def paper_epsilon_of(self, mech: BoostedMechanism) -> float:
        """Prop. 1 (``dp``) or Prop. 2 (``rdp``) at the paper's dominating pair."""
        k, d = mech.kernel, self.sensitivity
        terms = mech.paper_terms(d)
        if self.notion == "rdp":
            return rdp_epsilon(terms, k.rdp(self.alpha, d), self.alpha)
        return epsilon_for_delta(
            lambda e: float(profile_delta(terms, lambda x: k.delta(x, d), e)), self.delta
        )

    def exact_epsilon_of(self, mech: BoostedMechanism) -> float:
        """Exact hockey-stick (``dp``) or Rényi (``rdp``) divergence of the boosted outputs."""
        if self.notion == "rdp":
            return exact.exact_rdp(mech, self.sensitivity, self.alpha, self.exact_pairs)
        return exact.exact_epsilon(mech, self.sensitivity, self.delta, self.exact_pairs)

    def sound_epsilon_of(self, mech: BoostedMechanism) -> float:
        """The rigorous bound of the note (§2.2) in this notion."""
        if self.notion == "rdp":
            return exact.sound_rdp(mech, self.sensitivity, self.alpha, self.exact_pairs)
        return exact.sound_epsilon(mech, self.sensitivity, self.delta, self.exact_pairs)

    def epsilon(self, eps0: float, accountant: Accountant = "paper") -> float:
        mech = self.mechanism(eps0)
        if accountant == "paper":
            return self.paper_epsilon_of(mech)
        if accountant == "exact":
            return self.exact_epsilon_of(mech)
        if accountant == "sound":
            return self.sound_epsilon_of(mech)
        raise ConfigError("accountant", accountant, "must be one of ['paper', 'exact', 'sound']")


def gaussian_baseline_sigma(size: float, rho: float) -> float:
    """σ of the plain Gaussian meeting ``Pr[|noise| ≤ |S|/2] ≥ ρ``: ``τ/Φ⁻¹((1+ρ)/2)`` (note §2.4)."""
    return (size / 2) / float(special.ndtri((1 + rho) / 2))


def gaussian_baseline_epsilon(setting: PBSetting, calibration: str | None = None) -> float:
    """ε of the utility-matched Gaussian under the setting's notion (exact or classical for DP)."""
    s = gaussian_baseline_sigma(setting.size, setting.rho)
    d = setting.sensitivity
    if setting.notion == "rdp":
        return setting.alpha * d * d / (2 * s * s)
    if (calibration or setting.calibration) == "classical":
        return math.sqrt(2 * math.log(1.25 / setting.delta)) * d / s
    return gaussian_mu.gaussian_epsilon_mu(setting.delta, d / s)


@dataclass(frozen=True)
class SearchResult:
    """The outcome of the ε₀ search: the argmin, the minimum and the number of evaluations."""

    eps0: float
    epsilon: float
    evaluations: int


def ternary_search(
    objective: Callable[[float], float], lo: float, hi: float, tol: float = 1e-6
) -> SearchResult:
    """Algorithm 2 of the pb paper, literally: shrink ``[lo, hi]`` by thirds until ``hi − lo ≤ tol``
    and return the midpoint (the paper claims a single peak in ε₀)."""
    n = 0
    while hi - lo > tol:
        e1 = lo + (hi - lo) / 3
        e2 = hi - (hi - lo) / 3
        v1, v2 = objective(e1), objective(e2)
        n += 2
        if v1 > v2:
            lo = e1
        else:
            hi = e2
    x = (lo + hi) / 2
    return SearchResult(x, objective(x), n + 1)


def optimise_eps0(
    setting: PBSetting,
    accountant: Accountant = "paper",
    eps_max: float | None = None,
    tol: float = 1e-6,
) -> SearchResult:
    """Algorithm 2: the ε₀ in ``(0, eps_max]`` minimising PB-DP's total ε under ``accountant``.

    ``eps_max`` defaults to the utility-matched Gaussian's ε (assumed; the paper calls it "the
    total privacy budget" and gives no value): at ``ε₀ = ε_G`` the boosting rate is 0.
    """
    top = gaussian_baseline_epsilon(setting) if eps_max is None else eps_max
    return ternary_search(lambda e: setting.epsilon(e, accountant), 0.0, top, tol)


def largest_rho(
    setting: PBSetting, budget: float, accountant: Accountant = "paper", tol: float = 1e-4
) -> float:
    """Sec. 6.1, ``Λ⁻¹(S, ε, δ/α) → ρ``: the largest ρ whose optimised ε stays within ``budget``
    (binary search; ε rises with ρ)."""
    lo, hi = 1e-3, 1 - 1e-6

    def cost(r: float) -> float:
        s = replace(setting, rho=r)
        return optimise_eps0(s, accountant, tol=1e-5).epsilon

    if cost(lo) > budget:
        return 0.0
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if cost(mid) <= budget:
            lo = mid
        else:
            hi = mid
    return lo


def narrowest_size(
    setting: PBSetting,
    budget: float,
    accountant: Accountant = "paper",
    tol: float = 1e-3,
    size_max: float = 1e4,
) -> float:
    """Sec. 6.1, ``Λ⁻¹(ρ, ε, δ/α) → S``: the smallest ``|S|`` whose optimised ε stays within
    ``budget`` (binary search; ε falls as the region widens)."""

    def cost(size: float) -> float:
        return optimise_eps0(replace(setting, size=size), accountant, tol=1e-5).epsilon

    lo, hi = 1e-3, size_max
    if cost(hi) > budget:
        return math.inf
    while hi - lo > tol * max(1.0, lo):
        mid = math.sqrt(lo * hi) if hi / lo > 4 else 0.5 * (lo + hi)
        if cost(mid) <= budget:
            hi = mid
        else:
            lo = mid
    return hi
