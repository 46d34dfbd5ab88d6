"""The scorecard: every reference value held against the reproduced one, with a verdict.

:func:`build_scorecard` is pure: the figures' results tables (:mod:`privrepro.report.results`)
and the reference values (:mod:`privrepro.report.references`) in, one row per reference value
out. Nothing is typed in: the reproduced value is always looked up in the table named by the
entry's ``match`` (:func:`select`), so a changed result changes the verdict. Only a figure's
canonical rows are scored (:mod:`privrepro.runner.canonical`), under the most faithful profile
the entry allows (:func:`~privrepro.report.row_selection.choose_profile`), then by its ``where``;
a value computed on stand-in data is never compared with the paper's. The verdicts (pass, fail,
not comparable with a code), the tolerance rule and the ``guarantee`` column are in
``docs/report.md`` ("Verdicts of values", "The scorecards").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.report.reference_records import Lookup, ReferenceSet, ReferenceValue
from privrepro.report.results import FigureResults, make_target
from privrepro.report.row_selection import (
    choose_profile,
    data_labels,
    data_problem,
    fmt_key,
    mask,
    profiles_of,
    rows_of_profile,
    where_text,
)

__all__ = [
    "COUNT_COLUMNS",
    "OUTCOME_WORDS",
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
#: The words of a verdict for each kind of reference.
OUTCOME_WORDS = {
    "printed": {"pass": "reproduced", "fail": "failed", "not comparable": "not comparable"},
    "derived": {"pass": "consistent", "fail": "inconsistent", "not comparable": "not comparable"},
}
SCORECARD_COLUMNS = [
    "id",
    "paper",
    "figure",
    "quantity",
    "config",
    "kind",
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
    "derivation",
    "profile",
    "data",
    "verdict",
    "outcome",
    "why",
    "code",
    "n_rows",
    "file",
    "exact",
    "guarantee",
]
_GUARANTEE_SLACK = 1e-6  # relative: the exact value may exceed a valid guarantee by rounding only
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


def select(fr: FigureResults | None, lookup: Lookup, profile: str | None = None) -> Selection:
    """Find ``lookup``'s value in a figure's results (rows of ``profile`` only, when given).

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
    rows = rows_of_profile(df, profile)
    assert rows is not None
    if lookup.table == "summary":
        if "metric" not in df.columns:
            return Selection(None, empty, "summary has no 'metric' column", "no-column")
        rows = rows[rows["metric"].astype(str) == str(lookup.metric)]
        if rows.empty:
            return Selection(None, rows, f"no summary row with metric {lookup.metric!r}", "no-row")
    for key, value in lookup.where.items():
        if key not in rows.columns:
            return Selection(None, empty, f"results have no column {key!r}", "no-column")
        rows = rows[mask(rows[key], value)]
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


def _setting(fr: FigureResults, key: str, profile: str | None = None) -> Any:
    """A run setting: the parameters of ``profile``'s canonical view (else of the last run) in
    the metadata (dotted path), else a column with one value."""
    view = fr.canonical.get(profile or "") or {}
    node: Any = view.get("params") or fr.meta.get("params") or {}
    for part in key.removeprefix("params.").split("."):
        node = node.get(part, _ABSENT) if isinstance(node, Mapping) else _ABSENT
    if node is not _ABSENT:
        return node
    for df in (fr.table, fr.summary):
        if df is not None and key in df.columns:
            values = df[key].dropna().unique()
            return values[0] if len(values) == 1 else list(values)
    return _ABSENT


def requirement_problem(
    fr: FigureResults, requires: Mapping[str, Any], profile: str | None = None
) -> str | None:
    """Why the results (of ``profile``) do not meet ``requires`` (e.g. made on stand-in data),
    or ``None``."""
    for key, want in requires.items():
        have = _setting(fr, key, profile)
        if have is _ABSENT:
            return f"the results do not record {key} (the reference needs {key}={want})"
        col = pd.Series([have]) if not isinstance(have, list) else pd.Series(have, dtype=object)
        if len(col) != 1 or not bool(mask(col, want).iloc[0]):
            return (
                f"data not available: made with {key}={fmt_key(have)}, the reference "
                f"needs {key}={fmt_key(want)}"
            )
    return None


