"""The paper's accounting of PB-DP: Prop. 1 (profile), Prop. 2 (RDP), Prop. 3 / Algorithm 1
(composition), Appendix D (crude bound).

All functions take the extra-loss terms :class:`~privrepro.boosting.regions.PaperTerms`
(``L1, L2, W1, W2``) and the kernel's privacy profile as a function, so they hold for any kernel.
These are the paper's formulas: the exact accounting is in :mod:`privrepro.boosting.exact`, and
the note lists where they understate the loss.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np
from scipy import optimize, special

from privrepro.boosting._roots import decreasing_root
from privrepro.boosting.regions import PaperTerms

__all__ = [
    "algorithm1_as_printed",
    "algorithm1_double_loop",
    "appendix_d_epsilon",
    "composition_delta",
    "composition_epsilon_curve",
    "composition_pmf",
    "composition_pmfs",
    "epsilon_for_delta",
    "profile_delta",
    "rdp_epsilon",
]

DeltaFn = Callable[[np.ndarray], np.ndarray]


def profile_delta(
    terms: PaperTerms, kernel_delta: DeltaFn, epsilon: float | np.ndarray
) -> np.ndarray:
    """Prop. 1: ``δ(ε) = W1 δ_Z(ε−L1−L2) + W2 δ_Z(ε−L1+L2) + W3 δ_Z(ε−L1)``.

    ``kernel_delta`` is the kernel's privacy profile at the sensitivity, valid for all real ε.
    """
    e = np.asarray(epsilon, float) - terms.L1
    out = terms.W3 * kernel_delta(e)
    if terms.W1 > 0:
        out = out + terms.W1 * kernel_delta(e - terms.L2)
    if terms.W2 > 0:
        out = out + terms.W2 * kernel_delta(e + terms.L2)
    return np.asarray(out, float)


def epsilon_for_delta(
    delta_fn: Callable[[float], float], delta: float, eps_hi: float = 1.0, xtol: float = 1e-12
) -> float:
    """Smallest ``ε ≥ 0`` with ``delta_fn(ε) ≤ delta`` for a non-increasing profile (bisection).

    Returns 0 when ``delta_fn(0) ≤ delta`` and ``inf`` when no finite ε reaches ``delta``.
    """
    if delta_fn(0.0) <= delta:
        return 0.0
    hi = eps_hi
    lo = 0.0
    while delta_fn(hi) > delta:
        lo = hi
        hi *= 2
        if hi > 1e7:
            return math.inf
    return float(
        optimize.brentq(lambda e: delta_fn(e) - delta, lo, hi, xtol=xtol, rtol=1e-15, maxiter=200)
    )


def rdp_epsilon(terms: PaperTerms, kernel_rdp: float, alpha: float) -> float:
    """Prop. 2: ``ε = ε₀ + L1 + log[W1 e^{(α−1)L2} + W2 e^{−(α−1)L2} + W3]/(α−1)``.

    (Remark 4's printed exponent ``e^{(α−1)}(e^{L2}+e^{−L2})`` is a typo; Prop. 2 is used.)
    """
    a1 = alpha - 1.0
    parts = []
    weights = []
    for w, s in ((terms.W1, a1 * terms.L2), (terms.W2, -a1 * terms.L2), (terms.W3, 0.0)):
        if w > 0:
            parts.append(s)
            weights.append(w)
    lse = float(special.logsumexp(parts, b=weights)) if parts else 0.0
    return kernel_rdp + terms.L1 + lse / a1


def appendix_d_epsilon(eps0: float, q: float) -> float:
    """Appendix D's crude bound: ``ε₀ − 2 log(1 − q)`` with the kernel's δ."""
    return eps0 - 2.0 * math.log1p(-q)


# --- composition (Thm. 2, Prop. 3, Algorithm 1) -------------------------------------------------


def composition_pmf(W1: float, W2: float, T: int) -> np.ndarray:
    """Law of ``K = e1 − e2`` after T steps: the T-fold convolution of ``{+1:W1, 0:W3, −1:W2}``.

    Index ``i`` holds ``P(K = i − T)``; this is Algorithm 1's vector ``V`` (corrected index).
    """
    step = np.array([W2, 1.0 - W1 - W2, W1])
    # binary powering keeps it O(T log T) with numpy's convolve
    result = np.ones(1)
    base = step
    n = T
    while n:
        if n & 1:
            result = np.convolve(result, base)
        n >>= 1
        if n:
            base = np.convolve(base, base)
    return np.clip(result, 0.0, None)


def composition_pmfs(W1: float, W2: float, T_max: int) -> Iterator[np.ndarray]:
    """``composition_pmf`` for T = 1 … T_max by one convolution step each (O(T) per step)."""
    step = np.array([W2, 1.0 - W1 - W2, W1])
    pmf = np.ones(1)
    for _ in range(T_max):
        pmf = np.convolve(pmf, step)
        yield pmf


def composition_delta(
    terms: PaperTerms, kernel_delta_T: DeltaFn, epsilon: float | np.ndarray, T: int
) -> np.ndarray:
    """Prop. 3 / Algorithm 1 (corrected, O(T)):
    ``δ(ε) = Σ_k P(K=k) δ_Z^T(ε − T L1 − k L2)``, ``K`` as in :func:`composition_pmf`.

    ``kernel_delta_T`` is the T-fold composed kernel's profile.
    """
    pmf = composition_pmf(terms.W1, terms.W2, T)
    k = np.arange(-T, T + 1)
    keep = pmf > 0
    eps = np.atleast_1d(np.asarray(epsilon, float))
    args = eps[:, None] - T * terms.L1 - k[keep][None, :] * (terms.L2 if terms.L2 < math.inf else 0)
    out = (kernel_delta_T(args) * pmf[keep][None, :]).sum(axis=1)
    return out if np.ndim(epsilon) else out[0]


def _algorithm1_weights(terms: PaperTerms, T: int, shift: int) -> np.ndarray:
    """Lines 6–10 of Algorithm 1: the double loop over ``(e1, e2)`` that adds the multinomial
    weight ``C(T, e1) C(T − e1, e2) W1^e1 W2^e2 W3^(T − e1 − e2)`` into ``V[e1 − e2 + shift + T]``
    (``shift = 0``: the corrected index; ``−1``: as printed, a negative index counting from the
    end as in Python)."""
    W1, W2 = terms.W1, terms.W2
    W3 = 1.0 - W1 - W2
    V = np.zeros(2 * T + 1)
    for e1 in range(T + 1):
        for e2 in range(T - e1 + 1):
            u = math.comb(T, e1) * math.comb(T - e1, e2) * W1**e1 * W2**e2 * W3 ** (T - e1 - e2)
            V[e1 - e2 + shift + T] += u
    return V


def algorithm1_double_loop(
    terms: PaperTerms, kernel_delta_T: DeltaFn, epsilon: float, T: int
) -> float:
    """Algorithm 1 as a literal double loop over ``(e1, e2)``, with its three misprints fixed
    (index ``e1 − e2 + T``, a vector of ``2T + 1`` entries, and the weight ``V[i]`` in line 15)."""
    V = _algorithm1_weights(terms, T, shift=0)
    delta = 0.0
    for i in range(2 * T + 1):
        delta += V[i] * float(
            kernel_delta_T(np.asarray(epsilon - T * terms.L1 - (i - T) * terms.L2))
        )
    return delta


def algorithm1_as_printed(
    terms: PaperTerms, kernel_delta_T: DeltaFn, epsilon: float, T: int
) -> float:
    """Algorithm 1 of the pb paper exactly as printed (Sec. 3.3), misprints included.

    Lines 6–15 as printed, read with the ``range`` semantics the pseudocode uses (Python's, so a
    negative index counts from the end)::

        V ← zeros(2T + 1); δ ← 0
        for e1 in range(T + 1): for e2 in range(T − e1 + 1):
            V[e1 − e2 − 1 + T] += C(T, e1) C(T − e1, e2) W1^e1 W2^e2 (1 − W1 − W2)^(T − e1 − e2)
        for i in range(0, 2T + 2): δ ← δ + δ'^T_Z(ε − V[i − T])

    with ``δ'^T_Z(x) = δ^T_Z(x − T·L1)``, the shifted composed kernel profile. Three misprints
    make it compute something else than Prop. 3: the index is shifted by one (``e1 − e2 = −T``
    lands on the last entry), the last loop runs over ``2T + 2`` entries, and line 15 subtracts
    the *probability* ``V[i − T]`` from ε instead of weighting ``δ_Z^T(ε − (i − T)·L2)`` by
    ``V[i]``. :func:`algorithm1_double_loop` is the corrected double loop; both are shown side by
    side in the report's erratum.
    """
    V = _algorithm1_weights(terms, T, shift=-1)  # as printed: "− 1"
    delta = 0.0
    for i in range(0, 2 * T + 2):  # as printed: 2T + 2 entries
        v = V[i - T] if -(2 * T + 1) <= i - T < 2 * T + 1 else 0.0
        delta += float(kernel_delta_T(np.asarray(epsilon - v - T * terms.L1)))  # as printed
    return delta


def composition_epsilon_curve(
    terms: PaperTerms,
    kernel_delta_for_T: Callable[[np.ndarray, np.ndarray], np.ndarray],
    T_values: np.ndarray,
    delta: float,
    drop_fraction: float = 1e-9,
    xtol: float = 1e-10,
) -> np.ndarray:
    """ε(δ) after T compositions (Prop. 3) for every T in ``T_values``, vectorised over T.

    ``kernel_delta_for_T(eps, T)`` is the composed kernel profile (broadcasting). The law of K is
    built by one convolution per T. Terms whose probability is below
    ``drop_fraction · δ / (2T + 1)`` are dropped and their total mass is added to δ(ε) instead
    (``δ_Z ≤ 1``), so the result can only overstate ε, by a relative δ-error below
    ``drop_fraction``. The root is found by a vectorised Illinois iteration on ``log δ``.
    """
    T_values = np.asarray(T_values, int)
    T_max = int(T_values.max())
    want = sorted(set(T_values.tolist()))
    want_set = set(want)
    rows_T, rows_k, rows_p, dropped = [], [], [], []
    for T, pmf in enumerate(composition_pmfs(terms.W1, terms.W2, T_max), start=1):
        if T in want_set:
            floor = drop_fraction * delta / (2 * T + 1)
            keep = np.flatnonzero(pmf >= floor)
            rows_T.append(np.full(keep.size, T))
            rows_k.append(keep - T)
            rows_p.append(pmf[keep])
            dropped.append(max(0.0, 1.0 - float(pmf[keep].sum())) if keep.size < pmf.size else 0.0)
    Ts = np.concatenate(rows_T)
    ks = np.concatenate(rows_k).astype(float)
    ps = np.concatenate(rows_p)
    order = {T: i for i, T in enumerate(want)}
    group = np.array([order[t] for t in Ts])
    n = len(want)
    extra = np.asarray(dropped)
    L2 = terms.L2 if terms.L2 < math.inf else 0.0
    Tf = Ts.astype(float)

    def delta_all(eps: np.ndarray) -> np.ndarray:
        e = eps[group] - Ts * terms.L1 - ks * L2
        return np.bincount(group, weights=ps * kernel_delta_for_T(e, Tf), minlength=n) + extra

    hi = np.ones(n)
    lo = np.zeros(n)
    for _ in range(100):
        too_big = delta_all(hi) > delta
        if not too_big.any():
            break
        lo = np.where(too_big, hi, lo)
        hi = np.where(too_big, hi * 4, hi)
    zero_ok = delta_all(np.zeros(n)) <= delta
    out = decreasing_root(delta_all, np.full(n, delta), np.where(zero_ok, -1.0, lo), hi, xtol)
    out = np.where(zero_ok, 0.0, out)
    return out[np.searchsorted(np.asarray(want), T_values)]
