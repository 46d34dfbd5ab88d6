"""Continual-learning metrics of the cl paper, App. E (after Chaudhry et al. 2018).

``acc[t, i]`` is the test accuracy on task i after learning task t (0-based here; the paper
counts from 1). All values are fractions; the paper's tables report them ×100.

* AA_t = (1/t) Σ_{i≤t} acc_{t,i} — unweighted mean over the tasks seen so far.
* F_{t,i} = max_{k∈{1..t−1}} (acc_{k,i} − acc_{t,i}) — the paper's max runs from k = 1, not from
  k = i (note §8.8); ``since="learned"`` gives the usual k ∈ {i..t−1}.
* AF_t = (1/(t−1)) Σ_{i≤t−1} F_{t,i}; undefined (NaN) for t = 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privrepro.config import ConfigError

__all__ = [
    "FORGETTING_SINCE",
    "accuracy_matrix_rows",
    "average_accuracy",
    "average_forgetting",
    "forgetting",
]

FORGETTING_SINCE = ("paper", "learned")


def _matrix(acc: ArrayLike) -> NDArray[np.float64]:
    a = np.asarray(acc, dtype=float)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ConfigError("accuracy matrix shape", a.shape, "must be square (T × T)")
    return a


def average_accuracy(acc: ArrayLike) -> NDArray[np.float64]:
    """AA_t for t = 1..T (cl App. E): the mean of row t over its first t entries."""
    a = _matrix(acc)
    mask = np.tril(np.ones_like(a, dtype=bool))
    return np.asarray(np.where(mask, a, 0.0).sum(axis=1) / mask.sum(axis=1), dtype=float)


def forgetting(acc: ArrayLike, since: str = "paper") -> NDArray[np.float64]:
    """F[t, i] for i < t (NaN elsewhere), with the max over k from 1 (``"paper"``) or from i."""
    if since not in FORGETTING_SINCE:
        raise ConfigError("since", since, f"must be one of {list(FORGETTING_SINCE)}")
    a = _matrix(acc)
    n = a.shape[0]
    out = np.full((n, n), np.nan)
    for t in range(1, n):
        for i in range(t):
            k0 = 0 if since == "paper" else i
            out[t, i] = np.max(a[k0:t, i]) - a[t, i]
    return out


def average_forgetting(acc: ArrayLike, since: str = "paper") -> NDArray[np.float64]:
    """AF_t for t = 1..T (cl App. E); AF_1 is NaN."""
    f = forgetting(acc, since)
    n = f.shape[0]
    out = np.full(n, np.nan)
    for t in range(1, n):
        out[t] = float(np.mean(f[t, :t]))
    return out


def accuracy_matrix_rows(
    acc: ArrayLike, since: str = "paper", scale: float = 1.0
) -> list[dict[str, Any]]:
    """The accuracy matrix as tidy rows: one per (task t, evaluated task i), 1-based, with
    ``acc`` = acc[t, i] and row t's ``aa`` = AA_t and ``af`` = AF_t, all × ``scale`` (100 for
    the paper's percentages)."""
    a = _matrix(acc)
    aa = average_accuracy(a)
    af = average_forgetting(a, since)
    T = a.shape[0]
    return [
        {
            "task": t + 1,
            "eval_task": i + 1,
            "acc": scale * a[t, i],
            "aa": scale * aa[t],
            "af": scale * af[t],
        }
        for t in range(T)
        for i in range(T)
    ]
