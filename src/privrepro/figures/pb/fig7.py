"""pb Fig. 7: PB-GRR on UCI Adult ages (Sec. 5.5, Prop. 7, eqs. 10–11).

Each of the N = 45,222 users reports an age in [10, 100] (|X| = 91) under ε = 5 LDP; the
category-frequency (eq. 10) and value-frequency (eq. 11) estimators' MSE as ε₀ runs over [0, 5],
for |S| = 10 and 5. Analytic MSE at every ε₀ and Monte Carlo on a sub-grid; marked: the ε₀ that is
best for categories, for values, and for the trade-off criterion.

Data: the age histogram shipped with the package (``data=embedded``) or the UCI files under the
data root (``data=uci``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.boosting.grr_mse import best_eps0, grr_mse_curve
from privrepro.boosting.plots import plot_grr_mse
from privrepro.data.adult import adult_age_histogram, embedded_age_histogram, load_adult
from privrepro.data.provenance import DataSource, read_from
from privrepro.figures.api import Figure, UnitContext, grid_units, param

__all__ = ["Fig7Params", "PBGRRAdult"]


@dataclass
class Fig7Params:
    """Fig. 7 settings."""

    epsilon: float = param(
        5.0,
        ge=1e-6,
        le=700.0,
        doc="LDP level ε (Sec. 5.5). Below 1e-6, e^ε − 1 keeps fewer than 10 of float64's 16 "
        "digits (under 1e-14 the GRR probabilities coincide and the MSE is 0/0); above 700, "
        "e^ε overflows float64 (at 709.78)",
    )
    eps0_points: int = param(
        51, ge=2, le=100_001, doc="ε₀ grid points on [0, ε]", assumed="grid not stated"
    )
    set_sizes: list[int] = param(
        [10, 5], ge=1, unique=True, doc="|S| of panels (a), (b); below the domain size"
    )
    age_low: int = param(
        10, ge=0, le=17, doc="domain lower end ('integers within [10, 100]'; Adult's ages: 17–90)"
    )
    age_high: int = param(100, ge=90, le=1000, doc="domain upper end (Adult's oldest: 90)")
    partition: str = param(
        "pad",
        choices=["pad", "last_short"],
        doc="categories: consecutive blocks of |S|; 'pad' extends the domain with "
        "never-held values to a multiple of |S| (estimators unbiased)",
        assumed="91 values do not split into blocks of 10; not stated",
    )
    mse_scale: str = param(
        "counts",
        choices=["counts", "frequencies"],
        doc="MSE of counts, or of frequencies (counts / N)",
        assumed="not stated",
    )
    tradeoff: str = param(
        "sum",
        choices=["sum", "normalised_sum"],
        doc="trade-off criterion: MSE_cat + MSE_val, or each divided by its minimum",
        assumed="not stated",
    )
    mc_repetitions: int = param(
        200, ge=0, doc="Monte Carlo repetitions per ε₀ (0: analytic only)", assumed="not stated"
    )
    mc_stride: int = param(5, ge=1, doc="Monte Carlo on every n-th ε₀ of the grid")
    data: str = param(
        "embedded",
        choices=["embedded", "uci"],
        doc="the shipped age histogram, or UCI adult.data/adult.test under the data root",
    )

    def check(self, prefix: str) -> None:
        """Each |S| leaves at least two categories of the domain [age_low, age_high]."""
        from privrepro.config.validation import ConfigError

        domain = self.age_high - self.age_low + 1
        for i, s in enumerate(self.set_sizes):
            if s >= domain:
                raise ConfigError(
                    f"{prefix}.set_sizes[{i}]", s, f"must lie in [1, {domain}) (the domain size)"
                )


class PBGRRAdult(Figure[Fig7Params]):
    """Rows: ``set_size, eps0, estimator, method, mse, se`` (+ ρ of Remark 5)."""

    title = "PB-GRR on UCI Adult ages: category vs value frequency MSE against ε₀"

    def data_source(self, unit: Mapping[str, Any], data_dir: Path) -> DataSource:
        if unit["data"] == "embedded":
            return DataSource("UCI Adult ages (histogram shipped with the package)")
        return read_from("adult", data_dir)

    def units(self, p: Fig7Params) -> list[dict[str, Any]]:
        keys = ("epsilon", "eps0_points", "age_low", "age_high", "partition", "mse_scale")
        fixed = {k: getattr(p, k) for k in (*keys, "mc_repetitions", "mc_stride", "data")}
        return grid_units(fixed, set_size=p.set_sizes)

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        lo, hi = int(unit["age_low"]), int(unit["age_high"])
        if unit["data"] == "uci":
            hist = adult_age_histogram(load_adult(ctx.data_dir), lo, hi)
        else:
            hist = embedded_age_histogram(lo, hi)
        kw = {k: unit[k] for k in ("eps0_points", "partition", "mse_scale", "mc_repetitions")}
        return grr_mse_curve(
            hist,
            unit["epsilon"],
            unit["set_size"],
            mc_stride=unit["mc_stride"],
            rng=ctx.rng("reports"),
            loops=ctx.loops,
            **kw,
        )

    def summarize(self, table: pd.DataFrame, p: Fig7Params) -> pd.DataFrame:
        return best_eps0(table, p.tradeoff)

    def plot(self, table: pd.DataFrame, p: Fig7Params) -> Any:
        return plot_grr_mse(
            table,
            best_eps0(table, p.tradeoff),
            p.epsilon,
            f"MSE ({p.mse_scale})",
            "pb Fig. 7 — PB-GRR on UCI Adult ages (ε₀ = ε is plain GRR)",
            criterion=p.tradeoff,
        )
