"""Gaussian noise against a mutual-information budget (pac paper, Theorem 3, Sec. 7.1, Example 5).

Every function takes eigenvalues ``lam`` of the output covariance ``Sigma_M(X)`` (or the
covariance itself) and a budget ``v`` in nats.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privrepro.config.validation import ConfigError

__all__ = [
    "anisotropic_noise_norm",
    "anisotropic_variances",
    "composition_budget",
    "dp_local_noise_norm",
    "dp_mean_noise_norm",
    "example5_individual_mi",
    "example5_noise",
    "example5_whole_set_mi",
    "expected_norm_upper",
    "isotropic_noise_norm",
    "isotropic_variance",
    "logdet_mi_bound",
    "optimal_individual_variances",
    "optimal_whole_set_variances",
    "trace_mi_bound",
    "zcdp_sigma",
]


def _eigs(lam: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(lam, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ConfigError(
            "lam", f"shape {arr.shape}", "must be a non-empty 1-d array of eigenvalues"
        )
    if np.any(arr < 0) or np.any(~np.isfinite(arr)):
        bad = float(arr[(arr < 0) | ~np.isfinite(arr)][0])
        raise ConfigError("lam", bad, "eigenvalues must be finite and lie in [0, inf)")
    return arr


def _budget(v: float) -> float:
    if not (isinstance(v, (int, float, np.floating)) and v > 0 and math.isfinite(v)):
        raise ConfigError("v", v, "the MI budget must lie in (0, inf) nats")
    return float(v)


def anisotropic_variances(lam: ArrayLike, v: float) -> NDArray[np.float64]:
    """Theorem 3 (Appendix B, solution of (17)): per-eigendirection noise variances.

    ``lambda_B,j = sqrt(lambda_j) * (sum_l sqrt(lambda_l)) / (2v)``. Then
    ``sum_j lambda_j / lambda_B,j = 2v`` (for ``lambda_j > 0``), so the trace bound is exactly
    ``v``, and ``E||B||^2 = (sum_j sqrt(lambda_j))^2 / (2v)``. Zero eigenvalues get zero noise.
    """
    s = np.sqrt(_eigs(lam))
    return np.asarray(s * s.sum() / (2.0 * _budget(v)), dtype=np.float64)


def isotropic_variance(lam: ArrayLike, v: float) -> float:
    """The isotropic trace rule: ``sigma^2 = sum_j lambda_j / (2v)`` (trace bound exactly ``v``)."""
    return float(_eigs(lam).sum() / (2.0 * _budget(v)))


def anisotropic_noise_norm(lam: ArrayLike, v: float) -> float:
    """Theorem 3's noise magnitude ``sqrt(E||B||^2) = sum_j sqrt(lambda_j) / sqrt(2v)`` (an upper
    bound on ``E||B||_2``; the paper's 1.6 × 10^2 for CIFAR-10 in Example 2)."""
    return float(np.sqrt(_eigs(lam)).sum() / np.sqrt(2 * _budget(v)))


def isotropic_noise_norm(lam: ArrayLike, v: float) -> float:
    """The isotropic trace rule's ``sqrt(E||B||^2) = sqrt(d sum_j lambda_j / (2v))`` (``d`` the
    number of eigenvalues); never below :func:`anisotropic_noise_norm` (Cauchy–Schwarz)."""
    arr = _eigs(lam)
    return float(np.sqrt(arr.size * arr.sum() / (2 * _budget(v))))


def expected_norm_upper(noise_variances: ArrayLike) -> float:
    """``E||B||_2 <= sqrt(E||B||^2) = sqrt(sum of variances)`` (Jensen); the paper reports
    ``E||B||_2`` and bounds it this way after Theorem 3."""
    return float(np.sqrt(np.sum(np.asarray(noise_variances, dtype=np.float64))))


def logdet_mi_bound(cov_m: ArrayLike, cov_b: ArrayLike) -> float:
    """Theorem 3, eq. (4): ``MI(X; M(X)+B) <= 1/2 log det(I + Sigma_M Sigma_B^{-1})``.

    ``cov_m`` and ``cov_b`` are ``d x d`` matrices, or 1-d arrays read as diagonals.
    Exact when ``M(X)`` is Gaussian.
    """
    a = np.asarray(cov_m, dtype=np.float64)
    b = np.asarray(cov_b, dtype=np.float64)
    if a.ndim == 1 and b.ndim == 1:
        return float(0.5 * np.sum(np.log1p(a / b)))
    a2 = np.diag(a) if a.ndim == 1 else a
    b2 = np.diag(b) if b.ndim == 1 else b
    # det(I + A B^{-1}) = det(B + A) / det(B) for symmetric positive-definite B.
    _, ld_sum = np.linalg.slogdet(b2 + a2)
    _, ld_b = np.linalg.slogdet(b2)
    return float(0.5 * (ld_sum - ld_b))


