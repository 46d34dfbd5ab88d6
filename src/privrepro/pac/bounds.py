"""From a mutual-information budget to bounds on an adversary's success (pac paper, Sec. 3).

All mutual information is in **nats** (Example 1 reproduces only with the natural log).

More in ``docs/modules.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from privrepro.config.validation import ConfigError

__all__ = [
    "generalization_bound",
    "identification_bounds",
    "individual_success_bound",
    "kl_bernoulli",
    "pinsker_advantage_bound",
    "pinsker_success_bound",
    "posterior_success_bound",
    "success_curves",
]


def _xlogy_ratio(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """``x * log(x / y)`` with the convention ``0 log 0 = 0`` (and ``+inf`` when y = 0 < x)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x > 0, x * (np.log(x) - np.log(y)), 0.0)
    return np.asarray(out, dtype=np.float64)


def kl_bernoulli(p: ArrayLike, q: ArrayLike) -> NDArray[np.float64]:
    """``KL(Bern(p) || Bern(q))`` in nats (pac paper, Def. 4 with ``f(x) = x log x``)."""
    p_arr = np.asarray(p, dtype=np.float64)
    q_arr = np.asarray(q, dtype=np.float64)
    if np.any((p_arr < 0) | (p_arr > 1)) or np.any((q_arr < 0) | (q_arr > 1)):
        bad_p = np.any((p_arr < 0) | (p_arr > 1))
        raise ConfigError(
            "p" if bad_p else "q", p if bad_p else q, "probabilities must lie in [0, 1]"
        )
    return _xlogy_ratio(p_arr, q_arr) + _xlogy_ratio(1.0 - p_arr, 1.0 - q_arr)


def posterior_success_bound(
    prior: ArrayLike, mi: ArrayLike, iterations: int = 200
) -> NDArray[np.float64]:
    """Theorem 1 inverted: ``p*(q, v) = max{p in [q, 1] : KL(Bern(p) || Bern(q)) <= v}``.

    pac paper, Theorem 1, eq. (2), with Lemma 1 (monotonicity of ``KL(1_p || 1_q)`` in ``p >= q``)
    making the inversion valid. Vectorised bisection (``iterations`` halvings, so the error is
    below ``max(2**-iterations, 1e-15)``). ``p* = 1`` once ``log(1/q) <= v``.

    Args:
        prior: the optimal prior success rate ``q = 1 - delta^o`` in [0, 1].
        mi: the mutual-information budget ``v >= 0`` in nats.
    """
    q, v = np.broadcast_arrays(
        np.asarray(prior, dtype=np.float64), np.asarray(mi, dtype=np.float64)
    )
    if np.any((q < 0) | (q > 1)) or np.any(np.isnan(q)):
        raise ConfigError("prior", prior, "must lie in [0, 1]")
    if np.any(v < 0) or np.any(np.isnan(v)):
        raise ConfigError("mi", mi, "must lie in [0, inf)")
    lo = q.copy()
    hi = np.ones_like(q)
    saturated = kl_bernoulli(hi, q) <= v
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        ok = kl_bernoulli(mid, q) <= v
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
        if np.all(hi - lo <= 1e-15):
            break
    out = np.where(saturated, 1.0, lo)
    out = np.where(q >= 1.0, 1.0, out)
    return np.asarray(out, dtype=np.float64)


def pinsker_advantage_bound(mi: ArrayLike) -> NDArray[np.float64]:
    """Corollary 1 (Pinsker): posterior advantage ``delta^o - delta <= sqrt(MI / 2)``."""
    v = np.asarray(mi, dtype=np.float64)
    if np.any(v < 0):
        raise ConfigError("mi", mi, "must lie in [0, inf)")
    return np.asarray(np.sqrt(v / 2.0), dtype=np.float64)


def pinsker_success_bound(prior: ArrayLike, mi: ArrayLike) -> NDArray[np.float64]:
    """Corollary 1 as a success bound: ``1 - delta <= min(1, q + sqrt(MI / 2))`` (looser than
    :func:`posterior_success_bound`)."""
    return np.asarray(
        np.minimum(1.0, np.asarray(prior, dtype=np.float64) + pinsker_advantage_bound(mi)),
        dtype=np.float64,
    )


