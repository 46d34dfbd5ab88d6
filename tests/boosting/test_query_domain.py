"""A query domain ``[lo, hi]`` restricts the exact accounting to the neighbouring pairs inside it
(:mod:`privrepro.boosting.worst_pairs`). Held against a brute-force maximum of the scalar
per-pair divergences (:func:`exact_delta_pair`, :func:`exact_renyi_pair`) over a grid of pairs
inside the domain; against the real line (a subset of pairs never gives a larger supremum); and
at Fig. 2(a)'s relative setting, where a modest domain excludes the far pairs that decide the
real line's ε. Fig. 2(a)'s setting (pb paper, Sec. 5.1): ρ = 0.9, Δ = 1, |S| = 10, δ = 1e-5.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from privrepro.boosting import exact
from privrepro.boosting.design import PBSetting
from privrepro.boosting.exact_batch import GaussianPBBatch
from privrepro.boosting.exact_design import DesignSearch, best_design_batch
from privrepro.boosting.fixed_region import fixed_region_extra_loss
from privrepro.boosting.gaussian_mu import gaussian_epsilon_mu
from privrepro.boosting.kernels import GaussianKernel
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.regions import FixedRegion
from privrepro.boosting.worst_pairs import check_query_domain, relative_start_range
from privrepro.config import ConfigError
from privrepro.runner.plan import plan_experiment

RHO, D, SIZE, DELTA = 0.9, 1.0, 10.0, 1e-5


def _setting(case: str, domain: tuple[float, float] | None) -> PBSetting:
    return PBSetting(case, RHO, D, SIZE, delta=DELTA, exact_pairs=5, query_domain=domain)  # type: ignore[arg-type]


def _brute(
    mech: BoostedMechanism, lo: float, hi: float, epsilon: float, alpha: float, n: int = 121
) -> tuple[np.ndarray, float]:
    """Largest δ at ``epsilon`` and at ``epsilon − 1e-3``, and largest Rényi divergence of order
    α, over pairs ``(s, s + d)`` with both values in ``[lo, hi]`` (``d = Δ``, and ``Δ/2`` on a
    coarser grid), both orders."""
    eps = np.array([epsilon, max(epsilon - 1e-3, 0.0)])
    top_delta, top_renyi = np.zeros(2), -np.inf
    for d, k in ((D, n), (D / 2, n // 4)):
        for s in np.linspace(lo, hi - d, k):
            for a, b in ((s, s + d), (s + d, s)):
                top_delta = np.maximum(top_delta, exact.exact_delta_pair(mech, a, b, eps))
                top_renyi = max(top_renyi, exact.exact_renyi_pair(mech, a, b, alpha))
    return top_delta, top_renyi


@pytest.mark.parametrize(
    ("case", "sigma", "domain"),
    [
        ("relative", 8.0, (-30.0, 50.0)),  # q = 0.90: the real line's worst pair starts ~430 out
        ("relative", 8.0, (20.0, 60.0)),  # a domain away from 0: only its mirror reaches 0
        ("fixed", 4.0, (-2.0, 3.0)),  # true values in S ∩ domain = [−2, 3]
        ("fixed", 4.0, (-3.0, 40.0)),  # S ∩ domain = [−3, 5]
    ],
)
def test_bounded_domain_is_the_supremum_over_its_pairs(
    case: str, sigma: float, domain: tuple[float, float]
) -> None:
    """Exact ε at δ = 1e-5 is valid over the domain's pairs (no grid pair above 1e-5, up to the
    root finder's 1e-6 relative) and tight (a pair above 1e-5 at ε − 1e-3); exact Rényi ε at
    α = 10 is at least the grid's maximum (1e-9, rounding) and within 1e-3 relative of it (the
    grid samples what the accountant refines)."""
    mech = _setting(case, domain).mechanism_sigma(sigma)
    eps = exact.exact_epsilon(mech, D, DELTA, 5)
    rdp = exact.exact_rdp(mech, D, 10.0, 5)
    lo, hi = domain
    if case == "fixed":
        lo, hi = max(lo, -SIZE / 2), min(hi, SIZE / 2)
    (top, below), top_renyi = _brute(mech, lo, hi, eps, 10.0)
    assert top <= DELTA * (1 + 1e-6), (eps, top)
    assert below > DELTA, (eps, below)
    assert top_renyi - 1e-9 <= rdp <= top_renyi * (1 + 1e-3), (rdp, top_renyi)


@pytest.mark.parametrize("case", ["relative", "fixed"])
def test_a_domain_never_raises_the_exact_epsilon(case: str) -> None:
    """A domain keeps a subset of the real line's pairs (of S's, for the fixed region), so its
    supremum is at most theirs: checked for ε at δ and Rényi ε at α = 100 (up to 1e-9 relative,
    the two searches refining on different grids), on a domain beyond the search's reach too
    (the tail bound then counts) and on one at the region's own scale."""
    sigma = 8.0 if case == "relative" else 4.0
    line = _setting(case, None).mechanism_sigma(sigma)
    eps_line = exact.exact_epsilon(line, D, DELTA, 5)
    rdp_line = exact.exact_rdp(line, D, 100.0, 5)
    for domain in ((-50.0, 50.0), (0.0, 7.0), (-4.0, -2.5), (-1e5, 1e5)):
        mech = replace(line, domain=domain)
        assert exact.exact_epsilon(mech, D, DELTA, 5) <= eps_line * (1 + 1e-9), domain
        assert exact.exact_rdp(mech, D, 100.0, 5) <= rdp_line * (1 + 1e-9), domain