def trace_mi_bound(cov_m: ArrayLike, cov_b: ArrayLike) -> float:
    """``1/2 Tr(Sigma_M Sigma_B^{-1})`` >= eq. (4) (``log(1+x) <= x``, Appendix B)."""
    a = np.asarray(cov_m, dtype=np.float64)
    b = np.asarray(cov_b, dtype=np.float64)
    if a.ndim == 1 and b.ndim == 1:
        return float(0.5 * np.sum(a / b))
    a2 = np.diag(a) if a.ndim == 1 else a
    b2 = np.diag(b) if b.ndim == 1 else b
    return float(0.5 * np.trace(np.linalg.solve(b2, a2)))


def composition_budget(total_v: float, repetitions: int) -> float:
    """Sec. 7.1: MI of ``T`` independent mechanisms on independent inputs adds up, so each gets
    ``v / T`` and its noise standard deviation grows by ``sqrt(T)`` (Theorem 3 is ``1/(2v)``)."""
    if repetitions < 1:
        raise ConfigError("repetitions", repetitions, "must be an integer in [1, inf)")
    return _budget(total_v) / repetitions


# --- Example 5: noisy mean of n Gaussian points, exact MI (eqs. (10) and (11)) -----------------


def example5_individual_mi(lam: ArrayLike, n: int, noise_var: ArrayLike) -> float:
    """Eq. (10): ``MI(x_i; mean + B') = 1/2 log det((Sigma/n + S)(Sigma (n-1)/n^2 + S)^{-1})``
    for ``Sigma`` and ``S`` diagonal in the same basis (``lam`` and ``noise_var``)."""
    lam_arr = _eigs(lam)
    s = np.broadcast_to(np.asarray(noise_var, dtype=np.float64), lam_arr.shape)
    num = lam_arr / n + s
    den = lam_arr * (n - 1) / n**2 + s
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(num > 0, np.log(num) - np.log(den), 0.0)
    return float(0.5 * np.sum(terms))


def example5_whole_set_mi(lam: ArrayLike, n: int, noise_var: ArrayLike) -> float:
    """Eq. (11): ``MI(X; mean + B) = 1/2 log det((Sigma/n + S) S^{-1})``."""
    lam_arr = _eigs(lam)
    s = np.broadcast_to(np.asarray(noise_var, dtype=np.float64), lam_arr.shape)
    return float(0.5 * np.sum(np.log1p(lam_arr / n / s)))


def _bisect_multiplier(
    total, v: float, lo: float = 1e-300, hi: float = 1e300, iterations: int = 4000
) -> float:
    """Smallest multiplier ``mu`` with ``total(mu) <= v`` for ``total`` decreasing in ``mu``
    (geometric bisection, then relative precision ~1e-15)."""
    for _ in range(iterations):
        mid = math.sqrt(lo * hi)
        if total(mid) <= v:
            hi = mid
        else:
            lo = mid
        if hi / lo < 1 + 1e-15:
            break
    return hi


def optimal_whole_set_variances(lam: ArrayLike, n: int, v: float) -> NDArray[np.float64]:
    """The least ``E||B||^2`` Gaussian noise (diagonal in Sigma's basis) with eq. (11) ``<= v``.

    Reverse water-filling: minimise ``sum s_j`` s.t. ``sum 1/2 log(1 + a_j / s_j) <= v`` with
    ``a_j = lambda_j / n``; KKT gives ``s_j (s_j + a_j) = mu a_j / 2``. For ``d = 1`` this is
    ``s = a / (e^{2v} - 1)`` (the note's check value 0.045167 at ``n = 100``, ``v = 0.1``).
    """
    a = _eigs(lam) / n
    v = _budget(v)

    def var(mu: float) -> NDArray[np.float64]:
        # the positive root of s^2 + a s - mu a / 2 = 0, rationalised (no cancellation)
        return np.asarray(mu * a / (a + np.sqrt(a * a + 2.0 * mu * a)), dtype=np.float64)

    def total(mu: float) -> float:
        s = var(mu)
        with np.errstate(divide="ignore"):
            return float(0.5 * np.sum(np.where(a > 0, np.log1p(a / s), 0.0)))

    return var(_bisect_multiplier(total, v))


