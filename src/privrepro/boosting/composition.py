"""T-fold composition of PB-DP against the Gaussian meeting the same utility (pb Sec. 5.4, Fig. 6).

* :func:`composition_dp` — ε at δ after T releases, T = 1 … t_max: the Gaussian in closed form
  (μ√T), PB-DP by the paper's Algorithm 1 (Prop. 3, corrected O(T) form) at every T, and over
  every neighbouring pair at every T: the privacy-loss distribution of a dominating pair
  (:mod:`privrepro.boosting.dominating`: the paper's pair ``(0, Δ)`` in the absolute region,
  exact there; the pair of the supremum profile over all pairs in the others, an upper bound
  exact at T = 1), discretised pessimistically once (connect-the-dots), composed for every T in
  one pass (:func:`privrepro.dp.pld.compose_every_t`); ``dp_accounting``'s PLD accountant checks
  it at a few T.
* :func:`composition_rdp` — RDP at each α: T × the single-step value (Remark 2) of the Gaussian,
  the paper's Prop. 2 and the exact Rényi divergence.

The paper's design: ε₀ chosen once, by Algorithm 2 at T = 1, unless given (re-optimising Prop. 3
per T falls into a degenerate basin, note §5.2; :func:`composition_dp` can show it). The best
design (accountant ``exact_best``): for every T the ε₀ minimising the exact composed ε
(:func:`privrepro.boosting.exact_design.best_composition_dp`); in RDP, whose composition is T ×
one step, the ε₀ minimising the exact one-step Rényi divergence
(:func:`privrepro.boosting.exact_design.best_design`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from privrepro.boosting._checks import check_range
from privrepro.boosting.accounting import composition_epsilon_curve
from privrepro.boosting.batch import gaussian_epsilon_batch
from privrepro.boosting.design import (
    PBSetting,
    gaussian_baseline_sigma,
    optimise_eps0,
    ternary_search,
)
from privrepro.boosting.dominating import dominating_pld_dp_accounting, dominating_plds
from privrepro.boosting.exact import exact_rdp
from privrepro.boosting.exact_design import best_composition_dp, best_design
from privrepro.boosting.gaussian_mu import gaussian_delta_mu
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.config import ConfigError
from privrepro.dp.pld import compose_every_t
from privrepro.loops import PLAIN, Loops

__all__ = ["composition_dp", "composition_rdp"]


def composition_dp(
    setting: PBSetting,
    t_max: int,
    *,
    eps0: float | None = None,
    exact: bool = True,
    pld_discretization: float = 5e-3,
    exact_ts: Sequence[int] = (),
    check_discretization: float = 1e-3,
    reoptimise_per_t: bool = False,
    best: bool = False,
    loops: Loops = PLAIN,
) -> pd.DataFrame:
    """Composed ε at the setting's δ (``notion="dp"``) for T = 1 … ``t_max``.

    Args:
        setting: the design problem (region, ρ, Δ, |S|, δ; Gaussian kernel).
        eps0: the kernel's level for every T (default: Algorithm 2 at T = 1).
        exact: the composed ε at every T over every neighbouring pair: the dominating pair's
            privacy-loss distribution (:func:`~privrepro.boosting.dominating.dominating_plds`),
            pessimistic connect-the-dots on the grid ``pld_discretization``, composed for every
            T in one pass. It never under-states the composed ε; in the absolute region it
            over-states it by at most ``T × pld_discretization`` (column ``error_bound``; far
            less in practice, see :mod:`privrepro.dp.pld`); in the relative and fixed regions
            it is exact at T = 1 and an upper bound beyond (``error_bound`` is the grid's part).
        exact_ts: the T at which ``dp_accounting``'s PLD accountant checks the exact curve (the
            same dominating pair discretised by ``dp_accounting`` at ``check_discretization``,
            :func:`~privrepro.boosting.dominating.dominating_pld_dp_accounting`, which
            over-states ε by at most ``T × check_discretization``).
        reoptimise_per_t: also run Algorithm 2 on Prop. 3 at each T of ``exact_ts``.
        best: also the best design at every T (accountant ``exact_best``: the ε₀ minimising the
            exact composed ε at that T, :func:`~privrepro.boosting.exact_design.best_composition_dp`;
            its rows carry that T's ``q``, ``sigma`` and the search's estimated ``search_gap``).

    Returns:
        Rows ``T, mechanism, accountant, eps0, epsilon, error_bound, alpha, q``: mechanism
        ``gaussian`` (accountant ``exact``) or ``pb`` (``paper``, ``exact``, ``dp_accounting``,
        ``paper_reoptimised``, ``exact_best``); ``error_bound`` (≥ ε − true ε ≥ 0) on the PLD
        rows, 0 for the closed forms, NaN for the paper's accounting; alpha NaN.
    """
    if setting.notion != "dp":
        raise ConfigError("notion", setting.notion, "must be 'dp' (composition_rdp for RDP)")
    check_range("t_max", t_max, ge=1)
    check_range("exact_ts", list(exact_ts), ge=1, le=t_max)
    check_range("pld_discretization", pld_discretization, gt=0, lt=1)
    check_range("check_discretization", check_discretization, gt=0, lt=1)
    s, d, delta = setting, float(setting.sensitivity), setting.delta
    T = np.arange(1, int(t_max) + 1)
    mu = d * np.sqrt(T) / gaussian_baseline_sigma(s.size, s.rho)
    gauss = gaussian_epsilon_batch(mu, np.asarray(delta))
    e0 = optimise_eps0(s).eps0 if eps0 is None else float(eps0)
    mech = s.mechanism(e0)
    frames = [
        _curve(T, "gaussian", "exact", np.nan, gauss, 0.0),
        _curve(T, "pb", "paper", e0, _paper_curve(mech, d, T, delta), np.nan),
    ]
    if exact:
        plds = dominating_plds(mech, d, pld_discretization, n_pairs=s.exact_pairs)
        # loops that stop early return the first T only
        eps = compose_every_t(plds, int(t_max), [delta], loops=loops.labelled("pb composition,"))
        eps = eps[:, 0]
        t_done = T[: len(eps)]
        frames.append(_curve(t_done, "pb", "exact", e0, eps, t_done * pld_discretization))
    if exact_ts:
        pld = dominating_pld_dp_accounting(mech, d, check_discretization, n_pairs=s.exact_pairs)
        ts, vals = [], []  # the T reached, with their ε (all of exact_ts unless ``loops`` stopped)
        for t in loops([int(t) for t in exact_ts], "pb composition, dp_accounting check"):
            composed = pld.self_compose(t) if t > 1 else pld
            ts.append(t)
            vals.append(composed.get_epsilon_for_delta(delta))
        bound = np.asarray(ts, dtype=float) * check_discretization
        frames.append(_curve(ts, "pb", "dp_accounting", e0, vals, bound))
    if reoptimise_per_t and exact_ts:
        ts, vals, e0s = [], [], []
        for t in loops(exact_ts, "pb composition, ε₀ re-optimised per T"):
            t_arr = np.array([int(t)])

            def objective(e: float, t_arr: np.ndarray = t_arr) -> float:
                return float(_paper_curve(s.mechanism(e), d, t_arr, delta)[0])

            res = ternary_search(objective, 0.0, float(gauss[0]), 1e-4)
            ts.append(int(t))
            vals.append(res.epsilon)
            e0s.append(res.eps0)
        frames.append(_curve(ts, "pb", "paper_reoptimised", e0s, vals, np.nan))
    for f in frames:
        f["q"] = mech.q
    if best:
        b = best_composition_dp(s, int(t_max), loops=loops)
        curve = _curve(b["T"], "pb", "exact_best", b["eps0"], b["epsilon"], b["error_bound"])
        frames.append(curve.assign(q=b["q"], sigma=b["sigma"], search_gap=b["search_gap"]))
    out = pd.concat(frames, ignore_index=True)
    out["alpha"] = np.nan
    return out


def composition_rdp(
    setting: PBSetting,
    alphas: Sequence[float],
    t_max: int,
    *,
    eps0: float | None = None,
    exact_optimum: bool = True,
) -> pd.DataFrame:
    """Composed RDP ε (T × one step) at each order α for T = 1 … ``t_max``.

    ``eps0``: the kernel's level (default: Algorithm 2 at T = 1, per α, on Prop. 2).
    ``exact_optimum``: also the best design, the ε₀ minimising the exact Rényi divergence
    (:func:`~privrepro.boosting.exact_design.best_design`; RDP composes as T × one step, so one
    ε₀ is best for every T).

    Returns:
        Rows ``T, alpha, mechanism, accountant, eps0, epsilon``: mechanism ``gaussian``
        (accountant ``exact``) or ``pb`` (``paper``, ``exact``, ``exact_best``).
    """
    check_range("alphas", list(alphas), gt=1)
    check_range("t_max", t_max, ge=1)
    d = float(setting.sensitivity)
    T = np.arange(1, int(t_max) + 1)
    frames = []
    for a in alphas:
        s = replace(setting, notion="rdp", alpha=a)
        g1 = a * d * d / (2 * gaussian_baseline_sigma(s.size, s.rho) ** 2)
        e0 = optimise_eps0(s).eps0 if eps0 is None else float(eps0)
        mech = s.mechanism(e0)
        series = [
            ("gaussian", "exact", np.nan, g1),
            ("pb", "paper", e0, s.paper_epsilon_of(mech)),
            ("pb", "exact", e0, exact_rdp(mech, d, a, s.exact_pairs)),
        ]
        if exact_optimum:
            b = best_design(s)
            series.append(("pb", "exact_best", b.eps0, b.epsilon))
        for mech_name, acc, e0_, one in series:
            curve = _curve(T, mech_name, acc, e0_, T * one)
            curve.insert(1, "alpha", a)
            frames.append(curve)
    return pd.concat(frames, ignore_index=True)


def _paper_curve(mech: BoostedMechanism, d: float, T: np.ndarray, delta: float) -> np.ndarray:
    """Prop. 3 / Algorithm 1 at every T of ``T``, Gaussian kernel (composed profile μ√T)."""
    sig = mech.kernel.scale
    return composition_epsilon_curve(
        mech.paper_terms(d), lambda e, t: gaussian_delta_mu(e, d * np.sqrt(t) / sig), T, delta
    )


def _curve(
    T: object, mechanism: str, accountant: str, eps0: object, eps: object, bound: object = None
) -> pd.DataFrame:
    cols = {"T": T, "mechanism": mechanism, "accountant": accountant, "eps0": eps0, "epsilon": eps}
    if bound is not None:
        cols["error_bound"] = bound
    return pd.DataFrame(cols)
