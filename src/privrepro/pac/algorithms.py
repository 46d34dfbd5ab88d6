"""The automatic analyses of the pac paper: Algorithms 1, 2 and 3 on black-box mechanisms.

A *mechanism* is a black box: a callable from one data sample (whatever the sampler returns) to
a vector in R^d (Algorithm 1), or from a sample and an integer seed to such a vector
(Algorithms 2 and 3). A *sampler* draws one data sample ``X ~ D`` from a
``numpy.random.Generator``.

More in ``docs/modules.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp

from privrepro.config.validation import ConfigError
from privrepro.pac.noise import GaussianNoise

__all__ = [
    "Algorithm1Result",
    "Algorithm2Result",
    "Algorithm3Result",
    "algorithm1",
    "algorithm1_from_samples",
    "algorithm2",
    "algorithm3",
    "algorithm3_gaussian_mixture_kl",
    "min_permutation_distance",
    "sample_outputs",
    "spectrum",
    "theorem5_samples",
    "theorem6_beta",
]

Sampler = Callable[[np.random.Generator], Any]


def _check_positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float, np.floating)) and value > 0 and np.isfinite(value)):
        raise ConfigError(name, value, "must lie in (0, inf)")
    return float(value)


def sample_outputs(
    mechanism: Callable[[Any], ArrayLike], sampler: Sampler, m: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Algorithm 1, lines 2–4: ``y^(k) = M(X^(k))`` for ``m`` independent ``X^(k) ~ D``."""
    if m < 2:
        raise ConfigError("m", m, "must lie in [2, inf) (Algorithm 1 needs at least 2 samples)")
    rows = [np.asarray(mechanism(sampler(rng)), dtype=np.float64).ravel() for _ in range(m)]
    return np.stack(rows)