def generalization_bound(mi: ArrayLike) -> NDArray[np.float64]:
    """Theorem 8: a mechanism with ``Delta_KL delta <= v`` for identification has
    ``Gen(D, M) <= sqrt(v / 2)`` for any loss with values in (0, 1)."""
    return pinsker_advantage_bound(mi)


def individual_success_bound(prior: float, mi: float, n: ArrayLike) -> NDArray[np.float64]:
    """Theorem 2, part 2: per-individual success bound for i.i.d. data and a symmetric mechanism.

    pac paper, Theorem 2 (eq. after (3)) as reconstructed from Appendix A:
    ``1 - delta <= (1/n) sum_{j=1..n} p*(q_j, MI(X; M(X)))`` with
    ``q_j = P(Binomial(n, q) >= j)``, the optimal prior probability of recovering at least
    ``j`` of the ``n`` elements. The paper's Example 1 prints 0.17 (n = 10) and 0.06 (n = 50);
    this reading gives 0.14893 and 0.06790 (see docs/pac.md, errata).

    Args:
        prior: per-element prior success ``q = 1 - delta^o``.
        mi: ``MI(X; M(X))`` in nats.
        n: the number of data points (scalar or array of integers >= 1).
    """
    n_arr = np.atleast_1d(np.asarray(n))
    if np.any(n_arr < 1) or not np.all(np.equal(np.mod(n_arr, 1), 0)):
        raise ConfigError("n", n, "must be integers in [1, inf)")
    out = np.empty(n_arr.shape, dtype=np.float64)
    for idx, n_val in np.ndenumerate(n_arr):
        j = np.arange(1, int(n_val) + 1)
        q_j = stats.binom.sf(j - 1, int(n_val), prior)
        out[idx] = float(np.mean(posterior_success_bound(q_j, mi)))
    return out.reshape(np.shape(n)) if np.ndim(n) else out


def identification_bounds(prior: float, mi: float, ns: ArrayLike) -> list[dict[str, Any]]:
    """Example 1: the per-element success bounds for sets of ``n`` elements, one row per ``n`` and
    bound: ``theorem1`` (:func:`posterior_success_bound`, any ``n``), ``theorem2``
    (:func:`individual_success_bound`) and ``pinsker`` (:func:`pinsker_success_bound`).

    With ``prior = 1/100`` and ``mi = 1`` nat: Theorem 1 gives 0.35729 (the paper's 0.36);
    Theorem 2 gives 0.14892 (n = 10) and 0.06790 (n = 50), the paper prints 0.17 and 0.06.
    """
    n_arr = np.asarray(ns)
    thm1 = float(posterior_success_bound(prior, mi))
    pinsker = float(pinsker_success_bound(prior, mi))
    rows = []
    for n, thm2 in zip(n_arr, individual_success_bound(prior, mi, n_arr), strict=True):
        for bound, value in (("theorem1", thm1), ("theorem2", float(thm2)), ("pinsker", pinsker)):
            rows.append(
                {"n": int(n), "prior": prior, "mi": mi, "bound": bound, "success_bound": value}
            )
    return rows


def success_curves(priors: Sequence[float], mi: ArrayLike) -> list[dict[str, Any]]:
    """Theorem 1 inverted (``theorem1_kl``) and Pinsker's bound (``pinsker``) over the budgets
    ``mi``, for each prior: rows ``prior, v, bound, success_bound`` (each prior's Theorem 1 rows,
    then its Pinsker rows)."""
    v = np.asarray(mi, dtype=np.float64)
    rows = []
    for q in priors:
        for bound, values in (
            ("theorem1_kl", posterior_success_bound(q, v)),
            ("pinsker", pinsker_success_bound(q, v)),
        ):
            rows += [
                {"prior": q, "v": vi, "bound": bound, "success_bound": bi}
                for vi, bi in zip(v, values, strict=True)
            ]
    return rows
