"""pac paper, Algorithms 1–3 on black-box mechanisms with known true covariance / MI."""

from __future__ import annotations

import numpy as np
import pytest

from privrepro.config import ConfigError
from privrepro.pac.algorithms import (
    algorithm1,
    algorithm1_from_samples,
    algorithm2,
    algorithm3,
    algorithm3_gaussian_mixture_kl,
    min_permutation_distance,
    spectrum,
    theorem5_samples,
    theorem6_beta,
)
from privrepro.pac.noise import GaussianNoise


def test_spectrum_is_the_divisor_m_covariance() -> None:
    rng = np.random.default_rng(1)
    y = rng.standard_normal((40, 6)) @ rng.standard_normal((6, 6))
    lam, _ = spectrum(y)
    ref = np.sort(np.linalg.eigvalsh(np.cov(y.T, bias=True)))[::-1]  # numpy, divisor m
    assert lam == pytest.approx(ref, rel=1e-10, abs=1e-12)
    # m < d: a thin SVD gives min(m, d) eigenpairs of the d x d covariance
    y2 = rng.standard_normal((5, 50))
    lam2, vt2 = spectrum(y2)
    assert lam2.shape == (5,) and vt2.shape == (5, 50)
    ref2 = np.sort(np.linalg.eigvalsh(np.cov(y2.T, bias=True)))[::-1][:5]
    assert lam2 == pytest.approx(ref2, abs=1e-10)


def test_linear_gaussian_mechanism_true_mi_within_budget() -> None:
    # M(X) = A X with X ~ N(0, I_k): M(X) ~ N(0, A A^T), so the true MI of M(X)+B is eq. (4) exactly.
    rng = np.random.default_rng(2)
    d = 5
    a = rng.standard_normal((d, d)) * np.array([2.0, 1.0, 0.5, 0.2, 0.05])
    cov = a @ a.T
    v, beta = 1.0, 0.1
    for c in [1e-2, 1e-8]:
        res = algorithm1(
            lambda x: a @ x, lambda g: g.standard_normal(d), 4000, v, beta, c, rng, r=10.0
        )
        true_mi = res.noise.mi_bound(cov)
        assert true_mi <= v + beta  # Theorem 4's guarantee, checked on the exact MI
    # the anisotropic branch lands close to the ideal Theorem 3 noise
    res = algorithm1_from_samples(
        rng.multivariate_normal(np.zeros(d), cov, 20000), v, beta, 1e-9, r=10.0
    )
    assert res.branch == "anisotropic"
    ideal = np.sqrt(np.linalg.eigvalsh(cov)).sum() ** 2 / (2 * v)
    assert res.noise.trace == pytest.approx(ideal, rel=0.05)  # MC error of λ̂ at m = 20,000


def test_box_example_branches() -> None:
    # pac note T13: mean of 50 uniform points in a box (1, .5, .1); r = ||sides||
    rng = np.random.default_rng(3)
    sides = np.array([1.0, 0.5, 0.1])
    lam_true = sides**2 / 12 / 50
    y = (rng.uniform(size=(20000, 50, 3)) * sides).mean(axis=1)
    r = float(np.linalg.norm(sides))
    iso = algorithm1_from_samples(y, 1.0, 0.1, 1e-4, r=r)
    assert iso.branch == "isotropic"
    assert iso.noise.trace == pytest.approx(0.0036, rel=0.03)
    aniso = algorithm1_from_samples(y, 1.0, 0.1, 1e-9, r=r)
    assert aniso.branch == "anisotropic" and aniso.reason == "eigengap test passed"
    assert aniso.noise.trace == pytest.approx(0.002136, rel=0.03)
    for res in (iso, aniso):
        assert res.noise.mi_bound(np.diag(lam_true)) <= 1.0 + 0.1


def test_d1_branch_and_floor() -> None:
    # pac note T3: d = 1 → Σ_B = λ̂/(2v) + 12c/β (gap test vacuous)
    rng = np.random.default_rng(0)
    y = rng.uniform(size=(20000, 100)).mean(axis=1, keepdims=True)
    res = algorithm1_from_samples(y, 0.5, 0.1, 1e-6)
    assert res.branch == "anisotropic" and "d = 1" in res.reason
    lam_hat = res.eigenvalues[0]
    assert res.noise.trace == pytest.approx(lam_hat / 1.0 + 12e-6 / 0.1, rel=1e-12)
    assert 0.5 * np.log1p((1 / 1200) / res.noise.trace) <= 0.5 + 0.1


