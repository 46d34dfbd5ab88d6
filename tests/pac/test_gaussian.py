"""pac paper, Theorem 3 (anisotropic / isotropic noise), Sec. 7.1 composition, Example 5, DP baselines."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privrepro.pac.gaussian import (
    anisotropic_variances,
    composition_budget,
    dp_local_noise_norm,
    dp_mean_noise_norm,
    example5_individual_mi,
    example5_whole_set_mi,
    isotropic_variance,
    logdet_mi_bound,
    optimal_individual_variances,
    optimal_whole_set_variances,
    trace_mi_bound,
)


def test_theorem3_two_eigenvalues() -> None:
    # pac note T4: λ = (4, 1), v = 1 → variances (3, 1.5), E||B||^2 = 4.5, ½ log det = ½ log(35/9)
    var = anisotropic_variances([4.0, 1.0], 1.0)
    assert var == pytest.approx([3.0, 1.5], abs=1e-12)
    assert var.sum() == pytest.approx(4.5, abs=1e-12)
    assert logdet_mi_bound([4.0, 1.0], var) == pytest.approx(0.5 * np.log(35 / 9), abs=1e-12)
    assert trace_mi_bound([4.0, 1.0], var) == pytest.approx(1.0, abs=1e-12)
    assert 2 * isotropic_variance([4.0, 1.0], 1.0) == pytest.approx(5.0, abs=1e-12)  # iso: 5 > 4.5


def test_theorem3_four_eigenvalues() -> None:
    # pac note T4: λ = (0.5, 0.2, 0.05, 0.01), v = 0.25
    lam = [0.5, 0.2, 0.05, 0.01]
    var = anisotropic_variances(lam, 0.25)
    assert var == pytest.approx([2.090105, 1.321898, 0.660949, 0.295585], abs=1e-6)
    assert var.sum() == pytest.approx(4.368537, abs=1e-6)
    assert logdet_mi_bound(lam, var) == pytest.approx(0.230785, abs=1e-6)
    assert 4 * isotropic_variance(lam, 0.25) == pytest.approx(6.08, abs=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(1e-6, 1e3), min_size=1, max_size=20), st.floats(1e-3, 10.0))
def test_trace_identity_and_optimality(lam: list[float], v: float) -> None:
    # Appendix B, (17): Σ λ_j / λ_B,j = 2v exactly, and anisotropic never costs more than isotropic
    var = anisotropic_variances(lam, v)
    assert np.sum(np.asarray(lam) / var) == pytest.approx(2 * v, rel=1e-9)
    assert var.sum() <= len(lam) * isotropic_variance(lam, v) * (1 + 1e-9)
    assert logdet_mi_bound(lam, var) <= v * (1 + 1e-9)  # log(1+x) <= x


def test_dense_logdet_matches_diagonal() -> None:
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    lam, lb = np.array([3.0, 1.0, 0.2, 0.1]), np.array([0.5, 0.6, 0.7, 0.8])
    got = logdet_mi_bound(q @ np.diag(lam) @ q.T, q @ np.diag(lb) @ q.T)
    assert got == pytest.approx(logdet_mi_bound(lam, lb), abs=1e-12)  # rotation invariance


def test_1d_gaussian_mean_exact_mi() -> None:
    # pac note T3: σ_B^2 = (σ^2/n)/(2v); exact MI ½ log(1 + 2v) for Gaussian data
    for s2, n, v, var_ref, mi_ref in [
        (1, 100, 0.5, 0.01, 0.34657),
        (1, 100, 1, 0.005, 0.54931),
        (1, 100, 0.1, 0.05, 0.09116),
        (4, 1000, 0.125, 0.016, 0.11157),
    ]:
        var = anisotropic_variances([s2 / n], v)[0]
        assert var == pytest.approx(var_ref, rel=1e-12)
        assert example5_whole_set_mi([s2], n, var) == pytest.approx(mi_ref, abs=5e-6)


def test_composition() -> None:
    # pac note T11: T mechanisms share v → std grows by sqrt(T)
    lam = [2.0, 0.5]
    for t, factor in [(4, 2.0), (16, 4.0)]:
        ratio = anisotropic_variances(lam, composition_budget(1.0, t)) / anisotropic_variances(
            lam, 1.0
        )
        assert np.sqrt(ratio) == pytest.approx([factor, factor], rel=1e-12)


def test_example5_check_values() -> None:
    # pac note T8: d = 1, Σ = 1, n = 100
    assert example5_individual_mi([1.0], 100, 0.0) == pytest.approx(
        0.5 * np.log(100 / 99), rel=1e-12
    )
    assert optimal_individual_variances([1.0], 100, 0.1) == pytest.approx([0.0])
    assert optimal_whole_set_variances([1.0], 100, 0.1) == pytest.approx([0.045167], abs=1e-6)
    assert anisotropic_variances([0.01], 0.1) == pytest.approx([0.05])
    assert optimal_individual_variances([1.0], 100, 0.001) == pytest.approx([0.040050], abs=1e-6)
    assert optimal_whole_set_variances([1.0], 100, 0.001) == pytest.approx([4.9950], abs=1e-4)


def test_example5_optimal_noise_meets_budget() -> None:
    lam = np.array([4.0, 1.0, 0.1])
    for v in [0.001, 0.01, 0.3]:
        s_ind = optimal_individual_variances(lam, 50, v)
        s_all = optimal_whole_set_variances(lam, 50, v)
        noiseless = example5_individual_mi(lam, 50, 0.0)  # 3/2 log(50/49) = 0.0303
        if v >= noiseless:
            assert np.all(s_ind == 0.0)  # eq. (12): no noise needed for individual privacy
        else:
            assert example5_individual_mi(lam, 50, s_ind) == pytest.approx(v, rel=1e-8)
        assert example5_whole_set_mi(lam, 50, s_all) == pytest.approx(v, rel=1e-8)
        # exact whole-set noise is below Theorem 3's (log(1+x) <= x), individual below both
        assert s_ind.sum() <= s_all.sum() <= anisotropic_variances(lam / 50, v).sum()


def test_dp_baselines() -> None:
    # pac note T5: d/√2 = 2172.2 (Example 2), d √(2/(N v)) = 17.736 (Example 3)
    assert dp_local_noise_norm(3072, 1.0) == pytest.approx(2172.2320, abs=1e-4)
    assert dp_local_noise_norm(64, 1.0) == pytest.approx(45.2548, abs=1e-4)
    assert dp_mean_noise_norm(3072, 60_000, 1.0) == pytest.approx(17.7362, abs=1e-4)
    assert dp_mean_noise_norm(64, 1797, 1.0) == pytest.approx(2.1351, abs=1e-4)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="v ="):
        anisotropic_variances([1.0], 0.0)
    with pytest.raises(ValueError, match="eigenvalues"):
        anisotropic_variances([-1.0], 1.0)


def test_noise_norms_are_the_root_traces() -> None:
    # pac note T4: λ = (4, 1), v = 1 → E||B||^2 = 4.5 (Theorem 3) and 2 · 5/2 = 5 (isotropic)
    from privrepro.pac.gaussian import anisotropic_noise_norm, isotropic_noise_norm

    assert anisotropic_noise_norm([4.0, 1.0], 1.0) == pytest.approx(np.sqrt(4.5), rel=1e-15)
    assert isotropic_noise_norm([4.0, 1.0], 1.0) == pytest.approx(np.sqrt(5.0), rel=1e-15)
    # equal eigenvalues: the two rules coincide (Cauchy–Schwarz with equality)
    assert anisotropic_noise_norm([2.0] * 5, 0.5) == pytest.approx(
        isotropic_noise_norm([2.0] * 5, 0.5), rel=1e-14
    )


def test_example5_table_matches_its_parts() -> None:
    # pac note T8: d = 1, Σ = 1, n = 100, v = 0.1 → whole set 0.045167, no individual noise
    from privrepro.pac.gaussian import example5_noise

    (row,) = example5_noise([1.0], 100, [0.1])
    assert row["whole_set_exact_noise_sq"] == pytest.approx(0.045167, abs=1e-6)
    assert row["individual_opt_noise_sq"] == 0.0
    assert row["theorem3_noise_sq"] == pytest.approx(0.05, rel=1e-12)  # (sqrt(1/100))^2 / 0.2
    assert row["eq12_first_case"] == pytest.approx(1 / (2 * 100 * 0.1), rel=1e-12)  # v ≥ d/(n-1)
    (low,) = example5_noise([1.0], 100, [0.001])
    assert np.isnan(low["eq12_first_case"])  # v < d/(n-1): the first case does not apply
