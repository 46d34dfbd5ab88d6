"""Computations behind the derived reference values and the errata's evidence.

Each function takes plain arguments (numbers and strings, as a reference file can hold them),
calls the project's library and returns a number or a small table. The reference files name
them in a ``derivation`` (``function: privrepro.report.derivations:pb_epsilon``) or an erratum's
``evidence``; the report calls them and shows the result beside the stored value, and
``tests/report`` checks that every one still reproduces its stored value.

pb (Jiang et al., arXiv 2412.10612): the utility-matched Gaussian's ε, PB-DP's ε at the ε₀ of
Algorithm 2 under the paper's formulas (Props. 1–2) or exact accounting, the rejection sampler's
proposals, the fixed region's extra loss L1 (Prop. 5), the composed ε of Fig. 6 (Prop. 3 /
Algorithm 1), and Algorithm 1 as printed beside the corrected one. cl (Tobaben et al., arXiv 2411.04680): where the
group-privacy drop bound of Fig. 2 reaches 0.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from privrepro.boosting.accounting import (
    algorithm1_as_printed,
    algorithm1_double_loop,
    composition_delta,
    composition_epsilon_curve,
)
from privrepro.boosting.design import (
    PBSetting,
    gaussian_baseline_epsilon,
    gaussian_baseline_sigma,
    optimise_eps0,
)
from privrepro.boosting.gaussian_mu import gaussian_delta_mu, gaussian_epsilon_mu
from privrepro.boosting.kernels import GaussianKernel
from privrepro.boosting.regions import FixedRegion
from privrepro.dp.group import drop_probability_lower_bound

__all__ = [
    "cl_smallest_k_bound_zero",
    "pb_algorithm1_printed_vs_corrected",
    "pb_composed_epsilon",
    "pb_epsilon",
    "pb_expected_proposals",
    "pb_fixed_region_extra_loss",
    "pb_gaussian_epsilon",
    "pb_setting",
]


def cl_smallest_k_bound_zero(epsilon: float, delta: float, k_max: int = 100_000) -> int:
    """The smallest class size k at which Fig. 2's bound ``max(0, 1 − δ_k)`` reaches 0 (cl paper,
    Sec. 4.4: δ_k = Σ_{i<k} e^{iε} δ), searched over ``k ≤ k_max``."""
    k = np.arange(1, k_max + 1)
    zero = np.flatnonzero(drop_probability_lower_bound(epsilon, delta, k) <= 0.0)
    if zero.size == 0:
        raise ValueError(f"the bound stays above 0 up to k = {k_max}")
    return int(k[zero[0]])


def pb_setting(
    case: str,
    rho: float,
    sensitivity: float,
    size: float,
    notion: str = "dp",
    level: float = 1e-5,
    theta: float = 0.05,
) -> PBSetting:
    """The :class:`~privrepro.boosting.design.PBSetting` of a point of Figs. 2–6: ``level`` is δ
    (``notion = dp``) or the Rényi order α (``rdp``); analytic calibration, the paper's pair."""
    kw = {"delta": level} if notion == "dp" else {"alpha": level}
    return PBSetting(
        case=case,  # type: ignore[arg-type]
        rho=rho,
        sensitivity=sensitivity,
        size=size,
        theta=theta,
        notion=notion,  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def pb_gaussian_epsilon(
    rho: float, sensitivity: float, size: float, notion: str = "dp", level: float = 1e-5
) -> float:
    """ε of the Gaussian meeting ``Pr[|noise| ≤ |S|/2] ≥ ρ``: σ_G = (|S|/2)/Φ⁻¹((1+ρ)/2), then
    the exact (ε, δ) profile (``dp``) or ``α Δ²/(2σ_G²)`` (``rdp``)."""
    return gaussian_baseline_epsilon(pb_setting("absolute", rho, sensitivity, size, notion, level))


def pb_epsilon(
    case: str,
    rho: float,
    sensitivity: float,
    size: float,
    notion: str = "dp",
    level: float = 1e-5,
    accountant: str = "paper",
    theta: float = 0.05,
    tol: float = 1e-6,
) -> float:
    """PB-DP's ε at the ε₀ Algorithm 2 finds with the paper's formulas on ``(0, ε_G]``
    (tolerance ``tol``), accounted by ``accountant``: ``paper`` (Prop. 1 / Prop. 2) or ``exact``
    (the divergence of the two boosted output densities)."""
    s = pb_setting(case, rho, sensitivity, size, notion, level, theta)
    eps0 = optimise_eps0(s, tol=tol).eps0
    return s.epsilon(eps0, accountant)  # type: ignore[arg-type]


def pb_expected_proposals(
    rho: float, sensitivity: float, size: float, delta: float = 1e-5, case: str = "absolute"
) -> float:
    """Kernel draws per output of the rejection sampler, ``1/(1 − p̄_S q) = ρ/p_S``, at the
    worst input and the ε₀ of Algorithm 2 (Fig. 4's setting)."""
    s = pb_setting(case, rho, sensitivity, size, "dp", delta)
    return s.mechanism(optimise_eps0(s).eps0).expected_proposals()


def pb_fixed_region_extra_loss(
    width: float, sensitivity: float, rho: float, sigma: float = 10.0
) -> float:
    """Prop. 5's extra loss L1 of a fixed region ``[−width/2, width/2]`` at the paper's pair
    ``Q = τ_l, Q' = τ_l + Δ``, Gaussian kernel of standard deviation ``sigma`` (Fig. 5(b))."""
    half = width / 2
    return float(FixedRegion(-half, half).paper_terms(GaussianKernel(sigma), rho, sensitivity).L1)


def _fig6_setting(
    rho: float, size: float, sensitivity: float, delta: float
) -> tuple[PBSetting, float]:
    s = pb_setting("absolute", rho, sensitivity, size, "dp", delta)
    return s, optimise_eps0(s).eps0


def pb_composed_epsilon(
    T: int,
    mechanism: str,
    rho: float = 0.9,
    size: float = 10.0,
    sensitivity: float = 3.0,
    delta: float = 1e-5,
) -> float:
    """ε at δ after ``T`` compositions (Fig. 6(a)): the Gaussian exactly (μ√T), or PB-DP by
    Prop. 3 / Algorithm 1 (corrected) with ε₀ from Algorithm 2 at T = 1, held for every T."""
    if mechanism == "gaussian":
        mu = sensitivity / gaussian_baseline_sigma(size, rho)
        return gaussian_epsilon_mu(delta, mu, compositions=int(T))
    s, eps0 = _fig6_setting(rho, size, sensitivity, delta)
    mech = s.mechanism(eps0)
    sig = mech.kernel.scale
    curve = composition_epsilon_curve(
        mech.paper_terms(sensitivity),
        lambda e, t: gaussian_delta_mu(e, sensitivity * np.sqrt(t) / sig),
        np.array([int(T)]),
        delta,
    )
    return float(curve[0])


def pb_algorithm1_printed_vs_corrected(
    Ts: list[int],
    rho: float = 0.9,
    size: float = 10.0,
    sensitivity: float = 3.0,
    delta: float = 1e-5,
) -> pd.DataFrame:
    """Algorithm 1 as printed beside the corrected one, on Fig. 6(a)'s PB-DP mechanism.

    For each T: ε at δ under the corrected accountant (Prop. 3), δ at that ε from the corrected
    double loop, from the O(T) convolution and from Algorithm 1 as printed, and the ε at which
    the printed algorithm reaches δ. The printed algorithm drops L2 and the weights, so it gives
    a δ far below the target at the corrected ε: it understates the composed ε.
    """
    s, eps0 = _fig6_setting(rho, size, sensitivity, delta)
    mech = s.mechanism(eps0)
    terms = mech.paper_terms(sensitivity)
    sig = mech.kernel.scale
    rows = []
    for T in Ts:
        T = int(T)

        def kernel(e: np.ndarray, T: int = T) -> np.ndarray:
            return np.asarray(gaussian_delta_mu(e, sensitivity * math.sqrt(T) / sig))

        eps = float(
            composition_epsilon_curve(
                terms,
                lambda e, t: gaussian_delta_mu(e, sensitivity * np.sqrt(t) / sig),
                np.array([T]),
                delta,
            )[0]
        )
        printed = algorithm1_as_printed(terms, kernel, eps, T)
        rows.append(
            {
                "T": T,
                "epsilon (corrected, at δ)": eps,
                "δ corrected double loop": algorithm1_double_loop(terms, kernel, eps, T),
                "δ convolution (Prop. 3)": float(composition_delta(terms, kernel, eps, T)),
                "δ as printed": printed,
                "ε as printed at δ": _printed_epsilon(terms, kernel, T, delta),
            }
        )
    return pd.DataFrame(rows)


def _printed_epsilon(terms, kernel, T: int, delta: float) -> float:  # type: ignore[no-untyped-def]
    """The smallest ε at which Algorithm 1 as printed gives δ (bisection; ∞ if never)."""
    lo, hi = 0.0, 1.0
    while algorithm1_as_printed(terms, kernel, hi, T) > delta:
        hi *= 2
        if hi > 1e4:
            return math.inf
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if algorithm1_as_printed(terms, kernel, mid, T) > delta:
            lo = mid
        else:
            hi = mid
    return hi