def test_j0_zero_is_isotropic() -> None:
    rng = np.random.default_rng(0)
    y = 1e-3 * rng.standard_normal((100, 4))
    res = algorithm1_from_samples(y, 1.0, 0.1, 1.0)
    assert res.j0 == 0 and res.branch == "isotropic"
    assert res.noise.trace == pytest.approx(4 * (res.eigenvalues.sum() + 4 * 1.0) / 2.0)


def test_m_below_d_low_rank_noise() -> None:
    rng = np.random.default_rng(4)
    d = 300
    y = rng.standard_normal((20, 3)) @ rng.standard_normal((3, d))
    res = algorithm1_from_samples(y, 1.0, 0.1, 1e-12, r=100.0)
    assert res.noise.basis.shape == (20, d)
    # the low-rank + floor representation agrees with its dense matrix
    dense = res.noise.dense()
    assert np.trace(dense) == pytest.approx(res.noise.trace, rel=1e-10)
    draws = res.noise.sample(np.random.default_rng(0), 4000)
    emp = np.cov(draws.T)
    top = res.noise.basis[0]
    assert top @ emp @ top == pytest.approx(top @ dense @ top, rel=0.1)  # 4000 draws: SE ~2.2%


def test_m_below_d_noise_equals_the_dense_formula_over_all_d_eigenvalues() -> None:
    """Algorithm 1's anisotropic noise when m < d (Example 4's regime: m = 1,000 samples of
    d = 24,790 weights; here m = 40, d = 991, the same ratio), against the paper's formula
    evaluated by brute force: the d x d empirical covariance eigen-decomposed whole, and
    Sigma_B = sum_j sqrt(lambda_j + c3) (sum_l sqrt(lambda_l + c3)) / (2v) u_j u_j^T over all d
    eigenpairs, the d - k zero ones included. Those null directions carry most of the noise
    (their sum_l term is (d - k) sqrt(c3)); a low-rank shortcut that drops them fails."""
    rng = np.random.default_rng(5)
    m, d, v, beta, c = 40, 991, 1.0, 0.1, 1e-8
    basis = np.linalg.qr(rng.standard_normal((d, 3)))[0].T  # 3 orthonormal rows
    y = (rng.standard_normal((m, 3)) * [0.3, 0.2, 0.1]) @ basis  # norms below r = 1
    res = algorithm1_from_samples(y, v, beta, c, r=1.0)
    assert res.branch == "anisotropic" and res.eigenvalues.shape == (m,)
    centred = y - y.mean(axis=0)
    lam, u = np.linalg.eigh(centred.T @ centred / m)  # all d eigenpairs, the slow way
    lam = np.clip(lam, 0.0, None)  # the d - k zeros come out as round-off of either sign
    c3 = 24.0 * c * v / beta
    s = np.sqrt(lam + c3)
    expected = (u * (s * s.sum() / (2.0 * v))) @ u.T
    np.testing.assert_allclose(res.noise.dense(), expected, rtol=0, atol=1e-9 * expected.max())
    assert res.noise.trace == pytest.approx(s.sum() ** 2 / (2.0 * v), rel=1e-9)
    assert res.noise.floor == pytest.approx(np.sqrt(c3) * s.sum() / (2.0 * v), rel=1e-9)
    assert (d - 3) * np.sqrt(c3) > 0.5 * s.sum()  # most of sum_l is the null directions


def test_min_permutation_distance() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    assert min_permutation_distance(a, b) == pytest.approx(min_permutation_distance(b, a))
    # τ = 1: the plain squared distance
    assert min_permutation_distance(a[:1], b[:1]) == pytest.approx(((a[0] - b[0]) ** 2).sum())
    # a permuted copy is at distance 0; brute force over all permutations for τ = 4
    assert min_permutation_distance(a, a[::-1]) == pytest.approx(0.0, abs=1e-12)
    from itertools import permutations

    brute = min(((a[:4] - b[:4][list(p)]) ** 2).sum() / 4 for p in permutations(range(4)))
    assert min_permutation_distance(a[:4], b[:4]) == pytest.approx(brute, rel=1e-12)