def optimal_individual_variances(lam: ArrayLike, n: int, v: float) -> NDArray[np.float64]:
    """The least ``E||B'||^2`` Gaussian noise (diagonal in Sigma's basis) with eq. (10) ``<= v``.

    Minimise ``sum s_j`` s.t. ``sum 1/2 log((a_j + s_j)/(b_j + s_j)) <= v``, ``s_j >= 0``, with
    ``a_j = lambda_j / n`` and ``b_j = lambda_j (n-1)/n^2``. KKT: ``(a_j + s_j)(b_j + s_j) =
    mu (a_j - b_j) / 2`` or ``s_j = 0``. When the noiseless MI ``d/2 log(n/(n-1))`` is already
    ``<= v`` no noise is needed (the paper's ``v > d/(n-1)`` regime of eq. (12)).
    """
    lam_arr = _eigs(lam)
    v = _budget(v)
    a = lam_arr / n
    b = lam_arr * (n - 1) / n**2
    if example5_individual_mi(lam_arr, n, 0.0) <= v:
        return np.zeros_like(lam_arr)

    def var(mu: float) -> NDArray[np.float64]:
        k = mu * (a - b) / 2.0
        # the larger root of (a + s)(b + s) = k, rationalised (no cancellation)
        root = 2.0 * (k - a * b) / (a + b + np.sqrt((a - b) ** 2 + 4.0 * k))
        return np.asarray(np.maximum(root, 0.0), dtype=np.float64)

    return var(_bisect_multiplier(lambda mu: example5_individual_mi(lam_arr, n, var(mu)), v))


def example5_noise(lam: ArrayLike, n: int, vs: ArrayLike) -> list[dict[str, float]]:
    """Example 5 against the budget: one row per ``v`` of the least ``E||B||^2`` of Gaussian noise
    (diagonal in Sigma's basis) meeting eq. (10) (``individual_opt_noise_sq``), eq. (11)
    (``whole_set_exact_noise_sq``), and Theorem 3's ``(sum_j sqrt(lambda_j / n))^2 / (2v)``
    (``theorem3_noise_sq``), their gap, the first case of eq. (12) (``v >= d/(n-1)``: no
    individual noise, gap ``(sum sqrt(lambda))^2/(2nv)``; NaN otherwise) and the noiseless
    individual MI of eq. (10). The second case of eq. (12) is illegible in the source.
    """
    lam_arr = _eigs(lam)
    d, sqrt_sum = lam_arr.size, np.sqrt(lam_arr).sum()
    rows = []
    for v in np.asarray(vs, dtype=np.float64):
        ind = optimal_individual_variances(lam_arr, n, v)
        whole = optimal_whole_set_variances(lam_arr, n, v)
        thm3 = anisotropic_variances(lam_arr / n, v)
        first_case = float(sqrt_sum**2 / (2 * n * v)) if v >= d / (n - 1) else np.nan
        rows.append(
            {
                "v": float(v),
                "n": n,
                "d": d,
                "individual_opt_noise_sq": float(ind.sum()),
                "whole_set_exact_noise_sq": float(whole.sum()),
                "theorem3_noise_sq": float(thm3.sum()),
                "gap_theorem3_minus_individual": float(thm3.sum() - ind.sum()),
                "eq12_first_case": first_case,
                "noiseless_individual_mi": example5_individual_mi(lam_arr, n, 0.0),
            }
        )
    return rows


# --- DP baselines (footnote 5: rho-zCDP with independent entries gives MI <= n * rho) ---------


def zcdp_sigma(l2_sensitivity: float, rho: float) -> float:
    """Gaussian mechanism std for ``rho``-zCDP: ``rho = Delta_2^2 / (2 sigma^2)`` (Bun–Steinke)."""
    if l2_sensitivity <= 0 or rho <= 0:
        key, value = ("l2_sensitivity", l2_sensitivity) if l2_sensitivity <= 0 else ("rho", rho)
        raise ConfigError(key, value, "must lie in (0, inf)")
    return float(l2_sensitivity / math.sqrt(2.0 * rho))


def dp_local_noise_norm(d: int, v: float, linf: float = 1.0) -> float:
    """Example 2's local-DP noise: each coordinate in ``[0, linf]`` gives ``Delta_2 = linf sqrt(d)``;
    ``rho = v`` (one record); ``E||B|| ~ sigma sqrt(d) = linf d / sqrt(2v)`` (2172.2 at d = 3072)."""
    return zcdp_sigma(linf * math.sqrt(d), _budget(v)) * math.sqrt(d)


def dp_mean_noise_norm(
    d: int, pool_size: int, v: float, linf: float = 1.0, inclusion: float = 0.5
) -> float:
    """Example 3's DP noise for ``sum(X) / (inclusion * N)`` on a Poisson-sampled pool of ``N``.

    Sensitivity ``Delta_2 = linf sqrt(d) / (inclusion N)``; ``MI <= N rho <= v`` so
    ``rho = v / N``; ``E||B|| ~ sigma sqrt(d) = linf d sqrt(2 / (N v))`` at inclusion 1/2
    (17.736 at d = 3072, N = 60,000, v = 1).
    """
    sens = linf * math.sqrt(d) / (inclusion * pool_size)
    return zcdp_sigma(sens, _budget(v) / pool_size) * math.sqrt(d)
