"""The fixed preferred region: its privacy profile and its extra loss (pb Sec. 4.2, Prop. 5,
Remark 3, Fig. 5).

* :func:`fixed_region_profiles` — δ(ε) of PB-DP with a fixed region ``S = [−w/2, w/2]`` and of
  the bounded Gaussian (``ρ = 1``: the kernel truncated to ``S``), by the paper's Remark 3
  (``δ = δ_Z(ε − L1)``) and exactly (the two output densities), beside the kernel's own profile.
* :func:`fixed_region_extra_loss` — the extra loss ``L1`` on top of the kernel as ρ varies: the
  paper's pair (Prop. 5), the worst pair inside ``S``, and the exact Rényi divergence minus the
  kernel's — both at the same pair distance ``min(Δ, |S|)``: true values lie in ``S``, so two
  neighbours are never further apart than its width (Fig. 5(b) draws Δ = 30 beside
  ``S = [−10, 10]``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from privrepro.boosting import gaussian_mu
from privrepro.boosting._checks import check_range
from privrepro.boosting.accounting import profile_delta
from privrepro.boosting.exact import exact_delta, exact_rdp
from privrepro.boosting.kernels import GaussianKernel
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.regions import FixedRegion
from privrepro.boosting.worst_pairs import check_query_domain
from privrepro.config import ConfigError

__all__ = ["fixed_region_extra_loss", "fixed_region_profiles"]


def fixed_region_profiles(
    width: float,
    rho: float,
    eps0: float,
    delta0: float,
    sensitivity: float,
    epsilons: Sequence[float] | np.ndarray,
    *,
    exact_pairs: int = 9,
    query_domain: Sequence[float] | None = None,
) -> pd.DataFrame:
    """δ(ε) on ``epsilons`` of the Gaussian kernel calibrated to ``(ε₀, δ₀)`` (analytic), of
    PB-DP (confidence ``rho``) and of the bounded Gaussian, both with ``S = [−width/2, width/2]``;
    ``query_domain``: ``[lo, hi]`` of the true values (default ``None``: all of ``S``; the exact
    profile's pairs lie in ``S ∩ [lo, hi]``, the kernel's own profile and the paper's stay at Δ).

    Returns:
        Rows ``width, mechanism, accountant, epsilon, delta, q, L1, sigma``; ``mechanism`` is
        ``kernel`` (accountant ``exact``), ``pb`` or ``bounded`` (accountants ``paper``, ``exact``).
    """
    check_range("width", width, gt=0)
    check_range("rho", rho, gt=0, lt=1)
    check_range("exact_pairs", exact_pairs, ge=1)
    d = float(sensitivity)
    domain = _domain(query_domain, d, width)
    kernel = GaussianKernel(gaussian_mu.analytic_sigma(eps0, delta0, d))
    region = FixedRegion(-width / 2, width / 2)
    eps = np.asarray(epsilons, float)
    frames = [
        pd.DataFrame(
            {
                "mechanism": "kernel",
                "accountant": "exact",
                "epsilon": eps,
                "delta": kernel.delta(eps, d),
                "q": 0.0,
                "L1": 0.0,
            }
        )
    ]
    for name, r in (("pb", rho), ("bounded", 1.0)):
        mech = BoostedMechanism(kernel, region, r, domain)
        terms = mech.paper_terms(d)
        paper = profile_delta(terms, lambda e: kernel.delta(e, d), eps)
        exact = exact_delta(mech, d, eps, exact_pairs)
        for accountant, delta in (("paper", paper), ("exact", exact)):
            frames.append(
                pd.DataFrame(
                    {
                        "mechanism": name,
                        "accountant": accountant,
                        "epsilon": eps,
                        "delta": delta,
                        "q": terms.q,
                        "L1": terms.L1,
                    }
                )
            )
    out = pd.concat(frames, ignore_index=True)
    out.insert(0, "width", float(width))
    out["sigma"] = kernel.sigma
    return out


def fixed_region_extra_loss(
    width: float,
    sensitivity: float,
    sigma: float,
    rhos: Sequence[float],
    alphas: Sequence[float],
    *,
    exact_pairs: int = 9,
    query_domain: Sequence[float] | None = None,
) -> pd.DataFrame:
    """The extra loss of PB-DP with ``S = [−width/2, width/2]`` over a Gaussian kernel ``σ``;
    ``query_domain``: ``[lo, hi]`` of the true values (default ``None``: all of ``S``; the exact
    rows' pairs then lie in ``S ∩ [lo, hi]``, at distance ``min(Δ, its width)``).

    Returns:
        Rows ``width, sensitivity, rho, accountant, alpha, extra_loss, sigma, pair_distance``:
        accountant ``paper`` (Prop. 5's ``L1`` at the pair ``(τ_l, τ_l + Δ)``, as printed even
        where ``τ_l + Δ`` leaves ``S``), ``paper_worst_pair`` (its maximum over pairs inside
        ``S``) or ``exact`` (``D_α`` of the outputs over pairs inside ``S`` at distance
        ``pair_distance = min(Δ, |S|)``, minus the kernel's ``D_α`` at that same distance; one
        row per α).
    """
    check_range("width", width, gt=0)
    check_range("rhos", list(rhos), gt=0, le=1)
    check_range("alphas", list(alphas), gt=1)
    check_range("exact_pairs", exact_pairs, ge=1)
    kernel = GaussianKernel(sigma)
    d = float(sensitivity)
    domain = _domain(query_domain, d, width)
    half = width / 2
    lo, hi = (-half, half) if domain is None else (max(-half, domain[0]), min(half, domain[1]))
    reach = min(d, hi - lo)
    rows = []
    for rho in rhos:
        for rule in ("paper", "worst"):
            L1 = FixedRegion(-half, half, rule).paper_terms(kernel, rho, d).L1
            acc = "paper" if rule == "paper" else "paper_worst_pair"
            rows.append({"rho": rho, "accountant": acc, "alpha": np.nan, "extra_loss": L1})
        region = FixedRegion(-half, half)
        mech = BoostedMechanism(kernel, region, rho, domain)
        for a in alphas:
            extra = exact_rdp(mech, d, a, exact_pairs) - kernel.rdp(a, reach)
            rows.append({"rho": rho, "accountant": "exact", "alpha": a, "extra_loss": extra})
    out = pd.DataFrame(rows)
    out.insert(0, "width", float(width))
    out.insert(1, "sensitivity", d)
    out["sigma"] = kernel.sigma
    out["pair_distance"] = reach
    return out


def _domain(
    query_domain: Sequence[float] | None, sensitivity: float, width: float
) -> tuple[float, float] | None:
    """The checked domain: finite, holding a pair at distance Δ, overlapping ``S``."""
    if query_domain is None:
        return None
    check_query_domain(list(query_domain), sensitivity)
    lo, hi = float(query_domain[0]), float(query_domain[1])
    if not (hi > -width / 2 and lo < width / 2):
        raise ConfigError(
            "query_domain",
            [lo, hi],
            f"must overlap the fixed region [{-width / 2!r}, {width / 2!r}]",
        )
    return lo, hi
