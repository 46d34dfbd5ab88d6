"""pac Example 1 (Sec. 3): Theorems 1 and 2 on identification, as a table and a curve against n.

Each of ``n`` points is i.i.d. uniform over ``N = 100`` items (prior success 0.01 per element) and
``MI(X; M(X)) = 1`` nat for a symmetric mechanism. Theorem 1 bounds any adversary's success by
``p*(0.01, 1) = 0.357`` ("0.36"); Theorem 2 (part 2, i.i.d. + symmetric) by
``(1/n) sum_j p*(q_j, 1)`` with ``q_j = P(Bin(n, 0.01) >= j)``, which the paper prints as 0.17
(n = 10) and 0.06 (n = 50); the reconstructed formula gives 0.1489 and 0.0679 (errata).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.data.provenance import ANALYTIC
from privrepro.figures.api import Figure, UnitContext, param
from privrepro.pac import plots
from privrepro.pac.bounds import identification_bounds

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

    data = ANALYTIC
    title = "pac Example 1 — identification success bounds (Theorems 1, 2) against n"
    kind = "table"

    def units(self, params: Example1Params) -> list[dict[str, Any]]:
        return [{**asdict(params), "ns": sorted(set(params.ns))}]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        out = pd.DataFrame(identification_bounds(1.0 / unit["domain_size"], unit["mi"], unit["ns"]))
        paper = [PAPER_VALUES.get(b, {}) for b in out["bound"]]
        out["paper_value"] = [
            p.get(None, p.get(n, np.nan)) for p, n in zip(paper, out["n"], strict=True)
        ]
        return out

    def summarize(self, table: pd.DataFrame, params: Example1Params) -> pd.DataFrame:
        rows = table[table["bound"].isin(["theorem1", "theorem2"])]
        metric = rows["bound"] + "_success_bound"
        return pd.DataFrame(
            {"metric": metric, "n": rows["n"].astype(int), "value": rows["success_bound"]}
        )

    def mark_paper_values(self, fig: Any, values: Any, table: pd.DataFrame, params: Any) -> None:
        """Nothing more to mark: the plot draws the paper's printed values itself, as crosses,
        from the table's ``paper_value`` column."""

    def plot(self, table: pd.DataFrame, params: Example1Params) -> Any:
        title = f"pac Ex. 1 — prior {1 / params.domain_size:g}, MI = {params.mi:g} nat"
        return plots.identification_bounds(table, title)