def test_algorithm2_twice_the_isotropic_variance() -> None:
    # pac note T10: deterministic M → ψ̄ → 2 Tr Σ_M, so Algorithm 2's variance ≈ 2x Algorithm 1's
    rng = np.random.default_rng(6)
    sides = np.array([1.0, 0.5, 0.1])
    trace = float((sides**2 / 12 / 50).sum())  # 0.0021

    def mech(x: np.ndarray, seed: int) -> np.ndarray:
        return x.mean(axis=0)

    def sampler(g: np.random.Generator) -> np.ndarray:
        return g.uniform(size=(50, 3)) * sides

    res = algorithm2(mech, sampler, 1000, 3, 1.0, 0.0, rng)
    assert res.psi_bar == pytest.approx(2 * trace, abs=4 * res.psi_se)
    # Algorithm 1 on the same mechanism, isotropic branch (a huge r fails the gap test), tiny c
    alg1 = algorithm1(lambda x: mech(x, 0), sampler, 1000, 1.0, 0.1, 1e-12, rng, r=1e6)
    assert alg1.branch == "isotropic"
    # ratio of two means of 1,000 draws (ψ ~ scaled χ², SE ~3% and ~2%): 15% is ~4 SE
    assert res.noise.floor / alg1.noise.floor == pytest.approx(2.0, rel=0.15)


def test_sample_complexities() -> None:
    # pac note T7
    assert theorem5_samples(1, 0.01, 0.01) == 368_414
    assert theorem5_samples(1, 0.1, 0.05) == 2_397
    assert theorem5_samples(0.5, 0.01, 0.001) == 34_539
    assert theorem6_beta(1, 1, 0.01, 1000) == pytest.approx(0.19808, abs=1e-5)
    assert theorem6_beta(1, 0.1, 0.05, 10000) == pytest.approx(0.49354, abs=1e-5)


def test_mixture_kl_reduces_to_gaussian_closed_form() -> None:
    # one-component mixtures: KL(N(a, s I) || N(b, s I)) = ||a - b||^2 / (2 s)
    rng = np.random.default_rng(7)
    kl, se = algorithm3_gaussian_mixture_kl(
        [[0.0, 1.0]], [[0.5, 0.5]], [[1.0, 0.0]], [[0.5, 0.5]], 20000, rng
    )
    assert kl == pytest.approx(2.0, abs=4 * se)


def test_algorithm3_verifies_algorithm1_noise() -> None:
    # a finite input set of 1-d means; the proposal is Algorithm 1's (d = 1) noise
    rng = np.random.default_rng(8)
    inputs = list(rng.uniform(size=(64, 20)))
    outs = np.array([[x.mean()] for x in inputs])
    cal = algorithm1_from_samples(outs, 0.5, 0.1, 1e-6)
    var = cal.noise.trace
    res = algorithm3(
        lambda x, s: np.array([x.mean()]),
        inputs,
        lambda x, s: var,
        m=20,
        c=1e-6,
        tau1=8,
        tau2=32,
        tau3=1,
        rng=rng,
        kl_draws=256,
        r=1.0,
    )
    assert 0 <= res.psi_bar <= 0.5 + 0.1 + 4 * res.psi_se
    assert res.mc_se > 0 and res.beta is not None


def test_bad_inputs() -> None:
    # one error type for bad parameters: ConfigError naming the key, the value and the range
    with pytest.raises(ConfigError, match=r"v = 0.0: must lie in \(0, inf\)"):
        algorithm1_from_samples(np.zeros((4, 2)), 0.0, 0.1, 1e-3)
    with pytest.raises(ConfigError, match="shape"):
        min_permutation_distance(np.zeros((2, 3)), np.zeros((3, 3)))
    with pytest.raises(ConfigError, match="basis"):
        GaussianNoise(3, np.zeros((1, 2)), np.ones(1), 1.0)
    with pytest.raises(ConfigError, match="tau2 = 0"):
        algorithm3(
            lambda x, t: x,
            [np.zeros(1)],
            lambda x, t: 1.0,
            1,
            1.0,
            1,
            0,
            1,
            np.random.default_rng(0),
        )