def _summary_rows_data(fr: FigureResults, profile: str | None, lookup: Lookup) -> list[str] | None:
    """The data of the main-table rows a summary value was made from (its ``where`` columns)."""
    table = rows_of_profile(fr.table, profile)
    if table is None or "data" not in table.columns:
        return None
    for key, value in lookup.where.items():
        if key in table.columns:
            table = table[mask(table[key], value)]
    return data_labels(fr, profile, table if len(table) else None)


def _row(ref: ReferenceValue, fr: FigureResults | None) -> dict[str, Any]:
    tol = ref.tolerance
    kind = ref.reference_class
    d = ref.derivation
    row: dict[str, Any] = {
        "id": ref.id,
        "paper": ref.paper,
        "figure": ref.figure,
        "quantity": ref.quantity,
        "config": where_text(ref.match.where),
        "kind": kind,
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
        "derivation": "" if d is None else (d.call_text() or d.formula or ""),
        "profile": "",
        "data": "",
        "verdict": "not comparable",
        "outcome": "not comparable",
        "why": "",
        "code": "",
        "n_rows": 0,
        "file": ref.file,
        "exact": np.nan,
        "guarantee": "",
    }

    def done(verdict: str = "not comparable", **kw: Any) -> dict[str, Any]:
        row.update(kw, verdict=verdict, outcome=OUTCOME_WORDS[kind][verdict])
        return row

    if fr is not None and fr.error:
        return done(why=f"results unreadable: {fr.error}", code="unreadable")
    if fr is not None and not fr.ran and fr.no_canonical:
        return done(why=f"no canonical view: {fr.no_canonical}", code="no-canonical")
    if fr is None or not fr.ran:
        return done(why=f"not run: `{make_target(ref.paper, ref.figure)}`", code="not-run")
    profile, allowed = choose_profile(profiles_of(fr), ref.profiles)
    row["profile"] = profile or ""
    sel = select(fr, ref.match, profile)
    if ref.guarantee is not None:
        exact = select(fr, ref.guarantee, profile).value
        claimed = sel.value if sel.value is not None else float(ref.value)
        if exact is not None:
            valid = exact <= claimed + _GUARANTEE_SLACK * max(abs(claimed), 1e-12)
            row.update(exact=exact, guarantee="valid" if valid else "not valid")
        else:  # no exact value of the same mechanism in the results: unchecked is a state
            row.update(guarantee="not checked")
    row["n_rows"] = sel.n
    labels = (
        data_labels(fr, profile, sel.rows)
        if ref.match.table == "main" and sel.n
        else _summary_rows_data(fr, profile, ref.match)
    )
    row["data"] = "; ".join(labels or [])
    stand_in = data_problem(labels)
    if sel.value is not None:
        row["reproduced"] = sel.value
        if stand_in is None:
            row["difference"] = sel.value - float(ref.value)
            if ref.value != 0:
                row["rel_difference"] = row["difference"] / abs(float(ref.value))
    if not allowed:
        return done(
            why=(
                f"made under profile {profile or 'unknown'!r}; the reference value is "
                f"comparable under {', '.join(ref.profiles or ())}"
            ),
            code="profile",
        )
    if stand_in is not None:
        code, why = stand_in
        return done(why=f"{why}; never compared with the paper", code=code)
    problem = requirement_problem(fr, ref.requires, profile)
    if problem:
        return done(why=problem, code="data")
    if sel.value is None:
        return done(why=sel.problem or "value not found", code=sel.code)
    if tol is None:
        why = (
            "read off a plot and no tolerance stated"
            if ref.source.kind == "read-off-plot"
            else "no tolerance stated"
        )
        return done(why=why, code="no-tolerance")
    slack = _REPR_SLACK * max(abs(float(ref.value)), abs(sel.value))
    ok = abs(row["difference"]) <= tol.allowed(float(ref.value)) + slack
    if ok:
        return done("pass")
    return done(
        "fail",
        why=f"off by {abs(row['difference']):.3g}, more than the allowed {row['allowed']:.3g}",
    )


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


