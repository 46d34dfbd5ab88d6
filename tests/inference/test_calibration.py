"""σ, Laplace scale and exact δ of the ip mechanisms against the note's §7 check values."""

from __future__ import annotations

import numpy as np
import pytest

from privrepro.config.validation import ConfigError
from privrepro.inference.calibration import (
    analytic_sigma,
    calibrate,
    classical_sigma,
    gauss_input_sigma,
    gauss_output_sigma,
    gaussian_true_delta,
    lap_output_scale,
    lipschitz_for_mode,
)

# c(δ) = sqrt(2 ln(1.25/δ)); note §7 (computed with numpy/scipy), closed form, tol 1e-12 relative.
C = {1e-5: 4.844805262605389, 1e-3: 3.7764795327, 1e-4: 4.3436123039, 1e-6: 5.2988025269}


@pytest.mark.parametrize("delta,c", sorted(C.items()))
def test_classical_constant(delta: float, c: float) -> None:
    # the note prints 10–16 digits; compare to its precision
    assert classical_sigma(1.0, delta, 1.0) == pytest.approx(c, rel=1e-10)


@pytest.mark.parametrize(
    "eps,alpha,mu,delta,sigma",
    [
        (1.0, 0.1, 1.0, 1e-5, 0.4844805263),  # note §7: Gauss σ, ε=1, α=0.1
        (1.0, 0.2, 1.0, 1e-5, 0.9689610525),
        (0.5, 0.1, 1.0, 1e-5, 0.9689610525),
        (1.0, 0.1, 2.0, 1e-5, 0.9689610525),  # μ = 2 doubles σ (Def. 4)
        (0.25, 0.1, 1.0, 1e-5, 1.9379221050),
        (5.0, 0.1, 1.0, 1e-5, 0.0968961053),
        (10.0, 0.1, 1.0, 1e-5, 0.0484480526),
        (0.1, 0.001, 1.0, 1e-5, 0.0484480526),
        (0.1, 0.01, 1.0, 1e-5, 0.4844805263),
        (2.0, 0.05, 1.0, 1e-5, 0.1211201316),
        (1.0, 0.1, 1.0, 1e-6, 0.5298802527),
    ],
)
def test_gauss_sigma_note_values(
    eps: float, alpha: float, mu: float, delta: float, sigma: float
) -> None:
    # note §7 prints 10 decimals: absolute tolerance 1e-10
    assert float(gauss_output_sigma(eps, delta, alpha, mu)) == pytest.approx(sigma, abs=1e-10)
    if mu == 1.0:
        assert float(gauss_input_sigma(eps, delta, alpha)) == pytest.approx(sigma, abs=1e-10)


def test_fig_grids_vectorised() -> None:
    # note §7: Fig 3 σ grid (α = linspace(0, 0.2, 20), ε = 1) starts 0, 0.050998, 0.101996 ...
    s = gauss_input_sigma(1.0, 1e-5, np.linspace(0, 0.2, 20))
    assert s[:3] == pytest.approx([0.0, 0.050998, 0.101996], abs=1e-6)
    assert s[-2:] == pytest.approx([0.917963, 0.968961], abs=1e-6)
    # Fig 5 σ at ε=1 for α ∈ {0, 0.05, 0.07, 0.1, 0.2}
    s5 = gauss_output_sigma(1.0, 1e-5, [0, 0.05, 0.07, 0.1, 0.2])
    assert s5 == pytest.approx([0, 0.24224, 0.339136, 0.484481, 0.968961], abs=1e-6)
    # tuning σ_train at ε_t = 1, α = 0.1, multipliers {0.25, 0.5, 0.85, 1, 1.15, 2}
    st = gauss_input_sigma(np.array([0.25, 0.5, 0.85, 1, 1.15, 2.0]), 1e-5, 0.1)
    assert st == pytest.approx(
        [1.937922, 0.968961, 0.569977, 0.484481, 0.421287, 0.24224], abs=1e-6
    )


@pytest.mark.parametrize(
    "eps,alpha,mu,b", [(1.0, 0.1, 1.0, 0.1), (0.5, 0.1, 1.0, 0.2), (1.0, 0.2, 3.0, 0.6)]
)
def test_laplace_scale(eps: float, alpha: float, mu: float, b: float) -> None:
    # note §7: Laplace b = μ α / ε (Def. 3)
    assert float(lap_output_scale(eps, alpha, mu)) == pytest.approx(b, rel=1e-12)


