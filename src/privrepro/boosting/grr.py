"""PB-GRR: privacy boosting of generalised randomized response in the local model (pb paper,
Sec. 4.4, Prop. 7, Remark 5, eqs. 10–11, Prop. 8).

Every domain value ``x`` has a preferred set ``S(x)`` (its category, ``|S|`` values). A user with
value ``x`` reports ``x`` with probability ``p``, another value of its category with ``p_s`` each,
and a value outside with ``p_s̄`` each, where ``D = e^ε + (|S| − 1) e^{ε−ε₀} + |X| − |S|`` and

    p = e^ε / D,   p_s = e^{ε−ε₀} / D,   p_s̄ = 1 / D       (Prop. 7).

``ε₀ = ε`` is plain GRR; ``ε₀ = 0`` reports uniformly within the category up to the ε-LDP outside
mass. The category-frequency estimator is eq. (10), the value-frequency estimator eq. (11); both
are unbiased when the categories partition the domain into blocks of equal size (Prop. 8).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privrepro.config import ConfigError

__all__ = [
    "GRRProbabilities",
    "analytic_mse",
    "block_partition",
    "estimate",
    "grr_probabilities",
    "monte_carlo_mse",
    "output_matrix",
]


@dataclass(frozen=True)
class GRRProbabilities:
    """``p, p_s, p_s̄`` of Prop. 7 and the in-category mass ρ of Remark 5."""

    p: float
    p_s: float
    p_sbar: float
    set_size: int
    domain_size: int

    @property
    def rho(self) -> float:
        return self.p + (self.set_size - 1) * self.p_s


def grr_probabilities(
    epsilon: float, eps0: float, domain_size: int, set_size: int
) -> GRRProbabilities:
    """Prop. 7 of the pb paper (valid for ``0 ≤ ε₀ ≤ ε``)."""
    if not 0 <= eps0 <= epsilon:
        raise ConfigError("eps0", eps0, f"must lie in [0, epsilon={epsilon!r}]")
    if not 1 <= set_size <= domain_size:
        raise ConfigError("set_size", set_size, f"must lie in [1, domain_size={domain_size!r}]")
    # divide through by e^ε for stability
    D = 1.0 + (set_size - 1) * math.exp(-eps0) + (domain_size - set_size) * math.exp(-epsilon)
    return GRRProbabilities(
        1.0 / D, math.exp(-eps0) / D, math.exp(-epsilon) / D, set_size, domain_size
    )


def block_partition(domain_size: int, set_size: int, rule: str = "pad") -> tuple[np.ndarray, int]:
    """Categories as consecutive blocks of ``set_size`` values.

    ``rule="pad"`` (assumed default) extends the domain with never-held values to a multiple of
    ``set_size`` so every category has exactly ``set_size`` values (the estimators are then
    unbiased); ``rule="last_short"`` keeps the domain and lets the last block be shorter (the
    estimators are then mis-specified for it). Returns the category of each (extended) value and
    the extended domain size.
    """
    if rule == "pad":
        size = int(math.ceil(domain_size / set_size) * set_size)
    elif rule == "last_short":
        size = domain_size
    else:
        raise ConfigError("partition", rule, "must be one of ['pad', 'last_short']")
    return np.arange(size) // set_size, size


def output_matrix(probs: GRRProbabilities, category: np.ndarray) -> np.ndarray:
    """Row ``x``: the report distribution of a user holding ``x`` (categories as given).

    For a short last category the row is renormalised with its own ``D`` (the mechanism of Prop. 7
    applied with that category's size).
    """
    n = len(category)
    same = category[:, None] == category[None, :]
    eps0 = -math.log(probs.p_s / probs.p)
    eps = -math.log(probs.p_sbar / probs.p)
    w = np.where(same, math.exp(-eps0), math.exp(-eps))
    np.fill_diagonal(w, 1.0)
    assert w.shape == (n, n)
    return w / w.sum(axis=1, keepdims=True)


def estimate(
    counts: np.ndarray, category: np.ndarray, probs: GRRProbabilities
) -> tuple[np.ndarray, np.ndarray]:
    """Eqs. (10) and (11) from the report counts (last axis: the domain).

    Returns ``(F̂_S per category, F̂_x per value)``.
    """
    N = counts.sum(axis=-1, keepdims=True)
    s = probs.set_size
    n_cat = int(category.max()) + 1
    cat_counts = np.stack([counts[..., category == k].sum(axis=-1) for k in range(n_cat)], axis=-1)
    a = probs.p + (s - 1) * probs.p_s
    b = s * probs.p_sbar
    F_S = (cat_counts - N * b) / (a - b)
    with np.errstate(divide="ignore", invalid="ignore"):
        F_x = (counts - F_S[..., category] * (probs.p_s - probs.p_sbar) - N * probs.p_sbar) / (
            probs.p - probs.p_s
        )
    return F_S, F_x


def analytic_mse(
    hist: np.ndarray, category: np.ndarray, probs: GRRProbabilities
) -> tuple[float, float]:
    """Exact variance of eqs. (10)–(11) (unbiased under equal blocks), averaged over categories and
    over values, in counts². ``hist``: true counts per (extended) domain value."""
    hist = np.asarray(hist, float)
    N = hist.sum()
    s = probs.set_size
    p, ps, pb = probs.p, probs.p_s, probs.p_sbar
    a, b = p + (s - 1) * ps, s * pb
    n_cat = int(category.max()) + 1
    n_S = np.bincount(category, weights=hist, minlength=n_cat)
    var_S = (n_S * a * (1 - a) + (N - n_S) * b * (1 - b)) / (a - b) ** 2
    nS_x = n_S[category]
    nx = hist
    var_Cx = nx * p * (1 - p) + (nS_x - nx) * ps * (1 - ps) + (N - nS_x) * pb * (1 - pb)
    cov = nx * p * (1 - a) + (nS_x - nx) * ps * (1 - a) + (N - nS_x) * pb * (1 - b)
    k = (ps - pb) / (a - b)
    if p - ps <= 0:
        return float(var_S.mean()), math.inf
    var_x = (
        var_Cx + k * k * (n_S * a * (1 - a) + (N - n_S) * b * (1 - b))[category] - 2 * k * cov
    ) / (p - ps) ** 2
    return float(var_S.mean()), float(var_x.mean())


def monte_carlo_mse(
    hist: np.ndarray,
    category: np.ndarray,
    probs: GRRProbabilities,
    rng: np.random.Generator,
    repetitions: int,
) -> tuple[float, float, float, float]:
    """Monte Carlo MSE of eqs. (10)–(11): each repetition draws every user's report.

    Returns ``(mse_category, se_category, mse_value, se_value)`` (counts², standard errors of the
    mean over repetitions).
    """
    hist = np.asarray(hist, int)
    M = output_matrix(probs, category)
    held = np.flatnonzero(hist)
    n = np.broadcast_to(hist[held], (repetitions, held.size))
    draws = rng.multinomial(n, M[held])  # (reps, held values, domain)
    counts = draws.sum(axis=1)
    F_S, F_x = estimate(counts, category, probs)
    n_cat = int(category.max()) + 1
    true_S = np.bincount(category, weights=hist, minlength=n_cat)
    err_S = ((F_S - true_S) ** 2).mean(axis=-1)
    r = max(repetitions, 2)
    cat_mse, cat_se = float(err_S.mean()), float(err_S.std(ddof=1) / math.sqrt(r))
    if probs.p - probs.p_s <= 0:  # ε₀ = 0: eq. (11) divides by p − p_s = 0
        return cat_mse, cat_se, math.inf, math.nan
    err_x = ((F_x - hist) ** 2).mean(axis=-1)
    return cat_mse, cat_se, float(err_x.mean()), float(err_x.std(ddof=1) / math.sqrt(r))
