"""ε of PB-DP over a grid of settings, three ways, beside the Gaussian with the same utility.

pb paper, Sec. 5.1 (Figs. 2–3): for each point (ρ, Δ, |S|, δ or α) Algorithm 2 picks the kernel
level ε₀ that minimises the paper's ε (Props. 1–2 with the terms of Props. 4–6), all points at
once (:mod:`privrepro.boosting.batch`). At that same ε₀ the mechanism's exact ε (divergence of
the two output densities, :mod:`privrepro.boosting.exact`) and the note's sound bound (§2.2) can
be added, and the best design: the ε₀ minimising the exact ε itself
(:mod:`privrepro.boosting.exact_design`, accountant ``best``). The baseline is the plain Gaussian
meeting ``Pr[|noise| ≤ |S|/2] ≥ ρ`` (note §2.4).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from privrepro.boosting._checks import check_choice, check_range
from privrepro.boosting.batch import gaussian_baseline_batch, optimise_eps0_batch
from privrepro.boosting.design import PBSetting, optimise_eps0
from privrepro.boosting.exact_batch import GaussianPBBatch
from privrepro.boosting.exact_design import DesignSearch, best_design_batch
from privrepro.boosting.worst_pairs import check_query_domain
from privrepro.config import ConfigError

__all__ = ["ACCOUNTANTS", "CASES", "sweep"]

CASES = ("gaussian", "relative", "fixed", "absolute")
"""``gaussian``: the utility-matched Gaussian; the others: PB-DP with that region (Sec. 4)."""
ACCOUNTANTS = ("paper", "exact", "sound", "best")
"""Props. 1–2 as printed; the exact divergence of the outputs; the note's sound bound (§2.2) —
all three at Algorithm 2's ε₀ —; and the exact ε at the best design (the ε₀ minimising it)."""


def sweep(
    case: str,
    notion: str,
    level: ArrayLike,
    rho: ArrayLike,
    sensitivity: ArrayLike,
    size: ArrayLike,
    *,
    panel: str | Sequence[str] = "",
    theta: float = 0.05,
    calibration: str = "analytic",
    tol: float = 1e-6,
    accountants: Sequence[str] = ("paper", "exact"),
    exact_stride: int = 1,
    exact_pairs: int = 9,
    pair_rule: str = "paper",
    eps_max_factor: float = 1.0,
    best_search: DesignSearch | None = None,
    query_domain: Sequence[float] | None = None,
) -> pd.DataFrame:
    """ε of one case under one privacy notion at every point of a grid (arrays broadcast).

    Args:
        case: one of :data:`CASES`.
        notion: ``"dp"`` (ε at δ = ``level``) or ``"rdp"`` (ε at Rényi order α = ``level``).
        level, rho, sensitivity, size: the points: δ or α, the confidence ρ of the utility
            constraint (eq. 1), Δ, and ``|S(Q(X̃))|`` (``2τ``; a fixed region's width).
        panel: a label per point (or one for all); the exact and sound accountants run on every
            ``exact_stride``-th point of each (panel, level) curve, its last point included.
        theta: θ of the relative region. calibration: ``"analytic"`` or ``"classical"`` σ(ε₀, δ).
        tol: Algorithm 2's tolerance. eps_max_factor: its ε_max as a multiple of the Gaussian's ε.
        accountants: any of :data:`ACCOUNTANTS`; ``"paper"`` rows are always present for PB-DP.
        exact_pairs: neighbouring pairs the exact accounting maximises over.
        pair_rule: the fixed region's pair, ``"paper"`` (Prop. 5) or ``"worst"``.
        best_search: the σ search of the ``best`` accountant (every point, all at once).
        query_domain: ``[lo, hi]`` of the query's true values (default ``None``: the real line,
            the paper stating none): the exact, sound and best accountants take their supremum
            over the neighbouring pairs inside it (relative and fixed regions; the absolute
            region and the Gaussian are translation invariant, so it changes nothing there).

    Returns:
        Rows ``panel, notion, level, rho, sensitivity, size, case, accountant, eps0, epsilon``
        (and ``sigma, q, at_edge`` on the ``best`` rows); the Gaussian's rows have accountant
        ``exact`` and no ε₀.
    """
    _check(case, notion, calibration, pair_rule, accountants, theta, tol, exact_stride)
    check_range("exact_pairs", exact_pairs, ge=1)
    check_range("eps_max_factor", eps_max_factor, gt=0)
    pts = _points(panel, notion, case, level, rho, sensitivity, size)
    check_query_domain(query_domain, float(pts["sensitivity"].max()))
    rho_a, sens_a, size_a, lev_a = (
        pts[c].to_numpy() for c in ("rho", "sensitivity", "size", "level")
    )
    base = gaussian_baseline_batch(notion, rho_a, sens_a, size_a, lev_a, calibration)
    if case == "gaussian":
        return pts.assign(accountant="exact", eps0=np.nan, epsilon=base)
    top = base * eps_max_factor
    domain = None if query_domain is None else (float(query_domain[0]), float(query_domain[1]))
    kw = dict(
        theta=theta,
        calibration=calibration,
        exact_pairs=exact_pairs,
        pair_rule=pair_rule,
        query_domain=domain,
    )
    if case == "fixed" and pair_rule != "paper":
        res = [
            optimise_eps0(_setting(case, notion, pts, i, **kw), tol=tol, eps_max=float(top[i]))
            for i in range(len(pts))
        ]
        eps0 = np.array([x.eps0 for x in res])
        eps = np.array([x.epsilon for x in res])
    else:
        eps0, eps = optimise_eps0_batch(
            case, notion, rho_a, sens_a, size_a, lev_a, top, tol, theta, calibration
        )
    frames = [pts.assign(accountant="paper", eps0=eps0, epsilon=eps)]
    idx = [
        int(i)
        for _, g in pts.groupby(["panel", "level"], sort=False)
        for i in np.asarray(g.index)[_strided(len(g), exact_stride)]
    ]
    for acc in accountants:
        if acc == "paper":
            continue
        if acc == "best":
            best = best_design_batch(
                case,
                notion,
                rho_a,
                sens_a,
                size_a,
                lev_a,
                theta=theta,
                exact_pairs=exact_pairs,
                calibration=calibration,
                search=best_search,
                query_domain=domain,
            )
            frames.append(
                pts.assign(
                    accountant="exact_best",
                    eps0=best["eps0"].to_numpy(),
                    epsilon=best["epsilon"].to_numpy(),
                    sigma=best["sigma"].to_numpy(),
                    q=best["q"].to_numpy(),
                    at_edge=best["at_edge"].to_numpy(),
                )
            )
            continue
        mechs = [_setting(case, notion, pts, i, **kw).mechanism(float(eps0[i])) for i in idx]
        if acc == "exact" and mechs:
            # every point at once: the supremum over every neighbouring pair (exact_batch)
            batch = GaussianPBBatch.build(
                case,
                [m.kernel.scale for m in mechs],
                rho_a[idx],
                sens_a[idx],
                size_a[idx],
                theta,
                exact_pairs,
                q=[m.q for m in mechs],
                domain=domain,
            )
            vals = list(batch.epsilon(lev_a[idx]) if notion == "dp" else batch.renyi(lev_a[idx]))
        else:
            vals = [
                _setting(case, notion, pts, i, **kw).sound_epsilon_of(m)
                for i, m in zip(idx, mechs, strict=True)
            ]
        frames.append(pts.iloc[idx].assign(accountant=acc, eps0=eps0[idx], epsilon=vals))
    return pd.concat(frames, ignore_index=True)


