"""The cl paper's plots of results over repeats: the median with min/max error bars.

The paper's figures mark the median over repeats (seeds) with error bars from the minimum to
the maximum (its tables give mean ± std: :func:`~privrepro.continual.repeat_summaries.median_min_max`).
These helpers draw such markers on a matplotlib ``Axes`` from tidy tables, for the harness's
figures and for tables a researcher makes with :func:`~privrepro.continual.run_peft` or
:func:`~privrepro.continual.run_cosine_benchmark`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privrepro.continual.repeat_summaries import final_metrics, median_min_max

__all__ = [
    "aa_af_curves",
    "category_markers",
    "final_accuracy_markers",
    "in_order",
    "median_errorbar",
    "task_curves",
]


def in_order(stats: pd.DataFrame, key: str, order: Sequence[Any]) -> pd.DataFrame:
    """The rows of ``stats`` in ``order`` of their ``key`` column (values absent left out)."""
    s = stats.set_index(key).reindex([o for o in order if o in set(stats[key])])
    return s.reset_index()


def median_errorbar(ax: Any, x: Any, stats: pd.DataFrame, **kw: Any) -> None:
    """Markers at the ``median`` column with error bars to ``min`` and ``max`` (``kw`` go to
    ``Axes.errorbar``; default: unconnected circles)."""
    yerr = np.vstack([stats["median"] - stats["min"], stats["max"] - stats["median"]])
    ax.errorbar(x, stats["median"], yerr=yerr, **{"fmt": "o", "capsize": 3, **kw})


def task_curves(
    ax: Any, table: pd.DataFrame, series: Sequence[str], value: str, by: str = "privacy"
) -> None:
    """``value`` after each ``task`` (AA_t, AF_t): median over repeats with min/max bars, one
    curve per ``by`` value in ``series`` (labelled ``ε=<value>``, or ``non-DP``)."""
    for j, p in enumerate(series):
        s = median_min_max(table[table[by] == p], ["task"], value).dropna(subset=["median"])
        if s.empty:
            continue
        label = p if p == "non-DP" else f"ε={p}"
        x = s["task"] + 0.08 * (j - 1)
        median_errorbar(ax, x, s, fmt="-o", ms=3, capsize=2, color=f"C{j}", label=label)
    ax.set_xlabel("task t")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # tasks are whole: no "task 2.5"


def aa_af_curves(
    axes: Sequence[Any], table: pd.DataFrame, series: Sequence[str], titles: Sequence[str]
) -> None:
    """AA_t and AF_t (columns ``aa``, ``af``, ×100) after each task on two axes, one curve per
    privacy level in ``series`` (:func:`task_curves`)."""
    for ax, value, title in zip(axes, ("aa", "af"), titles, strict=True):
        task_curves(ax, table, series, value)
        ax.set_ylabel(rf"$\mathrm{{{value.upper()}}}_t$ (%)")
        ax.set_title(title)
        ax.legend(frameon=False, fontsize=7)


def category_markers(
    ax: Any,
    stats: pd.DataFrame,
    key: str,
    order: Sequence[Any],
    *,
    series: str | None = None,
    label: str | Callable[[Any], str] = "{}",
    names: dict[Any, str] | Callable[[Any], str] | None = None,
    offset: float = 0.12,
    markers: str = "o",
    **kw: Any,
) -> None:
    """Median/min/max markers of ``stats`` at x = the position of each ``key`` value in
    ``order`` (absent values skipped); the ticks name every position (``names[value]`` or
    ``names(value)``, default the value). With ``series``, one set of markers per value of that column (in order of
    appearance), ``offset`` apart, each in its own colour and marker of ``markers``. ``label``
    formats (or is called with) the series value; ``kw`` go to :func:`median_errorbar`."""
    groups = [(None, stats)] if series is None else list(stats.groupby(series, sort=False))
    for j, (value, s) in enumerate(groups):
        s = in_order(s, key, order)
        x = np.array([list(order).index(v) for v in s[key]]) + (j - (len(groups) - 1) / 2) * offset
        text = label(value) if callable(label) else label.format(value)
        style = {"fmt": markers[j % len(markers)], **({} if series is None else {"color": f"C{j}"})}
        median_errorbar(ax, x, s, label=text, **{**style, **kw})
    name = names if callable(names) else (lambda v: (names or {}).get(v, str(v)))
    ax.set_xticks(np.arange(len(order)), [name(v) for v in order])


def final_accuracy_markers(
    ax: Any,
    table: pd.DataFrame,
    series: str,
    order: Sequence[str],
    rule: str = "argmax",
    label: str | Callable[[Any], str] = "{}",
) -> None:
    """Final AA (×100) of PEFT runs per privacy level (``eps_label`` in ``order``), median over
    repeats with min/max bars, one series per value of the ``series`` column (side by side),
    named by ``label`` (see :func:`category_markers`)."""
    f = final_metrics(table, [series, "eps_label"], rule=rule)
    if len(f):
        present = [o for o in order if o in set(f["eps_label"])]
        category_markers(ax, f, "eps_label", present, series=series, offset=0.08, label=label)
    ax.set_ylabel("final average accuracy (%)")
