"""What the pb recipes share: the declarations of the PB-DP setting's quantities (ρ, Δ, δ, θ,
|S| and the region case, each with its one allowed range) and the base recipe of Figs. 2 and 3
(one run unit per (notion, case), every panel and level of that notion in one batch; the sweep
itself is :func:`privrepro.boosting.sweep`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd

from privrepro.boosting.epsilon_sweep import sweep
from privrepro.boosting.exact_design import DesignSearch
from privrepro.boosting.worst_pairs import check_query_domain
from privrepro.data.provenance import ANALYTIC
from privrepro.figures.api import Figure, UnitContext, grid_units, param

__all__ = [
    "SweepFigure",
    "SweepParams",
    "case_param",
    "delta_param",
    "epsilon_metrics",
    "rho_param",
    "sensitivity_param",
    "sizes_param",
    "theta_param",
]


def rho_param(default: Any, doc: str, **more: Any) -> Any:
    """ρ, the confidence level of the utility constraint (eq. 1): in (0, 1)."""
    return param(default, gt=0, lt=1, doc=doc, **more)


def sensitivity_param(default: Any, doc: str, **more: Any) -> Any:
    """Δ, the query's sensitivity |Q(X') − Q(X)|: positive."""
    return param(default, gt=0, doc=doc, **more)


def delta_param(default: Any, doc: str, **more: Any) -> Any:
    """δ of an (ε, δ) guarantee (or of the kernel's calibration): in (0, 1)."""
    return param(default, gt=0, lt=1, doc=doc, **more)


def theta_param(default: Any, doc: str, **more: Any) -> Any:
    """θ, the relative region's ratio (``S(Q) = [Q − (θ|Q| + τ), Q + (θ|Q| + τ)]``, Sec. 4.1):
    in [0, 1]."""
    return param(default, ge=0, le=1, doc=doc, **more)


def sizes_param(default: list[float], doc: str, **more: Any) -> Any:
    """|S(Q(X̃))|, the sizes of the smallest preferred region on a figure's x axis: positive,
    each a run point of its own."""
    return param(default, gt=0, unique=True, doc=doc, **more)


def case_param() -> Any:
    """The PB-DP region case of a figure that draws one (the paper never says which)."""
    return param(
        "absolute",
        choices=["absolute", "relative"],
        doc="PB-DP region case",
        assumed="not stated; absolute error",
    )


PANELS = {"a": ("dp", "low"), "b": ("dp", "high"), "c": ("rdp", "low"), "d": ("rdp", "high")}


@dataclass
class SweepParams:
    """Parameters shared by Figs. 2 and 3 (the paper's Sec. 5.1 settings and the unstated choices)."""

    deltas: list[float] = delta_param([1e-5, 1e-7], "δ of panels (a), (b) (Sec. 5.1)", unique=True)
    alphas: list[float] = param(
        [2.0, 10.0, 100.0], gt=1, unique=True, doc="Rényi orders of panels (c), (d) (Sec. 5.1)"
    )
    cases: list[str] = param(
        ["relative", "fixed", "absolute"],
        choices=["relative", "fixed", "absolute"],
        unique=True,
        doc="PB-DP region cases drawn (the captions list all three)",
    )
    theta: float = theta_param(
        0.05,
        "relative-error ratio θ",
        assumed="θ is never given; 0.05 follows the introduction's '5% of the true value'",
    )
    calibration: str = param(
        "analytic",
        choices=["analytic", "classical"],
        doc="σ of the Gaussian kernel (and baseline) from (ε₀, δ)",
        assumed="not stated; the exact (analytic) calibration. It relabels ε₀ only",
    )
    tol: float = param(
        1e-6, gt=0, lt=1, doc="tolerance of Algorithm 2's ternary search", assumed="not stated"
    )
    eps_max_factor: float = param(
        1.0,
        gt=0,
        doc="ε_max of Algorithm 2 as a multiple of the utility-matched Gaussian's ε",
        assumed="ε_max ('the total privacy budget') is not stated; at ε_G "
        "the boosting rate is 0, so the search never does worse than Gaussian",
    )
    accountants: list[str] = param(
        ["paper", "exact", "best"],
        choices=["paper", "exact", "sound", "best"],
        unique=True,
        doc="paper: Props. 1–2 at the paper's pair; exact: divergence of "
        "the two output densities at the same ε₀; sound: the rigorous bound ε₀ + L1 + L2; best: "
        "the exact ε at the ε₀ minimising it (the best design) (docs/pb.md)",
    )
    best_span: float = param(
        6.907755,
        gt=0,
        le=50,
        doc="best design: σ searched from σ_G to e^best_span · σ_G (default 1000 σ_G)",
        assumed="numerical choice of this project",
    )
    best_grid: int = param(
        48, ge=3, le=100_000, doc="best design: grid points in log σ before golden refinement"
    )
    best_tol: float = param(1e-7, gt=0, lt=1, doc="best design: golden-section tolerance in log σ")
    exact_stride: int = param(1, ge=1, doc="evaluate exact/sound on every n-th x point")
    exact_pairs: int = param(
        5,
        ge=1,
        le=101,
        doc="starts in [−Δ/2, 0] of the relative region's pair search (the grid beyond, to the "
        "reach of the tail bound, is set by the kernel) and fewest grid starts of the fixed "
        "region's (at least 9); both orders",
        assumed="pairs at the largest distance Δ (tested against Δ/2 on a grid); the supremum "
        "over every pair is searched and bounded (boosting.worst_pairs)",
    )
    fixed_pair_rule: str = param(
        "paper",
        choices=["paper", "worst"],
        doc="fixed region: the paper's pair (τ_l, τ_l+Δ) or the worst pair in S",
        assumed="the paper's pair; 'worst' differs only when Δ is not small",
    )
    query_domain: list[float] | None = param(
        None,
        length=2,
        increasing=True,
        doc="[lo, hi]: the query's true values (a fixed region's in its own frame, centred at "
        "0); the exact, sound and best accountants take the supremum over the neighbouring "
        "pairs inside it (relative and fixed regions; translation invariance makes it change "
        "nothing for the absolute region and the Gaussian); part of each unit's identity when set",
        assumed="the paper states no range of Q(X): null, the real line",
    )

    def check(self, prefix: str) -> None:
        """The query domain is finite and holds a neighbouring pair at every Δ of the figure."""
        sens = [float(v) for k, v in vars(self).items() if k.startswith("sensitivity")]
        check_query_domain(self.query_domain, max(sens, default=0.0), f"{prefix}.query_domain")


SP = TypeVar("SP", bound=SweepParams)


class SweepFigure(Figure[SP]):
    """Rows: ``panel, notion, level, rho, sensitivity, size, case, accountant, eps0, epsilon``."""

    data = ANALYTIC

    def panel_grid(self, params: Any, panel: str) -> tuple[list[float], list[float], float]:
        """``(rho list, size list, sensitivity)`` of a panel."""
        raise NotImplementedError

    version = 2  # the best design's rows (accountant exact_best)

    def units(self, params: Any) -> list[dict[str, Any]]:
        """One unit per (notion, case): every panel and level of that notion in one batch."""
        fixed = {k: getattr(params, k) for k in (*_PASSED, "fixed_pair_rule", *_SEARCH)}
        fixed["accountants"] = list(params.accountants)
        if params.query_domain is not None:  # absent when null: units stored before keep their hash
            fixed["query_domain"] = [float(v) for v in params.query_domain]
        return [
            unit
            for notion in ("dp", "rdp")
            for unit in grid_units(
                {"notion": notion, **self._points(params, notion), **fixed},
                case=["gaussian", *params.cases],
            )
        ]

    def _points(self, params: Any, notion: str) -> dict[str, list[Any]]:
        """The points of a notion's panels, one list entry per (panel, level, x)."""
        pts: dict[str, list[Any]] = {
            k: [] for k in ("panel", "level", "rho", "sensitivity", "size")
        }
        for panel in (p for p, (pn, _) in PANELS.items() if pn == notion):
            rho, size, sens = self.panel_grid(params, panel)
            for level in params.deltas if notion == "dp" else params.alphas:
                pts["panel"] += [panel] * len(rho)
                pts["level"] += [float(level)] * len(rho)
                pts["rho"] += rho
                pts["sensitivity"] += [sens] * len(rho)
                pts["size"] += size
        return pts

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        kw = {k: unit[k] for k in (*_PASSED, "accountants", "panel")}
        points = (unit[k] for k in ("level", "rho", "sensitivity", "size"))
        search = DesignSearch(unit["best_span"], unit["best_grid"], unit["best_tol"])
        return sweep(
            unit["case"],
            unit["notion"],
            *points,
            pair_rule=unit["fixed_pair_rule"],
            best_search=search,
            query_domain=unit.get("query_domain"),
            **kw,
        )


_PASSED = ("theta", "calibration", "tol", "eps_max_factor", "exact_stride", "exact_pairs")
"""Parameters a unit holds and hands to the sweep as they are (with ``fixed_pair_rule``)."""
_SEARCH = ("best_span", "best_grid", "best_tol")
"""The best design's σ search (:class:`~privrepro.boosting.exact_design.DesignSearch`)."""

EPSILON_KEYS = ["panel", "notion", "level", "case", "rho", "size", "sensitivity", "accountant"]


def epsilon_metrics(table: pd.DataFrame) -> pd.DataFrame:
    """Summary rows: the ε of each series at every point (metric ``epsilon``)."""
    rows = [
        {
            **dict(zip(EPSILON_KEYS, key, strict=True)),
            "metric": "epsilon",
            "value": float(g["epsilon"].iloc[0]),
        }
        for key, g in table.groupby(EPSILON_KEYS)
    ]
    return pd.DataFrame(rows)