def _check(
    case: str,
    notion: str,
    calibration: str,
    pair_rule: str,
    accountants: Sequence[str],
    theta: float,
    tol: float,
    exact_stride: int,
) -> None:
    check_choice("case", case, CASES)
    check_choice("notion", notion, ("dp", "rdp"))
    check_choice("calibration", calibration, ("analytic", "classical"))
    check_choice("pair_rule", pair_rule, ("paper", "worst"))
    for acc in accountants:
        check_choice("accountants", acc, ACCOUNTANTS)
    check_range("theta", theta, ge=0, le=1)
    check_range("tol", tol, gt=0)
    check_range("exact_stride", exact_stride, ge=1)


def _points(
    panel: str | Sequence[str],
    notion: str,
    case: str,
    level: ArrayLike,
    rho: ArrayLike,
    sensitivity: ArrayLike,
    size: ArrayLike,
) -> pd.DataFrame:
    """The grid as a table, one row per point (checked: ranges and equal lengths)."""
    if notion == "dp":
        lev = check_range("level", level, gt=0, lt=1)
    else:
        lev = check_range("level", level, gt=1)
    cols = [
        lev,
        check_range("rho", rho, gt=0, lt=1),
        check_range("sensitivity", sensitivity, gt=0),
        check_range("size", size, gt=0),
    ]
    try:
        lev, r, d, s = (np.atleast_1d(a).copy() for a in np.broadcast_arrays(*cols))
    except ValueError as err:
        shapes = [np.shape(a) for a in cols]
        raise ConfigError("level, rho, sensitivity, size", shapes, "must broadcast") from err
    labels = [panel] * len(lev) if isinstance(panel, str) else list(panel)
    if len(labels) != len(lev):
        raise ConfigError("panel", len(labels), f"must hold one label per point ({len(lev)})")
    return pd.DataFrame(
        {
            "panel": labels,
            "notion": notion,
            "level": lev,
            "rho": r,
            "sensitivity": d,
            "size": s,
            "case": case,
        }
    )


def _strided(n: int, stride: int) -> list[int]:
    idx = list(range(0, n, max(1, stride)))
    if n and idx[-1] != n - 1:
        idx.append(n - 1)
    return idx


def _setting(case: str, notion: str, pts: pd.DataFrame, i: int, **kw: Any) -> PBSetting:
    """The scalar design problem of point ``i`` (δ or α from its level)."""
    row = pts.iloc[i]
    lv = float(row["level"])
    level: dict[str, Any] = {"delta": lv} if notion == "dp" else {"alpha": lv}
    return PBSetting(
        case,  # type: ignore[arg-type]
        float(row["rho"]),
        float(row["sensitivity"]),
        float(row["size"]),
        notion=notion,  # type: ignore[arg-type]
        **level,
        **kw,
    )