def spectrum(samples: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Eigenvalues (descending) and eigenvectors (rows) of the empirical covariance.

    Algorithm 1, lines 5–7: ``Sigma_hat = (1/m) sum (y - ybar)(y - ybar)^T`` (divisor ``m``), by a
    thin SVD of the centred ``m x d`` matrix: ``k = min(m, d)`` eigenpairs, never a ``d x d`` eigh.
    """
    y = np.asarray(samples, dtype=np.float64)
    if y.ndim != 2 or y.shape[0] < 2:
        raise ConfigError("samples", f"shape {y.shape}", "must be an (m, d) array with m >= 2")
    centred = y - y.mean(axis=0)
    _, s, vt = np.linalg.svd(centred / np.sqrt(y.shape[0]), full_matrices=False)
    return np.asarray(s**2, dtype=np.float64), np.asarray(vt, dtype=np.float64)


@dataclass(frozen=True)
class Algorithm1Result:
    """What Algorithm 1 returns, with its diagnostics.

    Attributes:
        noise: ``B ~ N(0, Sigma_B)``.
        branch: ``"anisotropic"`` (lines 9–13) or ``"isotropic"`` (line 15).
        reason: why that branch was taken (``"gap test passed"``, ``"d = 1"``, ``"j0 = 0"``, ...).
        eigenvalues: the ``k`` estimated eigenvalues, descending.
        eigenvectors: the matching ``k x d`` orthonormal rows.
        j0: the number of estimated eigenvalues above ``c``.
        min_gap: the smallest eigengap of the test (``inf`` when the set is empty).
        gap_threshold: ``r sqrt(d c) + 2c``.
        ideal_trace: Theorem 3's ``(sum sqrt(lambda_hat))^2 / (2v)`` without the safety floor.
        m, v, beta, c, r: the inputs.
    """

    noise: GaussianNoise
    branch: str
    reason: str
    eigenvalues: NDArray[np.float64]
    eigenvectors: NDArray[np.float64]
    j0: int
    min_gap: float
    gap_threshold: float
    ideal_trace: float
    m: int
    v: float
    beta: float
    c: float
    r: float

    def theorem3_plugin(self) -> GaussianNoise:
        """Theorem 3's anisotropic noise on the *estimated* spectrum, without Algorithm 1's floor:
        variance ``sqrt(lambda_hat_j) sum_l sqrt(lambda_hat_l) / (2v)`` along ``u_j`` and 0 on the
        complement. A plug-in estimate of the ideal noise; it carries no Theorem 4 guarantee."""
        s = np.sqrt(self.eigenvalues)
        return GaussianNoise(
            self.eigenvectors.shape[1], self.eigenvectors, s * s.sum() / (2.0 * self.v), 0.0
        )

    def summary(self) -> dict[str, Any]:
        """Flat scalars for a results row."""
        return {
            "branch": self.branch,
            "branch_reason": self.reason,
            "m": self.m,
            "v": self.v,
            "beta": self.beta,
            "c": self.c,
            "r": self.r,
            "j0": self.j0,
            "sum_sqrt_lambda": float(np.sqrt(self.eigenvalues).sum()),
            "trace_sigma_hat": float(self.eigenvalues.sum()),
            "noise_trace": self.noise.trace,
            "noise_norm_upper": self.noise.expected_norm_upper,
            "ideal_noise_norm": float(np.sqrt(self.ideal_trace)),
        }


def algorithm1_from_samples(
    samples: ArrayLike,
    v: float,
    beta: float,
    c: float,
    r: float | None = None,
    floor_constant: float = 24.0,
) -> Algorithm1Result:
    """Algorithm 1 (pac paper, Sec. 4.1) from ``m`` mechanism outputs ``samples`` (``m x d``).

    Lines 5–15: eigen-decompose ``Sigma_hat``; ``j0 = #{j : lambda_hat_j > c}``; if
    ``min_{j <= j0, l != j} |lambda_hat_j - lambda_hat_l| > r sqrt(d c) + 2c`` then the
    anisotropic noise with precision ``2v / (sqrt(lambda_hat_j + c3) sum_l sqrt(lambda_hat_l + c3))``
    along ``u_j``, ``c3 = floor_constant * c v / beta`` (the paper's 24, OCR-consistent in three
    places); otherwise ``Sigma_B = (sum lambda_hat + d c) / (2v) I``. Theorem 4: then
    ``MI(X; M(X) + B) <= v + beta`` with confidence ``1 - gamma`` for ``c`` as in eq. (5).

    Args:
        samples: ``m x d`` outputs ``M(X^(k))``.
        v: MI target in nats. beta: the slack of Theorem 4. c: the safety floor.
        r: the output radius; default the largest sample norm (assumed).
        floor_constant: the 24 of ``c3 = 24 c v / beta``.
    """
    y = np.asarray(samples, dtype=np.float64)
    v, beta, c = (_check_positive("v", v), _check_positive("beta", beta), _check_positive("c", c))
    lam, vt = spectrum(y)
    m, d = y.shape
    k = lam.shape[0]
    radius = float(np.linalg.norm(y, axis=1).max()) if r is None else _check_positive("r", r)
    j0 = int(np.count_nonzero(lam > c))
    threshold = radius * np.sqrt(d * c) + 2.0 * c
    # all d eigenvalues: the k estimated ones, then d - k exact zeros (one stands for them all)
    full = np.concatenate([lam, np.zeros(1)]) if d > k else lam
    if j0 > 0 and full.shape[0] > 1:
        diffs = np.abs(full[:j0, None] - full[None, :])
        np.fill_diagonal(diffs[:, :j0], np.inf)
        min_gap = float(diffs.min())
    else:
        min_gap = float("inf")
    ideal = float(np.sqrt(lam).sum() ** 2 / (2.0 * v))
    if d == 1:
        branch, reason = "anisotropic", "d = 1: the eigengap test is vacuous"
    elif j0 == 0:
        branch, reason = "isotropic", "j0 = 0: no eigenvalue above c"
    elif min_gap > threshold:
        branch, reason = "anisotropic", "eigengap test passed"
    else:
        branch, reason = "isotropic", "eigengap test failed"
    if branch == "anisotropic":
        c3 = floor_constant * c * v / beta
        s = np.sqrt(lam + c3)
        s_rest = np.sqrt(c3)
        total = s.sum() + (d - k) * s_rest
        noise = GaussianNoise(d, vt, s * total / (2.0 * v), float(s_rest * total / (2.0 * v)))
    else:
        noise = GaussianNoise.isotropic(d, float((lam.sum() + d * c) / (2.0 * v)))
    return Algorithm1Result(
        noise, branch, reason, lam, vt, j0, min_gap, float(threshold), ideal, m, v, beta, c, radius
    )


def algorithm1(
    mechanism: Callable[[Any], ArrayLike],
    sampler: Sampler,
    m: int,
    v: float,
    beta: float,
    c: float,
    rng: np.random.Generator,
    r: float | None = None,
) -> Algorithm1Result:
    """Algorithm 1 on a black-box deterministic mechanism: sample, then calibrate."""
    return algorithm1_from_samples(sample_outputs(mechanism, sampler, m, rng), v, beta, c, r)


def min_permutation_distance(a: ArrayLike, b: ArrayLike) -> float:
    """``d_pi(a, b) = min_pi sum_j ||a(j) - b(pi(j))||^2 / k`` over permutations of ``k`` blocks.

    pac paper, Sec. 4.2 (Algorithm 2). ``a`` and ``b`` are ``k x d`` (one block per row); solved
    exactly as a linear assignment (Hungarian method, ``scipy.optimize.linear_sum_assignment``).
    """
    x = np.atleast_2d(np.asarray(a, dtype=np.float64))
    y = np.atleast_2d(np.asarray(b, dtype=np.float64))
    if x.shape != y.shape:
        raise ConfigError("b", f"shape {y.shape}", f"must match a's blocks, shape {x.shape}")
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].sum() / x.shape[0])


@dataclass(frozen=True)
class Algorithm2Result:
    """Algorithm 2's isotropic noise ``(psi_bar + c)/(2v) I`` and its Monte-Carlo inputs."""

    noise: GaussianNoise
    psi: NDArray[np.float64]
    psi_bar: float
    psi_se: float
    m: int
    tau: int
    v: float
    c: float


def algorithm2(
    mechanism: Callable[[Any, int], ArrayLike],
    sampler: Sampler,
    m: int,
    tau: int,
    v: float,
    c: float,
    rng: np.random.Generator,
    seeds: Sequence[int] | None = None,
) -> Algorithm2Result:
    """Algorithm 2 (pac paper, Sec. 4.2): ``(1-gamma)``-confidence noise for a randomised mechanism.

    For ``k = 1..m``: two independent ``X1, X2 ~ D``, a random ``tau``-subset of seeds, outputs
    ``y1 = (M(X1, theta_j))_j``, ``y2 = (M(X2, theta_j))_j`` and ``psi_k = d_pi(y1, y2)``.
    Output ``Sigma_B = (psi_bar + c)/(2v) I`` (Theorem 5: ``MI <= v`` w.p. ``1 - gamma`` when
    ``m >= 8 r^4 log(1/gamma) / c^2``). ``seeds``: the finite set Theta; default: 31-bit integers.
    A deterministic mechanism may ignore its seed; then ``psi = ||M(X1) - M(X2)||^2``.
    """
    v, c = _check_positive("v", v), float(c)
    if c < 0:
        raise ConfigError("c", c, "must lie in [0, inf)")
    for key, value, low in (("m", m, 2), ("tau", tau, 1)):
        if value < low:
            raise ConfigError(key, value, f"must lie in [{low}, inf)")
    psi = np.empty(m)
    dim = -1
    for k in range(m):
        x1, x2 = sampler(rng), sampler(rng)
        if seeds is None:
            thetas = rng.integers(0, 2**31 - 1, size=tau)
        else:
            thetas = rng.choice(np.asarray(seeds), size=tau, replace=False)
        y1 = np.stack([np.asarray(mechanism(x1, int(t)), dtype=np.float64).ravel() for t in thetas])
        y2 = np.stack([np.asarray(mechanism(x2, int(t)), dtype=np.float64).ravel() for t in thetas])
        dim = y1.shape[1]
        psi[k] = min_permutation_distance(y1, y2)
    psi_bar = float(psi.mean())
    noise = GaussianNoise.isotropic(dim, (psi_bar + c) / (2.0 * v))
    return Algorithm2Result(noise, psi, psi_bar, float(psi.std(ddof=1) / np.sqrt(m)), m, tau, v, c)


def theorem5_samples(r: float, c: float, gamma: float) -> int:
    """Theorem 5: ``m >= 8 r^4 log(1/gamma) / c^2`` samples for Algorithm 2's guarantee."""
    return int(np.ceil(8.0 * r**4 * np.log(1.0 / gamma) / c**2))


def theorem6_beta(r: float, c: float, gamma: float, m: int) -> float:
    """Theorem 6 (reconstructed): ``beta = (2r^2/c)(2 log(1/gamma)/(3m) + sqrt(2 log(1/gamma)/m))``."""
    lg = np.log(1.0 / gamma)
    return float(2.0 * r**2 / c * (2.0 * lg / (3.0 * m) + np.sqrt(2.0 * lg / m)))


def _log_mixture_density(
    z: NDArray[np.float64], means: NDArray[np.float64], variances: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``log (1/K) sum_k N(z; means[k], diag(variances[k]))`` for each row of ``z``."""
    diff = z[:, None, :] - means[None, :, :]
    logp = -0.5 * ((diff**2) / variances[None] + np.log(2 * np.pi * variances[None])).sum(axis=2)
    return np.asarray(logsumexp(logp, axis=1) - np.log(means.shape[0]), dtype=np.float64)


def algorithm3_gaussian_mixture_kl(
    means_p: ArrayLike,
    vars_p: ArrayLike,
    means_q: ArrayLike,
    vars_q: ArrayLike,
    draws: int,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """Monte-Carlo ``KL(P || Q)`` between equal-weight mixtures of diagonal Gaussians.

    The paper does not say how to compute eq. (9)'s KL (no closed form). Estimate:
    ``mean_z [log p(z) - log q(z)]`` over ``draws`` samples ``z ~ P``; returns the estimate and
    its standard error ``std / sqrt(draws)``.
    """
    mp, vp = np.atleast_2d(means_p).astype(float), np.atleast_2d(vars_p).astype(float)
    mq, vq = np.atleast_2d(means_q).astype(float), np.atleast_2d(vars_q).astype(float)
    comp = rng.integers(0, mp.shape[0], size=draws)
    z = mp[comp] + np.sqrt(vp[comp]) * rng.standard_normal((draws, mp.shape[1]))
    ratio = _log_mixture_density(z, mp, vp) - _log_mixture_density(z, mq, vq)
    return float(ratio.mean()), float(ratio.std(ddof=1) / np.sqrt(draws))


@dataclass(frozen=True)
class Algorithm3Result:
    """Algorithm 3's estimate ``psi_bar`` of eq. (9), with its standard errors and Theorem 6's beta.

    ``psi_se`` is the standard error over the ``m`` outer repetitions (it includes the inner
    Monte-Carlo error of each KL); ``mc_se`` is the inner KL Monte-Carlo error alone.
    """

    psi: NDArray[np.float64]
    psi_bar: float
    psi_se: float
    mc_se: float
    beta: float | None


def algorithm3(
    mechanism: Callable[[Any, int], ArrayLike],
    inputs: Sequence[Any],
    proposal_variance: Callable[[Any, int], ArrayLike],
    m: int,
    c: float,
    tau1: int,
    tau2: int,
    tau3: int,
    rng: np.random.Generator,
    kl_draws: int = 512,
    r: float | None = None,
    gamma: float = 0.05,
) -> Algorithm3Result:
    """Algorithm 3 (pac paper, Sec. 4.3): verify a Gaussian perturbation proposal.

    For ``k = 1..m``: ``tau1`` and ``tau2`` random inputs from the finite set ``inputs``, ``tau3``
    seeds; ``P_i = (1/tau3) sum_j N(M(X_i, theta_j), diag(q(X_i, theta_j) + c))`` where ``q`` is
    ``proposal_variance`` (a scalar or a length-``d`` vector: the proposal ``B(X, theta)`` is
    restricted to Gaussians here); ``psi_k = (1/tau1) sum_i KL(P_i || (1/tau2) sum_l P_l)``,
    eq. (9), each KL by Monte Carlo (:func:`algorithm3_gaussian_mixture_kl`). Theorem 6:
    ``MI(X; M + B + B_c) <= psi_bar + beta`` w.p. ``1 - gamma`` (``beta`` needs ``r``).
    """
    c = _check_positive("c", c)
    for key, value in (("m", m), ("tau1", tau1), ("tau2", tau2), ("tau3", tau3)):
        if value < 1:
            raise ConfigError(key, value, "must lie in [1, inf)")
    n_inputs = len(inputs)

    def component(
        idx: int, thetas: NDArray[np.int64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        means = np.stack(
            [np.asarray(mechanism(inputs[idx], int(t)), dtype=float).ravel() for t in thetas]
        )
        var = np.stack(
            [
                np.broadcast_to(
                    np.asarray(proposal_variance(inputs[idx], int(t)), dtype=float), means.shape[1:]
                )
                + c
                for t in thetas
            ]
        )
        return means, var

    psi = np.empty(m)
    mc_var = np.empty(m)
    for k in range(m):
        idx1 = rng.integers(0, n_inputs, size=tau1)
        idx2 = rng.integers(0, n_inputs, size=tau2)
        thetas = rng.integers(0, 2**31 - 1, size=tau3)
        comps2 = [component(int(i), thetas) for i in idx2]
        mq = np.concatenate([mu for mu, _ in comps2])
        vq = np.concatenate([s for _, s in comps2])
        kls, ses = [], []
        for i in idx1:
            mp, vp = component(int(i), thetas)
            kl, se = algorithm3_gaussian_mixture_kl(mp, vp, mq, vq, kl_draws, rng)
            kls.append(kl)
            ses.append(se)
        psi[k] = float(np.mean(kls))
        mc_var[k] = float(np.sum(np.square(ses))) / tau1**2
    psi_bar = float(psi.mean())
    psi_se = float(psi.std(ddof=1) / np.sqrt(m)) if m > 1 else float(np.sqrt(mc_var[0]))
    mc_se = float(np.sqrt(mc_var.sum()) / m)
    beta = theorem6_beta(r, c, gamma, m) if r is not None else None
    return Algorithm3Result(psi, psi_bar, psi_se, mc_se, beta)