#: The per-paper counts of :func:`summary_counts`, in order.
COUNT_COLUMNS = [
    "paper",
    "figures",
    "figures run",
    "values",
    "printed",
    "printed reproduced",
    "printed failed",
    "printed not comparable",
    "derived",
    "derived consistent",
    "derived inconsistent",
    "derived not comparable",
    "not run",
    "claims",
    "claims reproduced",
    "claims contradicted",
    "claims not comparable",
    "reproduced",
    "pass",
    "fail",
    "not comparable",
    "errata",
]


def summary_counts(
    card: pd.DataFrame,
    figures: Mapping[tuple[str, str], FigureResults],
    refs: ReferenceSet,
    papers: list[str],
    claims: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per paper: figures run / known; printed values reproduced / failed / not comparable;
    derived values consistent / inconsistent / not comparable; claims reproduced / contradicted /
    not comparable; ``reproduced`` = printed values and claims reproduced (the headline).

    Values and claims of figures that have not run are counted in ``not run`` only (not in the
    not-comparable columns); ``pass``/``fail``/``not comparable`` count all values together. A
    final ``all`` row sums.
    """
    out = []
    empty_claims = pd.DataFrame(columns=["paper", "verdict", "code"])
    cl = claims if claims is not None else empty_claims
    for paper in papers:
        sub = card[card["paper"] == paper] if len(card) else card
        figs = [f for (p, _), f in figures.items() if p == paper]
        ran = sub[sub["code"] != "not-run"] if len(sub) else sub

        def n(df: pd.DataFrame, kind: str | None, verdict: str) -> int:
            if not len(df):
                return 0
            m = df["verdict"] == verdict
            if kind is not None:
                m &= df["kind"] == kind
            return int(m.sum())

        csub = cl[cl["paper"] == paper] if len(cl) else cl
        c_ran = csub[csub["code"] != "not-run"] if len(csub) else csub
        row: dict[str, Any] = {
            "paper": paper,
            "figures": len(figs),
            "figures run": sum(f.ran for f in figs),
            "values": len(sub),
            "printed": int((sub["kind"] == "printed").sum()) if len(sub) else 0,
            "printed reproduced": n(ran, "printed", "pass"),
            "printed failed": n(ran, "printed", "fail"),
            "printed not comparable": n(ran, "printed", "not comparable"),
            "derived": int((sub["kind"] == "derived").sum()) if len(sub) else 0,
            "derived consistent": n(ran, "derived", "pass"),
            "derived inconsistent": n(ran, "derived", "fail"),
            "derived not comparable": n(ran, "derived", "not comparable"),
            "not run": (int((sub["code"] == "not-run").sum()) if len(sub) else 0)
            + (int((csub["code"] == "not-run").sum()) if len(csub) else 0),
            "claims": len(csub),
            "claims reproduced": n(c_ran, None, "reproduced"),
            "claims contradicted": n(c_ran, None, "contradicted"),
            "claims not comparable": n(c_ran, None, "not comparable"),
            "pass": n(ran, None, "pass"),
            "fail": n(ran, None, "fail"),
            "not comparable": n(ran, None, "not comparable"),
            "errata": sum(e.paper == paper for e in refs.errata),
        }
        row["reproduced"] = row["printed reproduced"] + row["claims reproduced"]
        out.append(row)
    df = pd.DataFrame(out, columns=COUNT_COLUMNS)
    total = {c: int(df[c].sum()) for c in df.columns if c != "paper"}
    return pd.concat([df, pd.DataFrame([{"paper": "all", **total}])], ignore_index=True)
