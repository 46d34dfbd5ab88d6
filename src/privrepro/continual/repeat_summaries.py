"""Summaries over repeats of cl result tables, as the paper reports them.

The cl paper's plots show the median over repeats with min/max error bars, its tables mean ± std
(×100). :func:`median_min_max` gives all of these for any value of a tidy table;
:func:`final_metrics` reads the rows of PEFT runs (:func:`privrepro.continual.peft.run_peft`) and
summarises their final-task AA or AF.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

__all__ = ["final_metrics", "median_min_max"]


def median_min_max(table: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Median, min, max, mean, std (ddof 1) and count of ``value`` per group of ``by``
    (groups in order of appearance)."""
    g = table.groupby(by, sort=False)[value]
    out = pd.DataFrame(
        {
            "median": g.median(),
            "min": g.min(),
            "max": g.max(),
            "mean": g.mean(),
            "std": g.std(ddof=1),
            "n": g.count(),
        }
    )
    return out.reset_index()


def final_metrics(
    table: pd.DataFrame, keys: Sequence[str], metric: str = "AA", rule: str = "argmax"
) -> pd.DataFrame:
    """The final-task ``metric`` (``"AA"`` or ``"AF"``) of every PEFT run under ``rule``, then
    mean / std / min / median / max (×100) and count over the repeats of each ``keys`` group.

    A run is a (``keys``, ``repeat``) group of ``row == "metric"`` rows; its final task is its
    largest ``t``. Empty when the table holds no such rows.
    """
    m = table[(table["row"] == "metric") & (table["metric"] == metric) & (table["rule"] == rule)]
    if m.empty:
        return pd.DataFrame()
    m = m.reset_index(drop=True)
    last = m.loc[m.groupby([*keys, "repeat"], dropna=False)["t"].idxmax()]
    g = last.groupby(list(keys), dropna=False)["value"]
    out = g.agg(["mean", "std", "min", "median", "max", "count"]).reset_index()
    for c in ("mean", "std", "min", "median", "max"):
        out[c] = out[c] * 100
    return out
