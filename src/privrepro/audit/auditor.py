"""Monte Carlo lower confidence bound on ε at δ from samples of a mechanism on two inputs.

If M is (ε, δ)-DP then for neighbouring inputs with output laws P and Q and for *every* set S,
P(S) ≤ e^ε Q(S) + δ and Q(S) ≤ e^ε P(S) + δ. A set S fixed before looking at fresh samples,
with one-sided Clopper–Pearson bounds p_L ≤ P(S) and q_U ≥ Q(S), therefore gives the lower
confidence bound ε_LB = ln((p_L − δ)/q_U) (more in ``docs/modules.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray
from tqdm.auto import tqdm

from privrepro.audit.binomial import clopper_pearson_lower, clopper_pearson_upper
from privrepro.config import ConfigError
from privrepro.progress import progress_disabled

__all__ = ["AuditReport", "Sampler", "audit", "neighbour_samplers", "sampler_from_distribution"]

Sampler = Callable[[int, np.random.Generator], ArrayLike]
"""Draws ``n`` outputs of the mechanism on one input: ``sampler(n, rng)`` → array of n rows."""


class _Frozen(Protocol):
    def rvs(self, size: int, random_state: np.random.Generator) -> Any: ...


@dataclass(frozen=True)
class AuditReport:
    """Result of :func:`audit`.

    ``epsilon_lower_bound`` is a lower confidence bound on the mechanism's ε at ``delta`` (valid
    with probability ≥ ``confidence``; −inf when no set has p_L > δ). ``refuted`` is
    ``epsilon_lower_bound > epsilon_claimed``. ``delta_lower_bound`` is the matching lower bound
    on δ(ε_claimed), p_L − e^ε q_U (≤ 0 means no evidence). The set is S = {x ≥ threshold}
    (``side="upper"``) or {x ≤ threshold}, compared in ``direction`` "P/Q" (P(S) against Q(S))
    or "Q/P"; ``p_hat``/``q_hat`` are the numerator/denominator frequencies on the evaluation
    draws and ``p_lower``/``q_upper`` their bounds.
    """

    epsilon_lower_bound: float
    delta_lower_bound: float
    epsilon_claimed: float
    delta: float
    refuted: bool
    confidence: float
    n_samples: int
    n_search: int
    n_eval: int
    threshold: float
    side: Literal["upper", "lower"]
    direction: Literal["P/Q", "Q/P"]
    p_hat: float
    q_hat: float
    p_lower: float
    q_upper: float


def sampler_from_distribution(dist: _Frozen) -> Sampler:
    """A sampler for a frozen scipy.stats distribution (``dist.rvs(size, random_state)``)."""

    def sample(n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        return np.asarray(dist.rvs(size=n, random_state=rng), dtype=float)

    return sample


def neighbour_samplers(
    mechanism: Callable[[NDArray[np.float64], np.random.Generator], ArrayLike],
    value_p: ArrayLike,
    value_q: ArrayLike,
) -> tuple[Sampler, Sampler]:
    """Samplers of ``mechanism(values, rng)`` (e.g. ``GaussianMechanism.sample``) on two fixed
    query values f(x) and f(x'), each repeated for the n draws (rows)."""

    def make(value: ArrayLike) -> Sampler:
        v = np.asarray(value, dtype=float)

        def sample(n: int, rng: np.random.Generator) -> ArrayLike:
            return mechanism(np.broadcast_to(v, (n, *v.shape)).copy(), rng)

        return sample

    return make(value_p), make(value_q)


def _as_sampler(s: Sampler | _Frozen) -> Sampler:
    return sampler_from_distribution(s) if hasattr(s, "rvs") else s  # type: ignore[arg-type,return-value]


def _draw(
    sampler: Sampler,
    n: int,
    rng: np.random.Generator,
    statistic: Callable[[NDArray[Any]], ArrayLike] | None,
    batch: int,
    bar: Any,
) -> NDArray[np.float64]:
    out = np.empty(n, dtype=float)
    done = 0
    while done < n:
        m = min(batch, n - done)
        raw = np.asarray(sampler(m, rng))
        if raw.shape[:1] != (m,):
            raise ConfigError(
                "sampler", f"output of shape {raw.shape}", f"must have {m} rows (one per draw)"
            )
        if statistic is not None:
            stat = np.asarray(statistic(raw), dtype=float)
        elif raw.ndim == 1 or (raw.ndim == 2 and raw.shape[1] == 1):
            stat = raw.reshape(m).astype(float)
        else:
            raise ConfigError(
                "statistic", None, f"must be given for outputs of shape {raw.shape[1:]} per draw"
            )
        if stat.shape != (m,):
            raise ConfigError("statistic", f"output of shape {stat.shape}", f"must be ({m},)")
        if np.any(np.isnan(stat)):
            raise ConfigError("statistic", "NaN", "outputs must not be NaN (use ±inf as markers)")
        out[done : done + m] = stat
        done += m
        bar.update(m)
    return out


def _candidate_thresholds(
    xp: NDArray[np.float64], xq: NDArray[np.float64], n_grid: int
) -> NDArray[np.float64]:
    pooled = np.sort(np.concatenate([xp, xq]))
    n = pooled.size
    uniform = np.linspace(0, n - 1, n_grid)
    tail_counts = np.unique(np.round(np.geomspace(1, n / 2, n_grid // 2)))
    idx = np.concatenate([uniform, tail_counts - 1, n - tail_counts])
    idx = np.unique(np.clip(np.round(idx), 0, n - 1).astype(np.int64))
    return np.unique(pooled[idx])


def _counts(
    sorted_x: NDArray[np.float64], t: NDArray[np.float64]
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """#{x ≥ t} and #{x ≤ t} for every threshold."""
    n = sorted_x.size
    ge = n - np.searchsorted(sorted_x, t, side="left")
    le = np.searchsorted(sorted_x, t, side="right")
    return ge.astype(np.int64), le.astype(np.int64)


def _eps_bound(
    k_num: ArrayLike, k_den: ArrayLike, n: int, delta: float, alpha: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    p_lo = clopper_pearson_lower(k_num, n, alpha)
    q_hi = clopper_pearson_upper(k_den, n, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.where(
            p_lo > delta, np.log(np.maximum(p_lo - delta, 1e-300)) - np.log(q_hi), -np.inf
        )
    return eps, p_lo, q_hi


def audit(
    sampler_p: Sampler | _Frozen,
    sampler_q: Sampler | _Frozen,
    epsilon_claimed: float,
    delta: float,
    n_samples: int,
    rng: np.random.Generator,
    *,
    confidence: float = 0.99,
    statistic: Callable[[NDArray[Any]], ArrayLike] | None = None,
    search_fraction: float = 0.5,
    n_grid: int = 2000,
    batch_size: int = 1 << 18,
    progress: bool = True,
) -> AuditReport:
    """Lower confidence bound on ε at ``delta`` for a mechanism with output laws P and Q on two
    neighbouring inputs, and whether the claimed (ε, δ) is refuted (``docs/modules.md``).

    Args:
        sampler_p, sampler_q: ``sampler(n, rng)`` drawing n outputs on each input, or frozen
            scipy.stats distributions.
        epsilon_claimed, delta: the claimed guarantee (δ ∈ [0, 1)).
        n_samples: draws per input in total; ``search_fraction`` of them choose the set, the
            rest evaluate it.
        rng: the only source of randomness.
        confidence: probability that the reported bound is valid.
        statistic: maps a batch of outputs (n rows) to n reals; needed for non-scalar outputs.
        n_grid: number of uniform (and of tail) candidate thresholds.
        batch_size: draws per sampler call (memory bound).
        progress: show a progress bar over the draws.
    """
    if not epsilon_claimed >= 0:
        raise ConfigError("epsilon_claimed", epsilon_claimed, "must lie in [0, inf)")
    if not 0 <= delta < 1:
        raise ConfigError("delta", delta, "must lie in [0, 1)")
    if not 0 < confidence < 1:
        raise ConfigError("confidence", confidence, "must lie in (0, 1)")
    if not 0 < search_fraction < 1:
        raise ConfigError("search_fraction", search_fraction, "must lie in (0, 1)")
    n_search = int(n_samples * search_fraction)
    n_eval = int(n_samples) - n_search
    if n_search < 10 or n_eval < 10:
        raise ConfigError(
            "n_samples", n_samples, "must leave >= 10 draws for search and for evaluation"
        )
    if n_grid < 2:
        raise ConfigError("n_grid", n_grid, "must be >= 2")
    sp, sq = _as_sampler(sampler_p), _as_sampler(sampler_q)
    alpha = (1.0 - confidence) / 4.0

    total = 2 * (n_search + n_eval)
    with tqdm(
        total=total,
        desc="audit draws",
        unit="draw",
        unit_scale=True,
        disable=True if not progress or total < 4 * batch_size else progress_disabled(),
        leave=False,
    ) as bar:
        xp = np.sort(_draw(sp, n_search, rng, statistic, batch_size, bar))
        xq = np.sort(_draw(sq, n_search, rng, statistic, batch_size, bar))
        # Search: best half-line per direction on the search draws.
        t = _candidate_thresholds(xp, xq, n_grid)
        p_ge, p_le = _counts(xp, t)
        q_ge, q_le = _counts(xq, t)
        chosen: list[tuple[str, str, float]] = []
        for direction, (a_ge, a_le, b_ge, b_le) in (
            ("P/Q", (p_ge, p_le, q_ge, q_le)),
            ("Q/P", (q_ge, q_le, p_ge, p_le)),
        ):
            e_up = _eps_bound(a_ge, b_ge, n_search, delta, alpha)[0]
            e_lo = _eps_bound(a_le, b_le, n_search, delta, alpha)[0]
            if np.max(e_up) >= np.max(e_lo):
                chosen.append((direction, "upper", float(t[int(np.argmax(e_up))])))
            else:
                chosen.append((direction, "lower", float(t[int(np.argmax(e_lo))])))
        # Evaluation on fresh draws.
        ep = np.sort(_draw(sp, n_eval, rng, statistic, batch_size, bar))
        eq = np.sort(_draw(sq, n_eval, rng, statistic, batch_size, bar))

    best: dict[str, Any] | None = None
    for direction, side, thr in chosen:
        num, den = (ep, eq) if direction == "P/Q" else (eq, ep)
        tt = np.array([thr])
        k_num = _counts(num, tt)[0 if side == "upper" else 1][0]
        k_den = _counts(den, tt)[0 if side == "upper" else 1][0]
        eps, p_lo, q_hi = _eps_bound(k_num, k_den, n_eval, delta, alpha)
        row = dict(
            eps=float(eps),
            direction=direction,
            side=side,
            threshold=thr,
            p_hat=k_num / n_eval,
            q_hat=k_den / n_eval,
            p_lower=float(p_lo),
            q_upper=float(q_hi),
            delta_lb=float(p_lo) - math.exp(epsilon_claimed) * float(q_hi),
        )
        if best is None or (row["eps"], row["delta_lb"]) > (best["eps"], best["delta_lb"]):
            best = row
    assert best is not None
    return AuditReport(
        epsilon_lower_bound=best["eps"],
        delta_lower_bound=best["delta_lb"],
        epsilon_claimed=float(epsilon_claimed),
        delta=float(delta),
        refuted=bool(best["eps"] > epsilon_claimed),
        confidence=float(confidence),
        n_samples=total,
        n_search=n_search,
        n_eval=n_eval,
        threshold=best["threshold"],
        side=best["side"],
        direction=best["direction"],
        p_hat=float(best["p_hat"]),
        q_hat=float(best["q_hat"]),
        p_lower=best["p_lower"],
        q_upper=best["q_upper"],
    )