def test_absolute_region_ignores_the_domain() -> None:
    """Translation invariance: every pair at distance Δ has the same densities up to a shift,
    so a domain holding one gives the real line's ε and Rényi ε (to 1e-12)."""
    line = _setting("absolute", None).mechanism_sigma(3.5)
    mech = replace(line, domain=(100.0, 101.5))
    assert exact.exact_epsilon(mech, D, DELTA, 5) == pytest.approx(
        exact.exact_epsilon(line, D, DELTA, 5), rel=1e-12
    )
    assert exact.exact_rdp(mech, D, 10.0, 5) == pytest.approx(
        exact.exact_rdp(line, D, 10.0, 5), rel=1e-12
    )


def test_a_modest_domain_lowers_the_best_design_of_fig2a_relative() -> None:
    """Fig. 2(a), relative region, |S| = 10, δ = 1e-5: on the real line the best design is the
        Gaussian itself (q = 0; its ε is the utility-matched Gaussian's, computed here by
        ``gaussian_epsilon``), because every boosted design has far pairs (hundreds of units out)
        worse than the Gaussian. With the query in [−50, 50] those pairs are gone and boosting pays:
        the best ε falls strictly below the Gaussian's (by more than 0.05) with q > 0. (σ searched
    from σ_G to 10 σ_G, coarsely: the bounded optimum, near 1.1 σ_G, lies well inside.)"""
    search = DesignSearch(span=math.log(10.0), grid=12, tol=1e-4)
    args = ("relative", "dp", RHO, D, SIZE, DELTA)
    line = best_design_batch(*args, exact_pairs=5, search=search).iloc[0]
    bounded = best_design_batch(
        *args, exact_pairs=5, search=search, query_domain=[-50.0, 50.0]
    ).iloc[0]
    assert line["epsilon"] == pytest.approx(line["gaussian_epsilon"], rel=1e-6)
    assert bounded["q"] > 0
    assert bounded["epsilon"] < line["epsilon"] - 0.05
    # below even its own kernel's ε (the analytic Gaussian's, Balle & Wang 2018): the limit of
    # the real line's far pairs, so no bound beyond the search's reach may count in [−50, 50]
    assert bounded["epsilon"] < gaussian_epsilon_mu(DELTA, D / bounded["sigma"]) - 0.01


def test_relative_start_range_mirror() -> None:
    """``[L, U]`` by hand (module docstring of worst_pairs, Δ = 1): the real line gives
    ``[−1/2, ∞)``; ``[−30, 50]`` gives ``[−1/2, 49]``; ``[20, 60]`` lies above −1/2, so
    ``[20, 59]``; ``[−60, −20]`` is its mirror, the same ``[20, 59]``."""
    lo = np.array([-np.inf, -30.0, 20.0, -60.0])
    hi = np.array([np.inf, 50.0, 60.0, -20.0])
    low, up = relative_start_range(np.ones(4), lo, hi)
    np.testing.assert_allclose(low, [-0.5, -0.5, 20.0, 20.0])
    np.testing.assert_allclose(up, [np.inf, 49.0, 59.0, 59.0])


@pytest.mark.parametrize(
    "domain",
    [[5.0, 1.0], [0.0, float("inf")], [float("nan"), 3.0], [0.0, 0.5], [1.0], "wide", [0, True]],
)
def test_bad_domains_are_one_line_errors(domain: object) -> None:
    """Unordered, infinite, NaN, narrower than Δ = 1, not a pair: the key, the value and the
    allowed range in one line, before any compute."""
    with pytest.raises(ConfigError) as err:
        check_query_domain(domain, 1.0)
    text = str(err.value)
    assert text.startswith("query_domain = ") and "hi - lo >= Δ = 1.0" in text
    assert "\n" not in text
    with pytest.raises(ConfigError, match="query_domain"):
        GaussianPBBatch.build("relative", 3.0, RHO, D, SIZE, domain=domain)  # type: ignore[arg-type]