@pytest.mark.parametrize(
    "eps,delta_true",
    [
        (0.1, 2.636e-09),
        (0.5, 1.608e-08),
        (1.0, 4.114e-08),
        (2.0, 1.336e-07),
        (3.0, 3.224e-07),
        (5.0, 1.349e-06),
        (10.0, 2.265e-05),
        (20.0, 1.527e-03),
        (50.0, 0.586),
    ],
)
def test_true_delta_of_classical_sigma(eps: float, delta_true: float) -> None:
    # note §7 (Balle & Wang 2018 exact δ, Δ = αμ): 4 significant digits printed
    sigma = float(gauss_output_sigma(eps, 1e-5, 0.1, 1.0))
    assert float(gaussian_true_delta(eps, sigma, 0.1)) == pytest.approx(delta_true, rel=2e-3)


def test_nominal_delta_1e2() -> None:
    # note §7: nominal δ = 1e-2 at ε = 1 gives exact δ 1.364359e-04
    sigma = float(classical_sigma(1.0, 1e-2, 1.0))
    assert float(gaussian_true_delta(1.0, sigma, 1.0)) == pytest.approx(1.364359e-04, rel=1e-6)


def test_break_even_near_8_42() -> None:
    # note M1: the classical σ meets δ = 1e-5 up to ε ≈ 8.42 and misses it beyond
    for eps, ok in ((8.3, True), (8.55, False)):
        s = float(classical_sigma(eps, 1e-5, 1.0))
        assert (float(gaussian_true_delta(eps, s, 1.0)) <= 1e-5) is ok


def test_analytic_sigma_meets_delta_exactly() -> None:
    s = analytic_sigma(10.0, 1e-5, 0.1)
    assert float(gaussian_true_delta(10.0, s, 0.1)) == pytest.approx(1e-5, rel=1e-8)
    assert s > float(classical_sigma(10.0, 1e-5, 0.1))  # the classical σ is too small at ε = 10
    assert analytic_sigma(1.0, 1e-5, 0.1) < float(classical_sigma(1.0, 1e-5, 0.1))


def test_bad_inputs_are_named() -> None:
    with pytest.raises(ConfigError, match="epsilon"):
        gauss_input_sigma(0.0, 1e-5, 0.1)
    with pytest.raises(ConfigError, match="delta"):
        gauss_input_sigma(1.0, 1.0, 0.1)
    with pytest.raises(ConfigError, match="alpha"):
        gauss_output_sigma(1.0, 1e-5, -0.1)


def test_corrected_mode_uses_exact_sigma_where_classical_fails() -> None:
    # note M1: classical σ misses δ = 1e-5 at ε = 10 (exact δ 2.265e-5); corrected switches
    repo, corr = calibrate(10.0, 1e-5, 0.1, "repo_compat"), calibrate(10.0, 1e-5, 0.1, "corrected")
    assert (repo.rule, corr.rule) == ("classical", "analytic") and corr.sigma > repo.sigma
    assert repo.sigma == pytest.approx(0.0484480526, rel=1e-9)  # note §7, ε = 10, α = 0.1
    assert repo.true_delta == pytest.approx(2.265374e-5, rel=1e-6)  # docs/ip.md, note M1
    assert corr.true_delta == pytest.approx(1e-5, rel=1e-6)  # the analytic σ meets δ exactly
    # where the classical σ holds, both modes keep it (ε = 1: exact δ 4.1e-8)
    assert calibrate(1.0, 1e-5, 0.1, "corrected") == calibrate(1.0, 1e-5, 0.1, "repo_compat")
    none = calibrate(1.0, 1e-5, 0.0)
    assert (none.sigma, none.rule, none.true_delta) == (0.0, "none", 0.0)


def test_calibrate_refuses_bad_mode_and_sensitivity() -> None:
    with pytest.raises(ConfigError, match="mode"):
        calibrate(1.0, 1e-5, 0.1, "paper")
    with pytest.raises(ConfigError, match="sensitivity"):
        calibrate(1.0, 1e-5, -0.1)
    assert lipschitz_for_mode("repo_compat", 2.5) == 1.0  # the notebooks' μ_C = 1
    assert lipschitz_for_mode("corrected", 2.5) == 2.5
