"""The scorecard: every reference value held against the reproduced one, with a verdict.

:func:`build_scorecard` is pure: the figures' results tables (:mod:`privrepro.report.results`)
and the reference values (:mod:`privrepro.report.references`) in, one row per reference value
out. Nothing is typed in: the reproduced value is always looked up in the table named by the
entry's ``match`` (:func:`select`), so a changed result changes the verdict.

Verdicts:

``pass``
    |reproduced − reference| ≤ abs + rel·|reference| (numpy.isclose's rule, plus a relative
    1e-12 for floating-point representation).
``fail``
    the difference exceeds the tolerance.
``not comparable``
    with a ``why`` and a ``code``: ``not-run`` (the figure has no results), ``profile`` (the
    results were made under a profile the entry does not list, e.g. smoke data instead of the
    paper's), ``unreadable`` (a results file exists but cannot be read), ``data`` (they were made with other settings than the entry ``requires``, e.g.
    stand-in data), ``no-table``/``no-row``/``no-column``/``ambiguous``/``nan`` (the value could not
    be found), ``no-tolerance`` (the entry gives none, e.g. a value read off a plot).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.report.references import Lookup, ReferenceSet, ReferenceValue
from privrepro.report.results import FigureResults, make_target

__all__ = [
    "SCORECARD_COLUMNS",
    "VERDICTS",
    "Selection",
    "build_scorecard",
    "requirement_problem",
    "select",
    "summary_counts",
    "where_text",
]

VERDICTS = ("pass", "fail", "not comparable")
SCORECARD_COLUMNS = [
    "id",
    "paper",
    "figure",
    "quantity",
    "config",
    "reference",
    "reproduced",
    "difference",
    "rel_difference",
    "tolerance_abs",
    "tolerance_rel",
    "allowed",
    "tolerance_reason",
    "source_kind",
    "source",
    "profile",
    "verdict",
    "why",
    "code",
    "n_rows",
    "file",
]
_FLOAT_RTOL = 1e-9  # `where` matching of floats (docs/adding-a-figure.md)
_REPR_SLACK = 1e-12  # relative slack for floating-point representation in the pass test


@dataclass(frozen=True)
class Selection:
    """The outcome of a :class:`Lookup`: the value (or why there is none) and the rows matched."""

    value: float | None
    rows: pd.DataFrame
    problem: str | None = None
    code: str = ""

    @property
    def n(self) -> int:
        """How many rows were matched."""
        return len(self.rows)


def where_text(where: Mapping[str, Any]) -> str:
    """``epsilon=1, delta=1e-07``: a row selector in words."""
    return ", ".join(f"{k}={_fmt_key(v)}" for k, v in where.items())


def _fmt_key(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _mask(column: pd.Series, value: Any) -> pd.Series:
    """Rows of ``column`` equal to ``value``; floats to a relative 1e-9, null matches NaN."""
    if value is None:
        return column.isna()
    if isinstance(value, bool):
        return column.astype(str).str.lower() == str(value).lower()
    if isinstance(value, (int, float)):
        num = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
        ok = np.isclose(num, float(value), rtol=_FLOAT_RTOL, atol=0.0) | (num == float(value))
        return pd.Series(ok, index=column.index)
    return column.astype(str) == str(value)


def select(fr: FigureResults | None, lookup: Lookup) -> Selection:
    """Find ``lookup``'s value in a figure's results.

    A summary lookup takes the ``value`` of the rows whose ``metric`` is ``lookup.metric``; a
    main lookup takes ``lookup.column``. ``lookup.where`` narrows the rows. Several matched rows
    are reduced by ``lookup.reduce`` (``only``: they must all hold one value).
    """
    empty = pd.DataFrame()
    if fr is None or not fr.ran:
        return Selection(None, empty, "not run", "not-run")
    df = fr.summary if lookup.table == "summary" else fr.table
    if df is None:
        what = (
            "no summary (the recipe's summarize wrote nothing)"
            if lookup.table == "summary"
            else "no main table"
        )
        return Selection(None, empty, what, "no-table")
    rows = df
    if lookup.table == "summary":
        if "metric" not in df.columns:
            return Selection(None, empty, "summary has no 'metric' column", "no-column")
        rows = rows[rows["metric"].astype(str) == str(lookup.metric)]
        if rows.empty:
            return Selection(None, rows, f"no summary row with metric {lookup.metric!r}", "no-row")
    for key, value in lookup.where.items():
        if key not in rows.columns:
            return Selection(None, empty, f"results have no column {key!r}", "no-column")
        rows = rows[_mask(rows[key], value)]
    if rows.empty:
        return Selection(None, rows, f"no row with {where_text(lookup.where)}", "no-row")
    col = lookup.value_column
    if col not in rows.columns:
        return Selection(None, rows, f"results have no column {col!r}", "no-column")
    values = pd.to_numeric(rows[col], errors="coerce").to_numpy(dtype=float)
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return Selection(None, rows, f"{col} is empty or not a number", "nan")
    if lookup.reduce == "only":
        distinct = np.unique(finite)
        if distinct.size > 1:
            return Selection(
                None,
                rows,
                f"ambiguous: {len(rows)} rows with {distinct.size} "
                "different values match; narrow `where` or set "
                "match.reduce",
                "ambiguous",
            )
        return Selection(float(distinct[0]), rows)
    reducers: dict[str, Callable[[np.ndarray], Any]] = {
        "mean": np.mean,
        "median": np.median,
        "min": np.min,
        "max": np.max,
    }
    return Selection(float(reducers[lookup.reduce](finite)), rows)


_ABSENT = object()


def _setting(fr: FigureResults, key: str) -> Any:
    """A run setting: ``params`` in the metadata (dotted path), else a column with one value."""
    node: Any = fr.meta.get("params") or {}
    for part in key.removeprefix("params.").split("."):
        node = node.get(part, _ABSENT) if isinstance(node, Mapping) else _ABSENT
    if node is not _ABSENT:
        return node
    for df in (fr.table, fr.summary):
        if df is not None and key in df.columns:
            values = df[key].dropna().unique()
            return values[0] if len(values) == 1 else list(values)
    return _ABSENT


def requirement_problem(fr: FigureResults, requires: Mapping[str, Any]) -> str | None:
    """Why the results do not meet ``requires`` (e.g. made on stand-in data), or ``None``."""
    for key, want in requires.items():
        have = _setting(fr, key)
        if have is _ABSENT:
            return f"the results do not record {key} (the reference needs {key}={want})"
        col = pd.Series([have]) if not isinstance(have, list) else pd.Series(have, dtype=object)
        if len(col) != 1 or not bool(_mask(col, want).iloc[0]):
            return (
                f"data not available: made with {key}={_fmt_key(have)}, the reference "
                f"needs {key}={_fmt_key(want)}"
            )
    return None


def _row(ref: ReferenceValue, fr: FigureResults | None) -> dict[str, Any]:
    tol = ref.tolerance
    row: dict[str, Any] = {
        "id": ref.id,
        "paper": ref.paper,
        "figure": ref.figure,
        "quantity": ref.quantity,
        "config": where_text(ref.match.where),
        "reference": float(ref.value),
        "reproduced": np.nan,
        "difference": np.nan,
        "rel_difference": np.nan,
        "tolerance_abs": tol.abs if tol else np.nan,
        "tolerance_rel": tol.rel if tol else np.nan,
        "allowed": tol.allowed(ref.value) if tol else np.nan,
        "tolerance_reason": tol.reason if tol else "",
        "source_kind": ref.source.kind or "",
        "source": ref.source.text(),
        "profile": (fr.profile if fr is not None else None) or "",
        "verdict": "not comparable",
        "why": "",
        "code": "",
        "n_rows": 0,
        "file": ref.file,
    }
    if fr is not None and fr.error:
        row["why"] = f"results unreadable: {fr.error}"
        row["code"] = "unreadable"
        return row
    if fr is None or not fr.ran:
        row["why"] = f"not run: `{make_target(ref.paper, ref.figure)}`"
        row["code"] = "not-run"
        return row
    sel = select(fr, ref.match)
    row["n_rows"] = sel.n
    if sel.value is not None:
        row["reproduced"] = sel.value
        row["difference"] = sel.value - float(ref.value)
        if ref.value != 0:
            row["rel_difference"] = row["difference"] / abs(float(ref.value))
    profile = fr.profile
    if ref.profiles is not None and (profile is None or profile not in ref.profiles):
        row["why"] = (
            f"made under profile {profile or 'unknown'!r}; the published value is "
            f"comparable under {', '.join(ref.profiles)}"
        )
        row["code"] = "profile"
        return row
    problem = requirement_problem(fr, ref.requires)
    if problem:
        row["why"] = problem
        row["code"] = "data"
        return row
    if sel.value is None:
        row["why"] = sel.problem or "value not found"
        row["code"] = sel.code
        return row
    if tol is None:
        row["why"] = (
            "read off a plot and no tolerance stated"
            if ref.source.kind == "read-off-plot"
            else "no tolerance stated"
        )
        row["code"] = "no-tolerance"
        return row
    slack = _REPR_SLACK * max(abs(float(ref.value)), abs(sel.value))
    ok = abs(row["difference"]) <= tol.allowed(float(ref.value)) + slack
    row["verdict"] = "pass" if ok else "fail"
    if not ok:
        row["why"] = (
            f"off by {abs(row['difference']):.3g}, more than the allowed {row['allowed']:.3g}"
        )
    return row


def build_scorecard(
    figures: Mapping[tuple[str, str], FigureResults], refs: ReferenceSet
) -> pd.DataFrame:
    """One row per reference value (columns :data:`SCORECARD_COLUMNS`), in reference-file order.

    Args:
        figures: ``(paper, figure) → FigureResults`` (figures not in it count as not run).
        refs: the reference values.
    """
    rows = [_row(ref, figures.get((ref.paper, ref.figure))) for ref in refs.values]
    return pd.DataFrame(rows, columns=SCORECARD_COLUMNS)


def summary_counts(
    card: pd.DataFrame,
    figures: Mapping[tuple[str, str], FigureResults],
    refs: ReferenceSet,
    papers: list[str],
) -> pd.DataFrame:
    """Per paper: figures run / known, and the values that pass, fail, are not comparable or not run.

    ``not comparable`` here excludes ``not run`` (counted on its own). A final ``all`` row sums.
    """
    out = []
    for paper in papers:
        sub = card[card["paper"] == paper] if len(card) else card
        figs = [f for (p, _), f in figures.items() if p == paper]
        not_run = int((sub["code"] == "not-run").sum()) if len(sub) else 0
        out.append(
            {
                "paper": paper,
                "figures": len(figs),
                "figures run": sum(f.ran for f in figs),
                "values": len(sub),
                "pass": int((sub["verdict"] == "pass").sum()) if len(sub) else 0,
                "fail": int((sub["verdict"] == "fail").sum()) if len(sub) else 0,
                "not comparable": int((sub["verdict"] == "not comparable").sum()) - not_run
                if len(sub)
                else 0,
                "not run": not_run,
                "errata": sum(e.paper == paper for e in refs.errata),
            }
        )
    df = pd.DataFrame(
        out,
        columns=[
            "paper",
            "figures",
            "figures run",
            "values",
            "pass",
            "fail",
            "not comparable",
            "not run",
            "errata",
        ],
    )
    total = {c: int(df[c].sum()) for c in df.columns if c != "paper"}
    return pd.concat([df, pd.DataFrame([{"paper": "all", **total}])], ignore_index=True)