def test_domain_errors_of_the_callers() -> None:
    """A fixed region's domain must overlap S; a non-Gaussian kernel is refused (the search's
    bounds are the Gaussian's); PBSetting checks the domain against its own Δ."""
    with pytest.raises(ConfigError, match=r"must overlap the fixed region \[-5.0, 5.0\]"):
        GaussianPBBatch.build("fixed", 3.0, RHO, D, SIZE, domain=[6.0, 9.0])
    with pytest.raises(ConfigError, match="needs kernel = 'gaussian'"):
        PBSetting("relative", RHO, D, SIZE, kernel="laplace", query_domain=(0.0, 5.0))
    with pytest.raises(ConfigError, match=r"must overlap the fixed region \[-5.0, 5.0\]"):
        PBSetting("fixed", RHO, D, SIZE, query_domain=(-9.0, -6.0))
    with pytest.raises(ConfigError, match=r"hi - lo >= Δ = 4.0"):
        PBSetting("relative", RHO, 4.0, SIZE, query_domain=(0.0, 3.0))


def test_the_domain_is_part_of_a_units_identity_only_when_set(tmp_path: Path) -> None:
    """Fig. 2's plan (profile tiny): with the default (null) no unit holds the key, so units
    stored before the key existed keep their hash; with ``[-50, 50]`` every unit holds it and
    every hash changes; ``[-1, 1]`` is narrower than Fig. 2's larger Δ = 4 and refused in one
    line before any compute."""
    paths = [f"paths.{k}_dir={tmp_path / k}" for k in ("experiments", "results", "plots")]
    base = plan_experiment("pb/fig2", ["profile=tiny", *paths])
    bounded = plan_experiment("pb/fig2", ["profile=tiny", "params.query_domain=[-50,50]", *paths])
    assert all("query_domain" not in u for u in base.units)
    assert all(u["query_domain"] == [-50.0, 50.0] for u in bounded.units)
    assert not set(base.unit_ids) & set(bounded.unit_ids)
    with pytest.raises(ConfigError) as err:
        plan_experiment("pb/fig2", ["profile=tiny", "params.query_domain=[-1,1]", *paths])
    assert str(err.value).startswith("params.query_domain = [-1.0, 1.0]: ")
    assert "hi - lo >= Δ = 4.0" in str(err.value)


def test_fig5_extra_loss_over_a_domain_inside_s() -> None:
    """Fig. 5(b)'s setting (S = [−10, 10], σ = 10, Δ = 1, ρ = 0.9, α = 10; Sec. 5.3) with the
    true values in [−2, 2]: the exact row plus the kernel's D_α at Δ (closed form αΔ²/(2σ²)) is
    the largest D_α of a 41-start grid of pairs inside [−2, 2] (within 1e-3 relative, at least
    it up to 1e-9), and below all of S's (the pairs near S's ends are gone)."""
    kw = dict(exact_pairs=5)
    line = fixed_region_extra_loss(20.0, D, 10.0, [0.9], [10.0], **kw)  # type: ignore[arg-type]
    bounded = fixed_region_extra_loss(
        20.0,
        D,
        10.0,
        [0.9],
        [10.0],
        query_domain=[-2.0, 2.0],
        **kw,  # type: ignore[arg-type]
    )
    got = float(bounded.loc[bounded["accountant"] == "exact", "extra_loss"].iloc[0])
    full = float(line.loc[line["accountant"] == "exact", "extra_loss"].iloc[0])
    mech = BoostedMechanism(GaussianKernel(10.0), FixedRegion(-10.0, 10.0), 0.9)
    brute = max(
        exact.exact_renyi_pair(mech, a, b, 10.0)
        for s in np.linspace(-2.0, 1.0, 41)
        for a, b in ((s, s + D), (s + D, s))
    )
    kernel = 10.0 * D**2 / (2 * 10.0**2)
    assert brute - 1e-9 <= got + kernel <= brute + 1e-3 * abs(brute)
    assert got < full - 1e-3
    with pytest.raises(ConfigError, match="must overlap the fixed region"):
        fixed_region_extra_loss(20.0, D, 10.0, [0.9], [10.0], query_domain=[11.0, 14.0])
