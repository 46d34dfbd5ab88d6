"""A check evaluated on the figures' tables: holds, fails or undecidable, with its numbers.

A check (:mod:`~privrepro.report.claim_checks`) reads *series* from a figure's tidy table (rows
chosen by ``where``, a value column ``y`` against an ``x`` column) and compares them; rows of one
profile only. Nothing raises on missing data: the outcome is ``undecidable`` with the reason.
Every outcome carries its decisive numbers (the first failing point, or the tightest point that
holds).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from privrepro.report.claim_checks import Check, Number, Selector, Stat
from privrepro.report.results import FigureResults, make_target
from privrepro.report.row_selection import fmt_key, rows_of_profile, rows_where, where_text

__all__ = ["Outcome", "evaluate_check", "numbers_text"]


@dataclass
class Outcome:
    """How a check came out on the tables: ``holds``, ``fails`` or ``undecidable`` (with why).

    ``numbers``: the decisive values in a few words (the first failing point, or the tightest
    point that holds; ``lhs vs rhs``)."""

    state: str
    detail: str
    rows: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    numbers: str = ""


class _Undecidable(Exception):
    pass


@dataclass
class _Ctx:
    paper: str
    figure: str
    figures: Mapping[tuple[str, str], FigureResults]
    profiles: dict[str, str | None]
    override: dict[str, dict[str, Any]]
    group: dict[str, Any]
    used: list[tuple[str, pd.DataFrame]]
    computed: pd.DataFrame | None = None


def _key(v: Any) -> Any:
    """A join key for an x value: floats to 12 significant digits, other values as they are."""
    if isinstance(v, (float, np.floating)):
        return float(f"{float(v):.12g}")
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


def _rows(sel: Selector, ctx: _Ctx) -> tuple[pd.DataFrame, str]:
    figure = sel.figure or ctx.figure
    if sel.table == "computed":
        if ctx.computed is None:
            raise _Undecidable("the claim has no computed table (`computed:`)")
        df: pd.DataFrame | None = ctx.computed
        figure = "computed"
    else:
        fr = ctx.figures.get((ctx.paper, figure))
        if fr is None or not fr.ran:
            raise _Undecidable(f"{figure} has no results (`{make_target(ctx.paper, figure)}`)")
        df = fr.table if sel.table == "main" else fr.summary
        if df is None:
            raise _Undecidable(f"{figure} has no {sel.table} table")
        df = rows_of_profile(df, ctx.profiles.get(figure))
    assert df is not None
    where = dict(sel.where)
    where.update({k: v for k, v in ctx.group.items() if k in df.columns})
    for role, extra in ctx.override.items():
        if sel.role == role or sel.role.startswith(role + "."):
            where.update(extra)
    rows, problem = rows_where(df, where)
    if problem:
        raise _Undecidable(f"{figure}: {problem}")
    if rows.empty:
        raise _Undecidable(f"{figure}: no rows with {where_text(where)}")
    if sel.y not in rows.columns:
        raise _Undecidable(f"{figure}: no column {sel.y!r}")
    ctx.used.append((figure, rows))
    return rows, figure


def _aggregate(values: np.ndarray, agg: str, what: str) -> float:
    finite = values[~np.isnan(values)]
    if agg == "count":
        return float(finite.size)
    if finite.size == 0:
        raise _Undecidable(f"{what}: no finite value")
    if agg == "only":
        distinct = np.unique(finite)
        if distinct.size > 1:
            raise _Undecidable(
                f"{what}: {finite.size} rows with {distinct.size} different values "
                "(narrow `where` or set `agg`)"
            )
        return float(distinct[0])
    if agg == "std":
        return float(np.std(finite, ddof=1)) if finite.size > 1 else math.nan
    fn: dict[str, Callable[[np.ndarray], Any]] = {
        "mean": np.mean,
        "median": np.median,
        "min": np.min,
        "max": np.max,
    }
    return float(fn[agg](finite))


def _series(sel: Selector, ctx: _Ctx, rng: tuple[float | None, float | None]) -> pd.Series:
    rows, figure = _rows(sel, ctx)
    if sel.x is None:
        raise _Undecidable(f"{sel.text()}: no x column")
    if sel.x not in rows.columns:
        raise _Undecidable(f"{figure}: no column {sel.x!r}")
    y = pd.to_numeric(rows[sel.y], errors="coerce").to_numpy(dtype=float)
    xs = [_key(v) for v in rows[sel.x]]
    out: dict[Any, float] = {}
    for xv in dict.fromkeys(xs):
        idx = np.array([k == xv for k in xs])
        v = _aggregate(y[idx], sel.agg, f"{sel.text()} at {sel.x}={fmt_key(xv)}")
        if not math.isnan(v):
            out[xv] = v
    s = pd.Series(out, dtype=float)
    lo, hi = rng
    if lo is not None or hi is not None:
        num = pd.to_numeric(pd.Series(s.index), errors="coerce").to_numpy(dtype=float)
        keep = np.ones(len(s), dtype=bool)
        if lo is not None:
            keep &= num >= lo - 1e-12 * max(1.0, abs(lo))
        if hi is not None:
            keep &= num <= hi + 1e-12 * max(1.0, abs(hi))
        s = s[keep]
    if s.empty:
        raise _Undecidable(f"{sel.text()}: no point in range")
    try:
        return s.sort_index()
    except TypeError:
        return s


def _scalar(sel: Selector, ctx: _Ctx) -> float:
    rows, _ = _rows(sel, ctx)
    y = pd.to_numeric(rows[sel.y], errors="coerce").to_numpy(dtype=float)
    v = _aggregate(y, sel.agg, sel.text())
    if math.isnan(v):
        raise _Undecidable(f"{sel.text()}: not a number")
    return v


def _apply(d: float, relation: str, margin: float, tolerance: float) -> bool:
    if relation == ">":
        return d > margin
    if relation == ">=":
        return d >= margin
    if relation == "<":
        return d < margin
    if relation == "<=":
        return d <= margin
    return abs(d - margin) <= tolerance


def _num(v: float) -> str:
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    return f"{v:.4g}"


def _relation_text(c: Check) -> str:
    what = "lhs / rhs" if c.on == "ratio" else "lhs − rhs"
    rel = {"~=": "≈", ">=": "≥", "<=": "≤"}.get(c.relation, c.relation)
    tol = f" ± {c.tolerance:g}" if c.relation == "~=" else ""
    return f"{what} {rel} {c.margin:g}{tol}"


def _d(a: float, b: float, on: str) -> float:
    if on == "ratio":
        return a / b if b != 0 else math.copysign(math.inf, a) if a != 0 else math.nan
    return a - b


def _combine(op: str, a: pd.Series, b: pd.Series) -> pd.Series:
    common = [k for k in a.index if k in b.index]
    if not common:
        raise _Undecidable("the two series share no x")
    a, b = a[common], b[common]
    if op == "difference":
        return a - b
    if op == "ratio":
        return a / b
    return (a - b) / a


def _reduce(s: pd.Series, how: str) -> float:
    if how in ("mean", "median", "min", "max"):
        return float(getattr(s, how)())
    if how == "first":
        return float(s.iloc[0])
    if how == "last":
        return float(s.iloc[-1])
    if how == "increase":
        return float(s.iloc[-1] - s.iloc[0])
    if how == "range":
        return float(s.max() - s.min())
    if how == "max_over_min":
        return float(s.max() / s.min())
    if how == "last_over_first":
        return float(s.iloc[-1] / s.iloc[0])
    idx = s.idxmin() if how == "argmin" else s.idxmax()
    try:
        return float(idx)  # type: ignore[arg-type]
    except (TypeError, ValueError) as e:
        raise _Undecidable(f"{how} of a series whose x is not a number ({idx!r})") from e


def _stat_value(st: Stat, c: Check, ctx: _Ctx) -> float:
    if st.value is not None:
        return st.value
    if st.combine:
        a, b = (_series(s, ctx, c.range) for s in st.of)
        return _reduce(_combine(st.combine, a, b).dropna(), st.reduce)
    assert st.selector is not None
    if st.reduce == "value":
        return _scalar(st.selector, ctx)
    return _reduce(_series(st.selector, ctx, c.range), st.reduce)


Evaluated = tuple[bool, str, str]
"""(holds, detail in words, decisive numbers in a few words)."""


def _vs(a: float, b: float) -> str:
    return f"{_num(a)} vs {_num(b)}"


def _eval_compare(c: Check, ctx: _Ctx) -> Evaluated:
    assert c.lhs is not None
    a = _series(c.lhs, ctx, c.range)
    x = c.lhs.x
    if c.rhs is not None:
        b = _series(c.rhs, ctx, c.range)
        common = [k for k in a.index if k in b.index]
        if not common:
            raise _Undecidable(f"{c.lhs.text()} and {c.rhs.text()} share no {x}")
        a, b = a[common], b[common]
    else:
        b = pd.Series(c.rhs_value, index=a.index, dtype=float)
    ok = []
    slack = []
    for k in a.index:
        d = _d(float(a[k]), float(b[k]), c.on)
        ok.append(_apply(d, c.relation, c.margin, c.tolerance))
        slack.append(_slack(d, c.relation, c.margin, c.tolerance))
    n, n_ok = len(ok), sum(ok)
    holds = n_ok == n if c.quantifier == "all" else n_ok > 0
    bad = [k for k, o in zip(a.index, ok, strict=True) if not o]
    good = [k for k, o in zip(a.index, ok, strict=True) if o]
    rel = _relation_text(c)
    if c.quantifier == "all" and bad:
        k = bad[0]
        return (
            holds,
            f"{rel} fails at {len(bad)} of {n} {x} "
            f"(first at {x}={fmt_key(k)}: lhs {_num(a[k])}, rhs {_num(b[k])})",
            f"fails at {len(bad)} of {n} {x}; {x}={fmt_key(k)}: {_vs(a[k], b[k])}",
        )
    if c.quantifier == "any" and not good:
        k = a.index[0]
        return (
            holds,
            f"{rel} holds at none of {n} {x}",
            f"holds at none of {n} {x}; {x}={fmt_key(k)}: {_vs(a[k], b[k])}",
        )
    if c.quantifier == "all":
        # the tightest point: where the relation holds with the least room
        k = list(a.index)[int(np.argmin(slack))]
        numbers = f"holds at all {n} {x}; tightest {x}={fmt_key(k)}: {_vs(a[k], b[k])}"
    else:
        k = good[0]
        numbers = f"holds at {n_ok} of {n} {x}; e.g. {x}={fmt_key(k)}: {_vs(a[k], b[k])}"
    span = f"{x} from {fmt_key(a.index[0])} to {fmt_key(a.index[-1])}"
    ek = (good or list(a.index))[0]
    return (
        holds,
        (
            f"{rel} at {n_ok} of {n} {x} ({span}; e.g. {x}={fmt_key(ek)}: lhs {_num(a[ek])}, "
            f"rhs {_num(b[ek])})"
        ),
        numbers,
    )


def _slack(d: float, relation: str, margin: float, tolerance: float) -> float:
    """How much room ``d`` leaves against the relation (negative: it fails)."""
    if relation in (">", ">="):
        return d - margin
    if relation in ("<", "<="):
        return margin - d
    return tolerance - abs(d - margin)


def _eval_monotone(c: Check, ctx: _Ctx) -> Evaluated:
    assert c.series is not None
    s = _series(c.series, ctx, c.range)
    if len(s) < 2:
        raise _Undecidable(f"{c.series.text()}: fewer than two points")
    steps = np.diff(s.to_numpy(dtype=float))
    if c.direction == "decreasing":
        steps = -steps
    bad = steps <= 0 if c.strict else steps < -c.slack
    x = c.series.x
    word = c.direction + (" strictly" if c.strict else "")
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        k0, k1 = s.index[i], s.index[i + 1]
        return (
            False,
            f"not {word}: {_num(s[k0])} at {x}={fmt_key(k0)} then {_num(s[k1])} at "
            f"{x}={fmt_key(k1)} ({int(bad.sum())} of {len(steps)} steps)",
            f"{int(bad.sum())} of {len(steps)} steps not {word}; {x}={fmt_key(k0)} → "
            f"{fmt_key(k1)}: {_num(s[k0])} → {_num(s[k1])}",
        )
    i = int(np.argmin(steps))
    k0, k1 = s.index[i], s.index[i + 1]
    return (
        True,
        f"{word} over {len(s)} points: {_num(s.iloc[0])} at {x}={fmt_key(s.index[0])} to "
        f"{_num(s.iloc[-1])} at {x}={fmt_key(s.index[-1])}",
        f"{_num(s.iloc[0])} at {x}={fmt_key(s.index[0])} → {_num(s.iloc[-1])} at "
        f"{x}={fmt_key(s.index[-1])}; smallest step {x}={fmt_key(k0)} → {fmt_key(k1)}: "
        f"{_num(s[k0])} → {_num(s[k1])}",
    )


def _eval_crossover(c: Check, ctx: _Ctx) -> Evaluated:
    assert c.lhs is not None and c.rhs is not None
    d = _combine("difference", _series(c.lhs, ctx, c.range), _series(c.rhs, ctx, c.range))
    try:
        d = d.sort_index()
    except TypeError:
        pass
    x = c.lhs.x
    first, last = float(d.iloc[0]), float(d.iloc[-1])
    ok = _apply(first, c.low, 0.0, 0.0) and _apply(last, c.high, 0.0, 0.0)
    return (
        ok,
        f"lhs − rhs = {_num(first)} at {x}={fmt_key(d.index[0])} (wanted {c.low} 0) and "
        f"{_num(last)} at {x}={fmt_key(d.index[-1])} (wanted {c.high} 0)",
        f"lhs − rhs: {_num(first)} at {x}={fmt_key(d.index[0])}, {_num(last)} at "
        f"{x}={fmt_key(d.index[-1])}",
    )


def _eval_trend(c: Check, ctx: _Ctx) -> Evaluated:
    assert c.series is not None
    s = _series(c.series, ctx, c.range)
    first, last = float(s.iloc[0]), float(s.iloc[-1])
    d = _d(last, first, c.on)
    x = c.series.x
    what = "last / first" if c.on == "ratio" else "last − first"
    rel = {"~=": "≈", ">=": "≥", "<=": "≤"}.get(c.relation, c.relation)
    return (
        _apply(d, c.relation, c.margin, c.tolerance),
        f"{what} = {_num(d)} ({rel} {c.margin:g} wanted): {_num(first)} at "
        f"{x}={fmt_key(s.index[0])}, {_num(last)} at {x}={fmt_key(s.index[-1])}",
        f"{_num(first)} at {x}={fmt_key(s.index[0])} → {_num(last)} at "
        f"{x}={fmt_key(s.index[-1])} ({what} {_num(d)})",
    )


def _eval_stat(c: Check, ctx: _Ctx) -> Evaluated:
    assert c.stat_lhs is not None and c.stat_rhs is not None
    a, b = _stat_value(c.stat_lhs, c, ctx), _stat_value(c.stat_rhs, c, ctx)
    d = _d(a, b, c.on)
    ok = _apply(d, c.relation, c.margin, c.tolerance)
    rhs = _num(b) if c.stat_rhs.value is not None else f"{c.stat_rhs.text()} = {_num(b)}"
    return (
        ok,
        f"lhs: {c.stat_lhs.text()} = {_num(a)}; rhs: {rhs}; {_relation_text(c)}: "
        f"{'holds' if ok else 'fails'} ({'ratio' if c.on == 'ratio' else 'difference'} {_num(d)})",
        _vs(a, b),
    )


_EVAL: dict[str, Callable[[Check, _Ctx], Evaluated]] = {
    "compare": _eval_compare,
    "monotone": _eval_monotone,
    "crossover": _eval_crossover,
    "trend": _eval_trend,
    "stat": _eval_stat,
}


def _groups(c: Check, ctx: _Ctx) -> list[dict[str, Any]]:
    if not c.for_each:
        return [{}]
    selectors = c.selectors()
    if not selectors:
        return [{}]
    rows, figure = _rows(selectors[0], ctx)
    missing = [k for k in c.for_each if k not in rows.columns]
    if missing:
        raise _Undecidable(f"{figure}: no column {missing[0]!r} to group by")
    combos = rows[list(c.for_each)].drop_duplicates()
    return [{k: _plain(v) for k, v in rec.items()} for rec in combos.to_dict("records")]


def _plain(v: Any) -> Any:
    """A group value as a ``where`` value: numpy scalars as Python ones, NaN as ``None``."""
    v = v.item() if hasattr(v, "item") else v
    return None if isinstance(v, float) and math.isnan(v) else v


def _combine_outcomes(outs: list[tuple[str, Outcome]], what: str) -> Outcome:
    """One outcome from several (``what``: ``groups`` of a for_each, or ``parts`` of an all_of)."""
    if len(outs) == 1:
        label, o = outs[0]
        return Outcome(o.state, f"{label}{o.detail}", numbers=f"{label}{o.numbers}")
    failing = [(g, o) for g, o in outs if o.state == "fails"]
    if failing:
        g, o = failing[0]
        return Outcome(
            "fails",
            f"{len(failing)} of {len(outs)} {what} fail; first: {g}{o.detail}",
            numbers=f"{len(failing)} of {len(outs)} {what} fail; {g}{o.numbers}",
        )
    undecided = [(g, o) for g, o in outs if o.state == "undecidable"]
    if undecided:
        g, o = undecided[0]
        return Outcome("undecidable", f"{g}{o.detail}", numbers=f"{g}{o.numbers}")
    g, o = outs[0]
    return Outcome(
        "holds",
        f"holds in all {len(outs)} {what}; e.g. {g}{o.detail}",
        numbers=f"all {len(outs)} {what} hold; e.g. {g}{o.numbers}",
    )


def _evaluate(c: Check, ctx: _Ctx) -> Outcome:
    try:
        groups = _groups(c, ctx)
    except _Undecidable as e:
        return Outcome("undecidable", str(e))
    outs: list[tuple[str, Outcome]] = []
    for g in groups:
        sub = replace(ctx, group={**ctx.group, **g})
        label = f"[{where_text(g)}] " if g else ""
        if c.kind == "all_of":
            parts = [
                (f"part {i + 1}: " if len(c.parts) > 1 else "", _evaluate(p, sub))
                for i, p in enumerate(c.parts)
            ]
            outs.append((label, _combine_outcomes(parts, "parts")))
            continue
        try:
            ok, detail, numbers = _EVAL[c.kind](c, sub)
            outs.append((label, Outcome("holds" if ok else "fails", detail, numbers=numbers)))
        except _Undecidable as e:
            outs.append((label, Outcome("undecidable", str(e))))
    return _combine_outcomes(outs, "groups")


def evaluate_check(
    check: Check,
    figures: Mapping[tuple[str, str], FigureResults],
    paper: str,
    figure: str,
    profiles: Mapping[str, str | None] | None = None,
    override: Mapping[str, Mapping[str, Any]] | None = None,
    computed: pd.DataFrame | None = None,
) -> Outcome:
    """Evaluate ``check`` on the figures' tables (rows of ``profiles[figure]`` only).

    ``override`` adds ``where`` entries to the selectors of a role (``lhs``, ``rhs``, ``series``);
    ``computed`` is the table ``table: computed`` selectors read.
    Never raises on missing data: the outcome is ``undecidable`` with the reason.
    """
    used: list[tuple[str, pd.DataFrame]] = []
    ctx = _Ctx(
        paper,
        figure,
        figures,
        dict(profiles or {}),
        {k: dict(v) for k, v in (override or {}).items()},
        {},
        used,
        computed,
    )
    out = _evaluate(check, ctx)
    out.rows = used
    return out


def numbers_text(
    numbers: tuple[Number, ...],
    paper: str,
    figure: str,
    figures: Mapping[tuple[str, str], FigureResults],
    profiles: Mapping[str, str | None],
    computed: pd.DataFrame | None,
) -> str:
    """``label = value; …`` for a claim's decisive numbers (``—`` where one cannot be read)."""
    out = []
    for num in numbers:
        ctx = _Ctx(paper, figure, figures, dict(profiles), {}, {}, [], computed)
        try:
            out.append(f"{num.label} = {_num(_scalar(num.selector, ctx))}")
        except _Undecidable as e:
            out.append(f"{num.label} = — ({e})")
    return "; ".join(out)
