"""Group privacy for (ε, δ)-DP.

A mechanism that is (ε, δ)-DP for neighbouring datasets is (kε, δ_k)-DP for datasets that differ
in k records, with δ_k = Σ_{i=0}^{k−1} e^{iε} δ (Dwork & Roth 2014, Thm. 2.2 generalised; cl paper,
Sec. 4.4). The cl paper uses it for its Fig. 2: a class of k examples absent from a neighbour is
released with probability at most δ_k, so it is dropped with probability at least 1 − δ_k.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["drop_probability_lower_bound", "group_delta", "largest_group_dropped"]


def group_delta(epsilon: ArrayLike, delta: ArrayLike, k: ArrayLike) -> NDArray[np.float64]:
    """δ_k = Σ_{i=0}^{k−1} e^{iε} δ, evaluated in closed form as δ (e^{kε} − 1)/(e^ε − 1).

    Broadcasts over ``epsilon``, ``delta`` and ``k`` (k ≥ 1 integers; ε > 0). The geometric sum
    is computed with ``expm1`` so small ε loses no precision; ε = 0 gives kδ.
    """
    eps = np.asarray(epsilon, dtype=float)
    dlt = np.asarray(delta, dtype=float)
    kk = np.asarray(k, dtype=float)
    if np.any(kk < 1) or np.any(kk != np.floor(kk)):
        raise ValueError(f"k = {k!r}: must be integers >= 1")
    if np.any(eps < 0):
        raise ValueError(f"epsilon = {epsilon!r}: must be >= 0")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        ratio = np.where(eps > 0, np.expm1(kk * eps) / np.expm1(np.where(eps > 0, eps, 1.0)), kk)
    return np.asarray(dlt * ratio, dtype=float)


def drop_probability_lower_bound(
    epsilon: ArrayLike, delta: ArrayLike, k: ArrayLike
) -> NDArray[np.float64]:
    """Pr[a class of k examples is not released] ≥ max(0, 1 − δ_k) (cl paper, Sec. 4.4, Fig. 2)."""
    return np.clip(1.0 - group_delta(epsilon, delta, k), 0.0, 1.0)


def largest_group_dropped(epsilon: float, delta: float, probability: float = 0.99) -> int:
    """The largest k with 1 − δ_k ≥ ``probability``: the biggest class an (ε, δ)-DP label
    release still drops with at least that probability (cl paper, Sec. 4.4, Fig. 2).

    δ_k increases with k; the closed-form root k* = ln(1 + (1 − p)(e^ε − 1)/δ)/ε is refined by
    checking ``group_delta`` at its neighbours so rounding cannot move the integer. Returns 0 when
    even k = 1 misses the probability. cl note check 3: 12 at (ε=1, δ=1e-7), 7 at (ε=1, δ=1e-5).
    """
    if not epsilon > 0:
        raise ValueError(f"epsilon = {epsilon!r}: must be > 0")
    if not 0 < delta < 1:
        raise ValueError(f"delta = {delta!r}: must lie in (0, 1)")
    if not 0 < probability < 1:
        raise ValueError(f"probability = {probability!r}: must lie in (0, 1)")
    budget = 1.0 - probability
    k = int(np.floor(np.log1p(budget * np.expm1(epsilon) / delta) / epsilon))
    k = max(k, 0)

    def ok(kk: int) -> bool:
        return kk == 0 or float(group_delta(epsilon, delta, kk)) <= budget

    while k > 0 and not ok(k):
        k -= 1
    while ok(k + 1):
        k += 1
    return k
