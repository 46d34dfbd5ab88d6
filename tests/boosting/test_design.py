"""Gaussian baseline, Algorithm 2 against the note's optimised values (§5.2), the inverse uses."""

from __future__ import annotations

import math

import pytest

from privrepro.boosting.design import (
    PBSetting,
    gaussian_baseline_epsilon,
    gaussian_baseline_sigma,
    largest_rho,
    narrowest_size,
    optimise_eps0,
    ternary_search,
)
from privrepro.config import ConfigError


@pytest.mark.parametrize(
    ("rho", "size", "sigma"),
    [(0.9, 10.0, 3.03978415956), (0.8, 10.0, 3.90152073036), (0.9, 20.0, 6.07956831912)],
)  # note §5.1
def test_baseline_sigma(rho: float, size: float, sigma: float) -> None:
    assert gaussian_baseline_sigma(size, rho) == pytest.approx(sigma, rel=1e-10)


@pytest.mark.parametrize(
    ("rho", "dq", "size", "exact5", "classic5", "exact7", "rdp"),
    [
        # note §5.1 table: δ = 1e-5 exact / classical, δ = 1e-7 exact, RDP α = 2 / 10 / 100
        (0.9, 1.0, 10.0, 1.252752, 1.593799, 1.585124, (0.108222, 0.541109, 5.411087)),
        (0.9, 1.0, 50.0, 0.215905, 0.318760, 0.287355, (0.004329, 0.021644, 0.216443)),
        (0.8, 4.0, 20.0, 2.049378, 2.483547, 2.558720, (0.262780, 1.313900, 13.138995)),
    ],
)
def test_baseline_epsilon(rho, dq, size, exact5, classic5, exact7, rdp) -> None:  # type: ignore[no-untyped-def]
    s = PBSetting("absolute", rho, dq, size)
    assert gaussian_baseline_epsilon(s) == pytest.approx(exact5, abs=1e-6)
    assert gaussian_baseline_epsilon(s, "classical") == pytest.approx(classic5, abs=1e-6)
    assert gaussian_baseline_epsilon(
        PBSetting("absolute", rho, dq, size, delta=1e-7)
    ) == pytest.approx(exact7, abs=1e-6)
    for a, v in zip((2.0, 10.0, 100.0), rdp, strict=True):
        assert gaussian_baseline_epsilon(
            PBSetting("absolute", rho, dq, size, notion="rdp", alpha=a)
        ) == pytest.approx(v, abs=1e-6)


@pytest.mark.parametrize(
    ("rho", "dq", "size", "kw", "gauss", "pb"),
    [
        # note §5.2 "optimised values, Fig. 2 style": Gaussian → PB (literal Algorithm 2)
        (0.9, 1.0, 10.0, {"delta": 1e-7}, 1.5851, 1.5349),
        (0.9, 1.0, 20.0, {"delta": 1e-5}, 0.5860, 0.5751),
        (0.9, 1.0, 50.0, {"notion": "rdp", "alpha": 10.0}, 0.02164, 0.02118),
        (0.8, 4.0, 10.0, {"delta": 1e-7}, 5.5014, 3.5658),
        (0.8, 4.0, 20.0, {"notion": "rdp", "alpha": 100.0}, 13.139, 3.24442),
        (0.8, 4.0, 50.0, {"delta": 1e-5}, 0.7456, 0.7250),
    ],
)
def test_algorithm2_matches_note(rho, dq, size, kw, gauss, pb) -> None:  # type: ignore[no-untyped-def]
    s = PBSetting("absolute", rho, dq, size, **kw)
    assert gaussian_baseline_epsilon(s) == pytest.approx(gauss, abs=6e-5 if gauss < 1 else 6e-4)
    res = optimise_eps0(s)
    assert res.epsilon == pytest.approx(pb, abs=6e-5 if pb < 1 else 6e-4)  # printed digits
    assert res.epsilon <= gaussian_baseline_epsilon(s) + 1e-9  # ε₀ = ε_G gives q = 0


