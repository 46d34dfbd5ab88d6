"""The best PB-DP design: the kernel level ε₀ (equivalently σ) that minimises the *exact* ε.

The pb paper picks ε₀ by Algorithm 2 on its own formulas (Props. 1–2), which can understate the
loss (note §5.3). The claim it supports — PB-DP *can* need less ε than the Gaussian meeting the
same utility constraint — is about what the mechanism family can achieve, so it is decided here
at the design that minimises the mechanism's exact ε (:mod:`privrepro.boosting.exact_batch`,
the divergence of the two output densities) under the same constraint ``Pr[M(X) ∈ S] ≥ ρ``.

Every σ ≥ σ_G meets the constraint (eq. 3 sets q from σ), and σ = σ_G (``q = 0``) *is* the
Gaussian, so the search starts there and never ends above the Gaussian's ε. The search, per
problem, on ``u = log(σ/σ_lo) ∈ [0, span]``:

1. a grid of ``grid`` points ``u_j = span · (j/(grid − 1))²`` (dense near the Gaussian, where
   the optimum lies when boosting helps little), all problems and grid points in one call;
2. golden-section refinement in the two grid cells around the best grid point until the
   bracket is narrower than ``tol`` in ``u`` (a relative tolerance on σ);
3. the smallest value evaluated is returned with its σ (so the result is the exact ε of an
   actual design, never an interpolation).

Accuracy: the exact accountant's error is floating point (δ from Gaussian CDFs; ε root-found to
1e-10, Rényi in closed form); the search finds the global minimum over the bracket to within
``tol`` in log σ when the objective is unimodal inside the best grid cell's neighbours (a
brute-force scan agrees: tests/boosting/test_best_design.py). ``at_edge`` flags a minimum at the
bracket's upper end (the fixed region, whose ε → 0 as σ → ∞: erratum pb-fixed-region-degenerate).

Composition (Fig. 6(a)): :func:`best_composition_dp` — for every T the σ minimising the exact
composed ε (privacy-loss distributions of the output densities, :mod:`privrepro.dp.pld`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import special

from privrepro.boosting._checks import check_choice, check_range
from privrepro.boosting.batch import gaussian_baseline_batch, gaussian_epsilon_batch
from privrepro.boosting.design import PBSetting, gaussian_baseline_sigma
from privrepro.boosting.dominating import dominating_plds
from privrepro.boosting.exact_batch import GaussianPBBatch
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.worst_pairs import check_query_domain
from privrepro.config import ConfigError
from privrepro.dp.pld import compose_every_t
from privrepro.loops import PLAIN, Loops

__all__ = [
    "BestDesign",
    "DesignSearch",
    "best_composition_dp",
    "best_design",
    "best_design_batch",
    "minimise_over_sigma",
]

Array = NDArray[np.float64]
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class DesignSearch:
    """The search over the kernel's σ: ``σ ∈ [σ_lo, σ_lo · e^span]``, a grid of ``grid`` points
    quadratic in ``log σ``, golden-section refinement to ``tol`` in ``log σ``."""

    span: float = math.log(1000.0)
    grid: int = 48
    tol: float = 1e-7

    def __post_init__(self) -> None:
        check_range("span", self.span, gt=0, le=50)
        check_range("grid", self.grid, ge=3, le=100_000)
        check_range("tol", self.tol, gt=0, lt=1)

    def text(self) -> str:
        """The search in words (shown beside a best-design number)."""
        return (
            f"σ from σ_G to {math.exp(self.span):.4g}·σ_G, {self.grid}-point grid in log σ "
            f"(quadratic spacing), golden section to {self.tol:g} in log σ"
        )


@dataclass(frozen=True)
class BestDesign:
    """The design minimising PB-DP's exact ε for one setting, beside the Gaussian it contains.

    Attributes:
        setting: the design problem (region, ρ, Δ, |S|, δ or α).
        sigma: the kernel's σ at the optimum; ``q`` its boosting rate (eq. 3).
        eps0: the kernel's own level at that σ (ε at δ, analytic or classical as the setting
            says; α Δ²/(2σ²) under RDP).
        epsilon: the exact ε at δ (or exact RDP at α) of the designed mechanism.
        gaussian_epsilon: the utility-matched Gaussian's ε (``q = 0``, σ = σ_G).
        at_edge: the minimum lies at the bracket's upper end (the infimum may lie beyond).
        search: how it was searched; ``evaluations``: exact evaluations used.
    """

    setting: PBSetting
    sigma: float
    eps0: float
    q: float
    epsilon: float
    gaussian_epsilon: float
    at_edge: bool
    search: DesignSearch
    evaluations: int

    def mechanism(self) -> BoostedMechanism:
        """The designed mechanism (sample it with ``.sample``)."""
        return self.setting.mechanism_sigma(self.sigma)


def minimise_over_sigma(
    objective: Callable[[Array], Array], sigma_lo: ArrayLike, search: DesignSearch
) -> tuple[Array, Array, Array, int]:
    """Minimise ``objective`` over ``σ ∈ [σ_lo, σ_lo e^span]`` for ``N`` problems at once.

    Args:
        objective: ``σ [N, K] → value [N, K]`` (problem ``i`` evaluated at ``K`` σ's).
        sigma_lo: the bracket's lower end of each problem (``[N]``).
        search: the grid and the tolerance.

    Returns:
        ``(σ*, value*, at_edge, evaluations per problem)``: the smallest value evaluated, its σ,
        and whether the grid's minimum was at the upper end.
    """
    lo = np.atleast_1d(np.asarray(sigma_lo, float))
    n = len(lo)
    t = np.linspace(0.0, 1.0, search.grid)
    u = search.span * t * t
    vals = objective(lo[:, None] * np.exp(u)[None, :])
    vals = np.where(np.isnan(vals), np.inf, vals)
    i = np.argmin(vals, axis=1)
    rows = np.arange(n)
    best_u, best_v = u[i], vals[rows, i]
    at_edge = i == search.grid - 1
    a = u[np.maximum(i - 1, 0)]
    b = u[np.minimum(i + 1, search.grid - 1)]

    def f(x: Array) -> Array:
        v = objective((lo * np.exp(x))[:, None])[:, 0]
        return np.where(np.isnan(v), np.inf, v)

    x1, x2 = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
    f1, f2 = f(x1), f(x2)
    evals = search.grid + 2
    for x, v in ((x1, f1), (x2, f2)):
        better = v < best_v
        best_u, best_v = np.where(better, x, best_u), np.where(better, v, best_v)
    while np.any(b - a > search.tol):
        left = f1 <= f2  # the minimum lies in [a, x2]
        b = np.where(left, x2, b)
        a = np.where(left, a, x1)
        x_new = np.where(left, b - GOLDEN * (b - a), a + GOLDEN * (b - a))
        f_new = f(x_new)
        evals += 1
        x1, f1, x2, f2 = (
            np.where(left, x_new, x2),
            np.where(left, f_new, f2),
            np.where(left, x1, x_new),
            np.where(left, f1, f_new),
        )
        better = f_new < best_v
        best_u, best_v = np.where(better, x_new, best_u), np.where(better, f_new, best_v)
    return lo * np.exp(best_u), best_v, at_edge, evals


def _kernel_eps0(
    notion: str, calibration: str, sigma: Array, sensitivity: Array, level: Array
) -> Array:
    """The kernel's own level at σ: exact (or classical) ε at δ, or α Δ²/(2σ²)."""
    if notion == "rdp":
        return np.asarray(level * sensitivity**2 / (2 * sigma**2))
    if calibration == "classical":
        return np.asarray(np.sqrt(2 * np.log(1.25 / level)) * sensitivity / sigma)
    return gaussian_epsilon_batch(sensitivity / sigma, level)


def best_design_batch(
    case: str,
    notion: str,
    rho: ArrayLike,
    sensitivity: ArrayLike,
    size: ArrayLike,
    level: ArrayLike,
    *,
    theta: float = 0.05,
    exact_pairs: int = 9,
    calibration: str = "analytic",
    search: DesignSearch | None = None,
    query_domain: Sequence[float] | None = None,
) -> pd.DataFrame:
    """The best design of many settings at once (Gaussian kernel), arrays broadcast.

    Args:
        case: ``absolute``, ``relative`` or ``fixed`` (|S| = 2τ; a fixed region
            ``[−|S|/2, |S|/2]``).
        notion: ``dp`` (``level`` = δ: exact ε at δ) or ``rdp`` (``level`` = α: exact RDP).
        rho, sensitivity, size, level: the settings.
        theta: θ of the relative region. exact_pairs: pair positions of the exact accounting.
        calibration: how ε₀ is read off σ under ``dp`` (``analytic`` or ``classical``).
        search: the σ search (default :class:`DesignSearch`).
        query_domain: ``[lo, hi]`` of the query's true values (default ``None``: the real
            line); see :meth:`GaussianPBBatch.build`.

    Returns:
        One row per setting: ``sigma, eps0, q, epsilon, gaussian_epsilon, at_edge,
        evaluations`` (exact evaluations per setting).
    """
    check_choice("case", case, ("absolute", "relative", "fixed"))
    check_choice("notion", notion, ("dp", "rdp"))
    check_choice("calibration", calibration, ("analytic", "classical"))
    check_range("theta", theta, ge=0, le=1)
    check_range("exact_pairs", exact_pairs, ge=1)
    sr = search or DesignSearch()
    arrays = np.broadcast_arrays(
        *(np.atleast_1d(np.asarray(x, float)) for x in (rho, sensitivity, size, level))
    )
    r, d, w, lev = (np.ascontiguousarray(x) for x in arrays)
    check_range("rho", r, gt=0, lt=1)
    check_range("sensitivity", d, gt=0)
    check_range("size", w, gt=0)
    if notion == "dp":
        check_range("level", lev, gt=0, lt=1)
    else:
        check_range("level", lev, gt=1)
    check_query_domain(query_domain, float(np.max(d)))
    sigma_g = (w / 2) / special.ndtri((1 + r) / 2)

    def objective(sig: Array) -> Array:
        k = sig.shape[1]
        batch = GaussianPBBatch.build(
            case,
            sig.ravel(),
            np.repeat(r, k),
            np.repeat(d, k),
            np.repeat(w, k),
            theta,
            exact_pairs,
            domain=query_domain,
        )
        rep = np.repeat(lev, k)
        out = batch.epsilon(rep) if notion == "dp" else batch.renyi(rep)
        return np.asarray(out).reshape(sig.shape)

    sigma, value, at_edge, evals = minimise_over_sigma(objective, sigma_g, sr)
    q = GaussianPBBatch.build(case, sigma, r, d, w, theta, 1).q
    return pd.DataFrame(
        {
            "sigma": sigma,
            "eps0": _kernel_eps0(notion, calibration, sigma, d, lev),
            "q": q,
            "epsilon": value,
            "gaussian_epsilon": gaussian_baseline_batch(notion, r, d, w, lev, calibration),
            "at_edge": at_edge,
            "evaluations": evals,
        }
    )


def best_design(setting: PBSetting, search: DesignSearch | None = None) -> BestDesign:
    """The ε₀ (σ) minimising PB-DP's exact ε for ``setting`` under its utility constraint.

    A researcher's entry point: give the region (``case``, ``size`` = |S|), ρ, Δ and δ (or α)::

        from privrepro import boosting
        s = boosting.PBSetting("absolute", rho=0.9, sensitivity=1.0, size=10.0, delta=1e-5)
        best = boosting.best_design(s)      # best.epsilon ≈ 1.004 against the Gaussian's 1.253
        y = best.mechanism().sample(rng, 3.0, 1000).values

    The result never exceeds the Gaussian's ε (σ_G, q = 0, is in the bracket) for the
    absolute and relative regions. Gaussian kernel (the paper's experiments' kernel).
    """
    if setting.kernel != "gaussian":
        raise ConfigError("kernel", setting.kernel, "must be 'gaussian' for the best design")
    sr = search or DesignSearch()
    level = setting.delta if setting.notion == "dp" else setting.alpha
    row = best_design_batch(
        setting.case,
        setting.notion,
        setting.rho,
        setting.sensitivity,
        setting.size,
        level,
        theta=setting.theta,
        exact_pairs=setting.exact_pairs,
        calibration=setting.calibration,
        search=sr,
        query_domain=setting.query_domain,
    ).iloc[0]
    return BestDesign(
        setting=setting,
        sigma=float(row["sigma"]),
        eps0=float(row["eps0"]),
        q=float(row["q"]),
        epsilon=float(row["epsilon"]),
        gaussian_epsilon=float(row["gaussian_epsilon"]),
        at_edge=bool(row["at_edge"]),
        search=sr,
        evaluations=int(row["evaluations"]),
    )


def best_composition_dp(
    setting: PBSetting,
    t_max: int,
    *,
    span: float = 1.5,
    coarse: int = 13,
    fine: int = 17,
    coarse_interval: float = 5e-2,
    interval: float = 1e-2,
    loops: Loops = PLAIN,
) -> pd.DataFrame:
    """For every T ≤ ``t_max``, the σ minimising the exact composed ε at the setting's δ.

    Each candidate σ is one mechanism whose composed ε at every T comes from one pass of
    :func:`privrepro.dp.pld.compose_every_t` over the privacy-loss distribution of a pair
    dominating every neighbouring pair (:func:`privrepro.boosting.dominating.dominating_plds`:
    the paper's pair ``(0, Δ)`` in both orders for the absolute region, exact there; the pair of
    the supremum profile over all pairs otherwise, an upper bound exact at T = 1). Two stages:

    1. ``coarse`` σ's with ``log(σ/σ_G) = span · t²`` on grid ``coarse_interval``, to locate
       each T's optimum;
    2. ``fine`` σ's evenly spaced over the union of the grid cells around every T's coarse
       optimum, on grid ``interval``.

    Every value is an upper bound on its design's true composed ε (connect-the-dots is
    pessimistic; in the absolute region it over-states ε by at most T × the grid interval, far
    less in practice; elsewhere the dominating pair adds its own slack at T > 1), so
    the curve is a valid guarantee of actual designs; where the Gaussian (σ_G, q = 0, composed
    ε in closed form) is lower, it is the design, so the curve never exceeds the Gaussian's. The search's own error is estimated per T
    from a parabola through the fine grid's three points around the minimum
    (``search_gap``: the grid minimum minus the parabola's minimum, 0 at a grid end).

    Returns:
        Rows ``T, sigma, eps0, q, epsilon, gaussian_epsilon, search_gap, error_bound``.
    """
    if setting.notion != "dp":
        raise ConfigError("notion", setting.notion, "must be 'dp' (RDP composes linearly)")
    if setting.kernel != "gaussian":
        raise ConfigError("kernel", setting.kernel, "must be 'gaussian' for the best design")
    check_range("t_max", t_max, ge=1)
    check_range("span", span, gt=0, le=20)
    check_range("coarse", coarse, ge=3)
    check_range("fine", fine, ge=3)
    check_range("coarse_interval", coarse_interval, gt=0, lt=1)
    check_range("interval", interval, gt=0, lt=1)
    d, delta = float(setting.sensitivity), setting.delta
    sigma_g = gaussian_baseline_sigma(setting.size, setting.rho)
    T = np.arange(1, int(t_max) + 1)

    def curves(us: Array, h: float, what: str) -> tuple[Array, Array]:
        """The composed ε of each σ = σ_G e^u at every T (the σ's ``loops`` ran, at least
        one)."""
        out = []
        for u in loops(list(us), what):
            mech = setting.mechanism_sigma(sigma_g * math.exp(float(u)))
            plds = dominating_plds(mech, d, h, n_pairs=setting.exact_pairs)
            out.append(compose_every_t(plds, int(t_max), [delta])[:, 0])
        return np.asarray(us[: len(out)]), np.asarray(out)

    t = np.linspace(0.0, 1.0, coarse)
    u_coarse, e_coarse = curves(span * t * t, coarse_interval, "pb best design per T, coarse σ")
    i = np.argmin(e_coarse, axis=0)
    lo_u = u_coarse[np.maximum(i - 1, 0)].min()
    hi_u = u_coarse[np.minimum(i + 1, len(u_coarse) - 1)].max()
    u_fine, e_fine = curves(np.linspace(lo_u, hi_u, fine), interval, "pb best design per T, fine σ")
    j = np.argmin(e_fine, axis=0)
    best = e_fine[j, np.arange(len(T))]
    gap = _parabola_gap(u_fine, e_fine, j)
    sigma = sigma_g * np.exp(u_fine[j])
    gauss = gaussian_epsilon_batch(d * np.sqrt(T) / sigma_g, np.asarray(delta))
    # the Gaussian (σ_G, q = 0) is a design of the family, its composed ε in closed form
    gaussian_wins = gauss <= best
    best = np.where(gaussian_wins, gauss, best)
    sigma = np.where(gaussian_wins, sigma_g, sigma)
    q = np.array([setting.mechanism_sigma(float(s)).q for s in sigma])
    return pd.DataFrame(
        {
            "T": T,
            "sigma": sigma,
            "eps0": gaussian_epsilon_batch(d / sigma, np.asarray(delta)),
            "q": np.where(gaussian_wins, 0.0, q),
            "epsilon": best,
            "gaussian_epsilon": gauss,
            "search_gap": np.where(gaussian_wins, 0.0, gap),
            "error_bound": np.where(gaussian_wins, 0.0, T * interval),
        }
    )


def _parabola_gap(u: Array, e: Array, j: Array) -> Array:
    """Per column, the grid minimum ``e[j]`` minus the minimum of the parabola through the three
    grid points around it (0 where ``j`` is a grid end or the parabola opens downwards)."""
    n = len(u)
    cols = np.arange(e.shape[1])
    if n < 3:  # fewer σ's than a parabola needs (``loops`` ended the search early)
        return np.zeros(e.shape[1])
    inner = (j > 0) & (j < n - 1)
    jj = np.clip(j, 1, n - 2)
    x0, x1, x2 = u[jj - 1], u[jj], u[jj + 1]
    y0, y1, y2 = e[jj - 1, cols], e[jj, cols], e[jj + 1, cols]
    # divided differences: y = y1 + b (x − x1) + c (x − x0)(x − x1) ... in Newton form
    d01 = (y1 - y0) / (x1 - x0)
    d12 = (y2 - y1) / (x2 - x1)
    curv = (d12 - d01) / (x2 - x0)
    slope_at_x1 = d01 + curv * (x1 - x0)
    with np.errstate(divide="ignore", invalid="ignore"):
        drop = np.where(curv > 0, slope_at_x1**2 / (4 * curv), 0.0)
    return np.where(inner, np.maximum(drop, 0.0), 0.0)
