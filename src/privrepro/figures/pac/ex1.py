"""pac Example 1 (Sec. 3): Theorems 1 and 2 on identification, as a table and a curve against n.

Each of ``n`` points is i.i.d. uniform over ``N = 100`` items (prior success 0.01 per element) and
``MI(X; M(X)) = 1`` nat for a symmetric mechanism. Theorem 1 bounds any adversary's success by
``p*(0.01, 1) = 0.357`` ("0.36"); Theorem 2 (part 2, i.i.d. + symmetric) by
``(1/n) sum_j p*(q_j, 1)`` with ``q_j = P(Bin(n, 0.01) >= j)``, which the paper prints as 0.17
(n = 10) and 0.06 (n = 50); the reconstructed formula gives 0.1489 and 0.0679 (errata).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.figures.api import Figure, UnitContext, param
from privrepro.pac.bounds import (
    individual_success_bound,
    pinsker_advantage_bound,
    posterior_success_bound,
)
from privrepro.plotting.style import new_figure

__all__ = ["Example1", "Example1Params"]

PAPER_VALUES: dict[str, dict[int | None, float]] = {
    "theorem1": {None: 0.36},
    "theorem2": {10: 0.17, 50: 0.06},
}


@dataclass
class Example1Params:
    """Example 1's setting and the n-axis of the described curve."""

    domain_size: int = param(100, ge=2, doc="N, the size of the finite domain (prior 1/N)")
    mi: float = param(1.0, gt=0, doc="MI(X; M(X)) in nats")
    ns: list[int] = param(
        [1, 2, 5, 10, 20, 50, 100, 200],
        ge=1,
        le=100_000,
        doc="the set sizes n of the table and the curve",
        assumed="the paper gives n = 10 and 50 only; the curve spans 1..200",
        unique=True,
    )


class Example1(Figure[Example1Params]):
    """Theorem 1 vs Theorem 2 bounds on per-element identification success, against n."""

    params_type = Example1Params
    title = "pac Example 1 — identification success bounds (Theorems 1, 2) against n"
    kind = "table"

    def units(self, params: Example1Params) -> list[dict[str, Any]]:
        return [{"domain_size": params.domain_size, "mi": params.mi, "ns": sorted(set(params.ns))}]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        q = 1.0 / unit["domain_size"]
        v = unit["mi"]
        ns = np.asarray(unit["ns"])
        rows = []
        for n, thm2 in zip(ns, individual_success_bound(q, v, ns), strict=True):
            for bound, value in (
                ("theorem1", float(posterior_success_bound(q, v))),
                ("theorem2", float(thm2)),
                ("pinsker", float(min(1.0, q + pinsker_advantage_bound(v)))),
            ):
                paper = PAPER_VALUES.get(bound, {})
                paper_value = paper.get(None, paper.get(int(n), np.nan))
                rows.append(
                    {
                        "n": int(n),
                        "prior": q,
                        "mi": v,
                        "bound": bound,
                        "success_bound": value,
                        "paper_value": paper_value,
                    }
                )
        return pd.DataFrame(rows)

    def summarize(self, table: pd.DataFrame, params: Example1Params) -> pd.DataFrame:
        out = []
        for _, r in table[table["bound"].isin(["theorem1", "theorem2"])].iterrows():
            out.append(
                {
                    "metric": f"{r['bound']}_success_bound",
                    "n": int(r["n"]),
                    "value": r["success_bound"],
                }
            )
        return pd.DataFrame(out)

    def plot(self, table: pd.DataFrame, params: Example1Params) -> Any:
        fig, ax = new_figure(width=5.5, height=3.6)
        labels = {
            "theorem1": "Theorem 1 (any n)",
            "theorem2": "Theorem 2 (i.i.d., symmetric)",
            "pinsker": "Corollary 1 (Pinsker)",
        }
        for bound, label in labels.items():
            sub = table[table["bound"] == bound].sort_values("n")
            ax.plot(sub["n"], sub["success_bound"], marker="o", ms=3, label=label)
        paper = table[(table["bound"] == "theorem2") & table["paper_value"].notna()]
        ax.scatter(
            paper["n"],
            paper["paper_value"],
            marker="x",
            color="k",
            zorder=5,
            label="paper (Theorem 2, printed)",
        )
        ax.set_xscale("log")
        ax.set_xlabel("n (set size)")
        ax.set_ylabel("bound on per-element success 1 − δ")
        ax.set_title(f"pac Ex. 1 — prior {1 / params.domain_size:g}, MI = {params.mi:g} nat")
        ax.legend(frameon=False)
        return fig