def test_relative_optimum_matches_note() -> None:
    # note §5.2: relative, θ = 0.05 (assumed), ρ = 0.9, Δ = 1, |S| = 10 → 1.1106 (δ = 1e-5), 3.04963 (α = 100)
    assert optimise_eps0(PBSetting("relative", 0.9, 1.0, 10.0)).epsilon == pytest.approx(
        1.1106, abs=1e-4
    )
    r = PBSetting("relative", 0.9, 1.0, 10.0, notion="rdp", alpha=100.0)
    assert optimise_eps0(r).epsilon == pytest.approx(3.04963, abs=1e-5)


def test_fixed_region_optimum_degenerates() -> None:
    # note §2.3(b): the fixed-region optimum drives ε₀ → 0 and the total ε → 0
    res = optimise_eps0(PBSetting("fixed", 0.9, 1.0, 10.0))
    assert res.eps0 < 1e-5 and res.epsilon < 1e-5


def test_ternary_search_finds_a_parabola_minimum() -> None:
    res = ternary_search(lambda x: (x - 0.37) ** 2, 0.0, 2.0, tol=1e-9)
    assert res.eps0 == pytest.approx(0.37, abs=1e-8)


def test_inverse_uses_round_trip() -> None:
    s = PBSetting("absolute", 0.9, 1.0, 10.0, notion="rdp", alpha=10.0)
    budget = optimise_eps0(s).epsilon
    # the largest ρ for that budget is the ρ we started from (bisection tolerance 1e-4, plus the
    # ternary search's tolerance on the objective)
    assert largest_rho(s, budget + 1e-7, tol=1e-5) == pytest.approx(0.9, abs=2e-4)
    assert narrowest_size(s, budget + 1e-7, tol=1e-5) == pytest.approx(10.0, rel=2e-3)


@pytest.mark.parametrize(
    ("key", "kw"),
    [
        ("rho", {"rho": 1.2}),
        ("sensitivity", {"sensitivity": 0.0}),
        ("alpha", {"alpha": 1.0}),
        ("delta", {"delta": 0.0}),
        ("case", {"case": "square"}),
        ("notion", {"notion": "zcdp"}),
        ("exact_pairs", {"exact_pairs": 0}),
    ],
)
def test_bad_settings_name_the_key(key: str, kw: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=f"^{key} = "):
        PBSetting(**kw)  # type: ignore[arg-type]


def test_classical_calibration_does_not_change_the_optimum() -> None:
    # note §2.4: Algorithm 2 searches over σ in effect; calibration only relabels ε₀ (the range
    # [0, ε_G] must contain the optimum in both labellings, which holds here)
    a = optimise_eps0(PBSetting("absolute", 0.9, 1.0, 10.0), tol=1e-8)
    c = optimise_eps0(
        PBSetting("absolute", 0.9, 1.0, 10.0, calibration="classical"),
        tol=1e-8,
        eps_max=gaussian_baseline_epsilon(PBSetting("absolute", 0.9, 1.0, 10.0), "classical"),
    )
    assert c.epsilon == pytest.approx(a.epsilon, abs=1e-6)
    assert not math.isclose(a.eps0, c.eps0, rel_tol=1e-3)


def test_laplace_kernel_setting() -> None:
    # Laplace kernel b = Δ/ε₀ (pure ε₀-DP): with ρ below its coverage there is no boosting and the
    # paper's ε is the kernel's ε₀ at δ → 0 (closed form: δ_Z(ε) = 0 for ε ≥ ε₀)
    s = PBSetting("absolute", 0.5, 1.0, 10.0, kernel="laplace", delta=1e-9)
    mech = s.mechanism(1.0)
    assert mech.q == 0.0
    assert s.paper_epsilon_of(mech) == pytest.approx(1.0, abs=1e-8)
    # with boosting, the exact ε never exceeds the sound bound
    b = PBSetting("absolute", 0.95, 1.0, 4.0, kernel="laplace", delta=1e-6)
    m = b.mechanism(0.8)
    assert m.q > 0
    assert b.exact_epsilon_of(m) <= b.sound_epsilon_of(m) + 1e-9
