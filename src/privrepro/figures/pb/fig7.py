"""pb Fig. 7: PB-GRR on UCI Adult ages (Sec. 5.5, Prop. 7, eqs. 10–11).

Each of the N = 45,222 users reports an age in [10, 100] (|X| = 91) under ε = 5 LDP; the
category-frequency (eq. 10) and value-frequency (eq. 11) estimators' MSE as ε₀ runs over [0, 5],
for |S| = 10 and 5. Analytic MSE at every ε₀ and Monte Carlo on a sub-grid; marked: the ε₀ that is
best for categories, for values, and for the trade-off criterion.

Data: the age histogram shipped with the package (``data=embedded``) or the UCI files under the
data root (``data=uci``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.boosting.grr import analytic_mse, block_partition, grr_probabilities, monte_carlo_mse
from privrepro.data.adult import adult_age_histogram, embedded_age_histogram, load_adult
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.plotting.style import new_figure

__all__ = ["Fig7Params", "PBGRRAdult"]


@dataclass
class Fig7Params:
    """Fig. 7 settings."""

    epsilon: float = param(5.0, gt=0, doc="LDP level ε (Sec. 5.5)")
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

    params_type = Fig7Params
    title = "PB-GRR on UCI Adult ages: category vs value frequency MSE against ε₀"

    def units(self, p: Fig7Params) -> list[dict[str, Any]]:
        return [
            {
                "set_size": s,
                "epsilon": p.epsilon,
                "eps0_points": p.eps0_points,
                "age_low": p.age_low,
                "age_high": p.age_high,
                "partition": p.partition,
                "mse_scale": p.mse_scale,
                "mc_repetitions": p.mc_repetitions,
                "mc_stride": p.mc_stride,
                "data": p.data,
            }
            for s in p.set_sizes
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        lo, hi = int(unit["age_low"]), int(unit["age_high"])
        if unit["data"] == "uci":
            hist = adult_age_histogram(load_adult(ctx.data_dir), lo, hi)
        else:
            hist = embedded_age_histogram(lo, hi)
        s = int(unit["set_size"])
        cat, size = block_partition(hist.size, s, unit["partition"])
        full = np.zeros(size, dtype=int)
        full[: hist.size] = hist
        N = int(full.sum())
        scale = 1.0 if unit["mse_scale"] == "counts" else 1.0 / N**2
        eps = float(unit["epsilon"])
        grid = np.linspace(0.0, eps, int(unit["eps0_points"]))
        rng = ctx.rng("reports")
        rows = []
        for i, e0 in enumerate(ctx.progress(grid, desc=f"pb fig7 |S|={s}")):
            g = grr_probabilities(eps, float(e0), size, s)
            if unit["partition"] == "pad":
                m_cat, m_val = analytic_mse(full, cat, g)
                rows += [
                    {
                        "eps0": e0,
                        "estimator": "category",
                        "method": "analytic",
                        "mse": m_cat * scale,
                        "se": 0.0,
                        "rho": g.rho,
                    },
                    {
                        "eps0": e0,
                        "estimator": "value",
                        "method": "analytic",
                        "mse": m_val * scale,
                        "se": 0.0,
                        "rho": g.rho,
                    },
                ]
            if unit["mc_repetitions"] > 0 and (
                i % int(unit["mc_stride"]) == 0 or i == len(grid) - 1
            ):
                mc, sc, mv, sv = monte_carlo_mse(full, cat, g, rng, int(unit["mc_repetitions"]))
                rows += [
                    {
                        "eps0": e0,
                        "estimator": "category",
                        "method": "monte_carlo",
                        "mse": mc * scale,
                        "se": sc * scale,
                        "rho": g.rho,
                    },
                    {
                        "eps0": e0,
                        "estimator": "value",
                        "method": "monte_carlo",
                        "mse": mv * scale if np.isfinite(mv) else np.inf,
                        "se": sv * scale if np.isfinite(sv) else np.nan,
                        "rho": g.rho,
                    },
                ]
        out = pd.DataFrame(rows)
        out.insert(0, "set_size", s)
        out["users"] = N
        out["domain_size"] = size
        return out

    @staticmethod
    def _best(table: pd.DataFrame, criterion: str) -> pd.DataFrame:
        """The ε₀ minimising the category MSE, the value MSE and the trade-off, per |S|."""
        rows = []
        method = "analytic" if (table["method"] == "analytic").any() else "monte_carlo"
        for s, g in table[table["method"] == method].groupby("set_size"):
            piv = g.pivot_table(index="eps0", columns="estimator", values="mse")
            piv = piv.replace(np.inf, np.nan)
            cat_best = float(piv["category"].idxmin())
            val_best = float(piv["value"].idxmin())
            if criterion == "sum":
                trade = piv["category"] + piv["value"]
            else:
                trade = piv["category"] / piv["category"].min() + piv["value"] / piv["value"].min()
            rows += [
                {
                    "set_size": s,
                    "metric": "best_eps0_category",
                    "value": cat_best,
                    "method": method,
                },
                {"set_size": s, "metric": "best_eps0_value", "value": val_best, "method": method},
                {
                    "set_size": s,
                    "metric": "best_eps0_tradeoff",
                    "value": float(trade.idxmin()),
                    "method": method,
                },
            ]
            lo, hi = piv.index.min(), piv.index.max()
            rows += [
                {
                    "set_size": s,
                    "metric": "category_mse_ratio_grr_over_eps0_0",
                    "value": float(piv.loc[hi, "category"] / piv.loc[lo, "category"]),
                    "method": method,
                },
                {
                    "set_size": s,
                    "metric": "value_mse_at_grr",
                    "value": float(piv.loc[hi, "value"]),
                    "method": method,
                },
            ]
        return pd.DataFrame(rows)

    def summarize(self, table: pd.DataFrame, p: Fig7Params) -> pd.DataFrame:
        return self._best(table, p.tradeoff)

    def plot(self, table: pd.DataFrame, p: Fig7Params) -> Any:
        sizes = list(dict.fromkeys(table["set_size"]))
        fig, axes = new_figure(1, len(sizes), width=4.2, height=3.3, squeeze=False)
        best = self._best(table, p.tradeoff)
        for ax, s, tag in zip(axes[0], sizes, "abcdefgh", strict=False):
            g = table[table["set_size"] == s]
            for est, col in (("category", "C0"), ("value", "C1")):
                an = g[(g["estimator"] == est) & (g["method"] == "analytic")].sort_values("eps0")
                an = an[np.isfinite(an["mse"])]
                ax.plot(an["eps0"], an["mse"], "-", color=col, label=f"{est} (analytic)")
                mc = g[(g["estimator"] == est) & (g["method"] == "monte_carlo")].sort_values("eps0")
                mc = mc[np.isfinite(mc["mse"])]
                if len(mc):
                    ax.errorbar(
                        mc["eps0"],
                        mc["mse"],
                        yerr=2 * mc["se"],
                        fmt="o",
                        ms=3,
                        color=col,
                        capsize=2,
                        label=f"{est} (Monte Carlo ± 2 s.e.)",
                    )
            b = best[best["set_size"] == s].set_index("metric")["value"]
            for metric, col, lab in (
                ("best_eps0_category", "C0", "best for categories"),
                ("best_eps0_value", "C1", "best for values"),
                ("best_eps0_tradeoff", "C2", f"trade-off ({p.tradeoff})"),
            ):
                if metric in b:
                    ax.axvline(
                        b[metric], color=col, ls=":", lw=1, label=f"{lab}: ε₀={b[metric]:.1f}"
                    )
            ax.set_yscale("log")
            ax.set_xlabel("ε₀")
            ax.set_ylabel(f"MSE ({p.mse_scale})")
            ax.set_title(f"({tag}) |S| = {s}, ε = {p.epsilon:g}", fontsize=9)
            ax.legend(fontsize=6.5, frameon=False)
        fig.suptitle("pb Fig. 7 — PB-GRR on UCI Adult ages (ε₀ = ε is plain GRR)", fontsize=10)
        return fig
