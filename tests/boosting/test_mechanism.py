"""The boosted mechanism (eq. 2–3): mass ρ in the region, density integrates to 1, q = 0 gives
the kernel, and both samplers draw from eq. (2)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate

from privrepro.boosting.kernels import GaussianKernel, LaplaceKernel
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.regions import AbsoluteRegion, FixedRegion, RelativeRegion, boosting_rate

REGIONS = [AbsoluteRegion(5.0), RelativeRegion(0.05, 5.0), FixedRegion(-10.0, 10.0)]
KERNELS = [GaussianKernel(3.73), LaplaceKernel(2.5)]


@pytest.mark.parametrize("p", [0.2, 0.5, 0.81])
def test_eq3_is_the_closed_form(p: float) -> None:
    rho = 0.9
    pbar = 1 - p
    eq3 = 1 / rho + 1 / pbar - 1 / (rho * pbar)  # pb paper eq. (3) as printed
    assert boosting_rate(p, rho) == pytest.approx(eq3, abs=1e-12)
    assert boosting_rate(p, rho) == pytest.approx((rho - p) / (rho * (1 - p)), abs=1e-12)


@pytest.mark.parametrize("region", REGIONS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_in_region_mass_is_rho_at_worst_input(region, kernel) -> None:  # type: ignore[no-untyped-def]
    mech = BoostedMechanism(kernel, region, 0.9)
    # identity of eq. (3): (1 − p̄)/(1 − p̄ q) = ρ at the worst Q (note §5.2, to 1e-12)
    assert float(mech.in_region_mass(region.worst_center())) == pytest.approx(0.9, abs=1e-12)
    # elsewhere the mass is at least ρ
    for c in (-3.0, 2.0, 7.5):
        if region.kind == "fixed" and not -10 <= c <= 10:
            continue
        assert float(mech.in_region_mass(c)) >= 0.9 - 1e-12


@pytest.mark.parametrize("region", REGIONS)
@pytest.mark.parametrize("kernel", KERNELS)
def test_density_integrates_to_one(region, kernel) -> None:  # type: ignore[no-untyped-def]
    mech = BoostedMechanism(kernel, region, 0.9)
    for c in (0.0, 1.0):
        lo, hi = (float(v) for v in region.bounds(c))
        pts = sorted({lo, hi, c})
        total = sum(
            integrate.quad(
                lambda y, c=c: float(mech.density(np.asarray(y), c)), a, b, limit=200, epsabs=1e-12
            )[0]
            for a, b in zip([-200.0, *pts], [*pts, 200.0], strict=True)
        )
        # Appendix A; quadrature tolerance 1e-9
        assert total == pytest.approx(1.0, abs=1e-9)


def test_q_zero_gives_the_kernel() -> None:
    k = GaussianKernel(2.0)
    region = AbsoluteRegion(5.0)
    mech = BoostedMechanism(k, region, 0.5)  # kernel coverage 0.987 ≥ ρ → q = 0
    assert mech.q == 0.0
    y = np.linspace(-10, 10, 41)
    assert np.allclose(mech.density(y, 0.7), k.pdf(y - 0.7), rtol=1e-14, atol=0)


def test_rho_near_one_truncates_to_the_region() -> None:
    mech = BoostedMechanism(GaussianKernel(3.0), AbsoluteRegion(5.0), 1 - 1e-9)
    assert mech.q == pytest.approx(1.0, abs=1e-8)
    assert float(mech.density(np.asarray(8.0), 0.0)) < 1e-9


@pytest.mark.parametrize("method", ["rejection", "mixture"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_sampler_in_region_mass_matches_rho(method: str, kernel) -> None:  # type: ignore[no-untyped-def]
    mech = BoostedMechanism(kernel, AbsoluteRegion(5.0), 0.9)
    n = 200_000
    out = mech.sample(np.random.default_rng(1), 0.0, n, method=method)
    frac = float(np.mean(np.abs(out.values) <= 5.0))
    se = math.sqrt(0.9 * 0.1 / n)
    assert abs(frac - 0.9) < 5 * se  # 5 standard errors
    if method == "rejection":
        expect = mech.expected_proposals()
        assert expect == pytest.approx(0.9 / mech.region.min_coverage(kernel), rel=1e-12)
        # proposals per output: geometric with mean 1/a; sd of the mean ≈ sqrt((1−a))/a/√n
        a = 1 / expect
        assert abs(out.proposals / n - expect) < 5 * math.sqrt(1 - a) / a / math.sqrt(n)


@pytest.mark.parametrize("method", ["rejection", "mixture"])
def test_sampler_matches_the_density(method: str) -> None:
    # binned chi-square-like check of the full distribution of eq. (2) at an off-centre input
    mech = BoostedMechanism(GaussianKernel(3.0), RelativeRegion(0.2, 4.0), 0.95)
    c = 2.0
    n = 200_000
    y = mech.sample(np.random.default_rng(2), c, n, method=method).values
    edges = np.array([-np.inf, -8, -4, -1.6, 0, 2, 4, 6.4, 8, 12, np.inf])
    counts = np.histogram(y, edges)[0]
    probs = [
        integrate.quad(
            lambda t: float(mech.density(np.asarray(t), c)), max(a, -80), min(b, 80), limit=200
        )[0]
        for a, b in itertools.pairwise(edges)
    ]
    expected = n * np.array(probs)
    z = (counts - expected) / np.sqrt(expected)
    assert np.max(np.abs(z)) < 5.0
