"""The papers' qualitative claims as predicates over the figures' tables, and their verdicts.

A claim is written once in a reference file with the sentence it comes from and a ``check``: a
predicate in a small vocabulary, evaluated by code (nothing is ``eval``'d). A check reads
*series* from a figure's tidy table — rows chosen by ``where``, a value column ``y`` against an
``x`` column — and compares them:

``compare``
    ``lhs − rhs`` (or ``lhs / rhs`` with ``measure: ratio``) against ``margin`` by ``relation``, at
    every x (``quantifier: all``) or some x (``any``) in ``range``. ``rhs`` may be a constant.
``monotone``
    a series is increasing or decreasing in x (``strict``, or allowing ``slack`` per step).
``crossover``
    ``lhs − rhs`` has one sign at the smallest x and the other at the largest (``low``, ``high``).
``trend``
    the last value against the first (``y(x_max) − y(x_min)`` or their ratio) by ``relation``.
``stat``
    two statistics compared: each a series reduced (``mean``, ``median``, ``min``, ``max``,
    ``first``, ``last``, ``increase`` = last − first, ``range`` = max − min, ``max_over_min``,
    ``last_over_first``, ``argmin``, ``argmax``), a single value, a combination of two series
    (``difference``, ``ratio``, ``relative_gap`` = (a − b)/a) reduced, or a constant.
``all_of``
    every part holds.

Relations: ``>``, ``>=``, ``<``, ``<=`` and ``~=`` (within ``tolerance``). ``for_each: [cols]``
evaluates a check for every value combination of the columns (each group must hold).

``decided_by`` lists the computations a claim is decided by (the paper's formulas, the harness's
exact accounting, a measurement), each a ``where`` added to the selectors of a role (``lhs``,
``rhs``, ``series``, ``lhs.0``/``lhs.1`` for a combination, or a selector's ``name``); a claim is
*contradicted* when any of them contradicts it, and the verdict says which.

**Readings.** The check and its ``decided_by`` are the claim's *deciding* reading: its
``interpretation`` says what quantity, at which design, with which quantifier ("can": somewhere;
"always": everywhere) and which gap (absolute or relative), and ``decides_because`` why this
reading is the faithful one. Other plausible ``readings`` (each its own text, optionally its own
check and computations, and ``why_not``) are evaluated too and shown beside the verdict, never
deciding it. ``numbers`` name the decisive values (the paper's formula, exact at the paper's
design, exact at the best design …) read from the tables, shown side by side. Every outcome
carries its decisive numbers (the first failing point, or the tightest point that holds).

A claim the paper makes in theory that the harness can only illustrate, or whose computation
holds by construction (``scope: illustration``), is evaluated and shown, never counted. A claim decidable without any figure
(``computed``: a project function returning a table) reads its selectors with ``table:
computed`` from that table.

Verdicts: **reproduced** (every computation holds), **contradicted**, or **not comparable** with a
reason (not run, stand-in data, profile, missing rows or columns, illustration). On stand-in data
the outcome is still computed and shown ("on the stand-in the claim fails") but never counted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from privrepro.report.derivation_entries import Computation, run_computation
from privrepro.report.reference_schema import Spec, check_schema, is_number
from privrepro.report.results import FigureResults, make_target
from privrepro.report.row_selection import (
    choose_profile,
    data_labels,
    data_problem,
    fmt_key,
    profiles_of,
    rows_of_profile,
    rows_where,
    where_text,
)

__all__ = [
    "CHECK_KINDS",
    "CLAIM_COLUMNS",
    "CLAIM_VERDICTS",
    "COMPUTATION_KINDS",
    "RELATIONS",
    "SCOPES",
    "Check",
    "Claim",
    "Decider",
    "Number",
    "Outcome",
    "Reading",
    "Selector",
    "Stat",
    "build_claim_card",
    "claim_readings",
    "evaluate_check",
    "parse_check",
    "score_claim",
]

CHECK_KINDS = ("compare", "monotone", "crossover", "trend", "stat", "all_of")
RELATIONS = (">", ">=", "<", "<=", "~=")
AGGS = ("only", "mean", "median", "min", "max", "std", "count")
REDUCERS = (
    "value",
    "mean",
    "median",
    "min",
    "max",
    "first",
    "last",
    "increase",
    "range",
    "argmin",
    "argmax",
    "max_over_min",
    "last_over_first",
)
COMBINES = ("difference", "ratio", "relative_gap")
#: What decided a claim: the paper's own formulas as the harness computes them, the harness's
#: exact computation (exact accounting, exact divergences), or a measurement (trained models,
#: Monte Carlo, timings).
COMPUTATION_KINDS = ("paper-formula", "exact", "measured")
CLAIM_VERDICTS = ("reproduced", "contradicted", "not comparable")
#: What the harness's computation is to a claim: a test of it, or an illustration (a statement the
#: paper makes in theory only, or one the computation satisfies by construction: shown, never
#: counted).
SCOPES = ("test", "illustration")

SELECTOR_SCHEMA: Spec = {
    "name": {"type": "id"},
    "figure": {"type": "string"},
    "table": {"type": "string", "choices": ("main", "summary", "computed")},
    "where": {"type": "mapping"},
    "y": {"type": "string"},
    "x": {"type": "string"},
    "agg": {"type": "string", "choices": AGGS},
}
STAT_SCHEMA: Spec = {
    **SELECTOR_SCHEMA,
    "value": {"type": "number"},
    "reduce": {"type": "string", "choices": REDUCERS},
    "combine": {"type": "string", "choices": COMBINES},
    "of": {"type": "list"},
}
_COMMON: Spec = {
    "kind": {"type": "string", "required": True, "choices": CHECK_KINDS},
    "for_each": {"type": "list", "items": "string"},
    "x": {"type": "string"},
    "range": {"type": "object", "schema": {"min": {"type": "number"}, "max": {"type": "number"}}},
}
CHECK_SCHEMAS: dict[str, Spec] = {
    "compare": {
        **_COMMON,
        "lhs": {"type": "object", "required": True},
        "rhs": {"type": "object", "required": True},
        "relation": {"type": "string", "required": True, "choices": RELATIONS},
        "margin": {"type": "number"},
        "tolerance": {"type": "number", "min": 0.0},
        "measure": {"type": "string", "choices": ("difference", "ratio")},
        "quantifier": {"type": "string", "choices": ("all", "any")},
    },
    "monotone": {
        **_COMMON,
        "series": {"type": "object", "required": True},
        "direction": {"type": "string", "required": True, "choices": ("increasing", "decreasing")},
        "strict": {"type": "any"},
        "slack": {"type": "number", "min": 0.0},
    },
    "crossover": {
        **_COMMON,
        "lhs": {"type": "object", "required": True},
        "rhs": {"type": "object", "required": True},
        "low": {"type": "string", "required": True, "choices": ("<", ">")},
        "high": {"type": "string", "required": True, "choices": ("<", ">")},
    },
    "trend": {
        **_COMMON,
        "series": {"type": "object", "required": True},
        "relation": {"type": "string", "required": True, "choices": RELATIONS},
        "margin": {"type": "number"},
        "tolerance": {"type": "number", "min": 0.0},
        "measure": {"type": "string", "choices": ("difference", "ratio")},
    },
    "stat": {
        **_COMMON,
        "lhs": {"type": "object", "required": True},
        "rhs": {"type": "object", "required": True},
        "relation": {"type": "string", "required": True, "choices": RELATIONS},
        "margin": {"type": "number"},
        "tolerance": {"type": "number", "min": 0.0},
        "measure": {"type": "string", "choices": ("difference", "ratio")},
    },
    "all_of": {**_COMMON, "parts": {"type": "list", "required": True}},
}

Fail = Callable[[str, str], None]


# --------------------------------------------------------------------------- the vocabulary


@dataclass(frozen=True)
class Selector:
    """Rows of a figure's table (``where``), a value column ``y``, and optionally an ``x``.

    ``agg`` turns the rows at one x (or all rows, without x) into one value: ``only`` (they must
    hold one distinct value), ``mean``, ``median``, ``min``, ``max``, ``std``, ``count``.
    """

    role: str
    y: str
    where: dict[str, Any] = field(default_factory=dict)
    x: str | None = None
    figure: str | None = None
    table: str = "main"
    agg: str = "only"

    def text(self) -> str:
        """``accuracy[series=sll_output]``: the selector in words."""
        fig = f"{self.figure}:" if self.figure else ""
        sel = f"[{where_text(self.where)}]" if self.where else ""
        agg = f" ({self.agg})" if self.agg != "only" else ""
        return f"{fig}{self.y}{sel}{agg}"


@dataclass(frozen=True)
class Stat:
    """One side of a ``stat`` check: a constant, a value, or a (combined) series reduced."""

    role: str
    value: float | None = None
    selector: Selector | None = None
    combine: str | None = None
    of: tuple[Selector, ...] = ()
    reduce: str = "value"

    def text(self) -> str:
        """The statistic in words."""
        if self.value is not None:
            return f"{self.value:g}"
        if self.combine:
            inner = f"{self.combine}({', '.join(s.text() for s in self.of)})"
        else:
            assert self.selector is not None
            inner = self.selector.text()
        return inner if self.reduce == "value" else f"{self.reduce} of {inner}"


@dataclass(frozen=True)
class Check:
    """A predicate of one of :data:`CHECK_KINDS` (the fields a kind does not use stay unset)."""

    kind: str
    x: str | None = None
    for_each: tuple[str, ...] = ()
    range: tuple[float | None, float | None] = (None, None)
    lhs: Selector | None = None
    rhs: Selector | None = None
    rhs_value: float | None = None
    series: Selector | None = None
    stat_lhs: Stat | None = None
    stat_rhs: Stat | None = None
    relation: str = ">"
    margin: float = 0.0
    tolerance: float = 0.0
    on: str = "difference"
    quantifier: str = "all"
    direction: str = "increasing"
    strict: bool = False
    slack: float = 0.0
    low: str = "<"
    high: str = ">"
    parts: tuple[Check, ...] = ()

    def selectors(self) -> list[Selector]:
        """Every selector of the check (parts included)."""
        out = [s for s in (self.lhs, self.rhs, self.series) if s is not None]
        for st in (self.stat_lhs, self.stat_rhs):
            if st is not None:
                out += [s for s in (st.selector, *st.of) if s is not None]
        for p in self.parts:
            out += p.selectors()
        return out


@dataclass(frozen=True)
class Decider:
    """A computation a claim is decided by: extra ``where`` per selector role."""

    label: str
    kind: str | None = None
    where: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """Another plausible reading of a claim: its text, its predicate (default: the claim's), the
    computations it is evaluated by (default: the claim's) and why it does not decide."""

    text: str
    check: Check | None = None
    decided_by: tuple[Decider, ...] = ()
    why_not: str | None = None


@dataclass(frozen=True)
class Number:
    """A decisive number of a claim: a value read from a table (``selector``), with a label."""

    label: str
    selector: Selector


@dataclass(frozen=True)
class Claim:
    """A qualitative claim of a paper, the sentence it comes from, and its predicate.

    ``check`` and ``decided_by`` are the deciding reading (``interpretation``, and
    ``decides_because`` why); ``readings`` the other plausible ones; ``numbers`` the decisive
    values; ``scope`` ``illustration`` where the harness only illustrates a theoretical
    statement; ``computed`` a project function whose table the ``computed`` selectors read.
    """

    id: str
    paper: str
    figure: str
    claim: str
    quote: str
    where: str
    check: Check
    decided_by: tuple[Decider, ...] = ()
    profiles: tuple[str, ...] | None = None
    interpretation: str | None = None
    note: str | None = None
    file: str = ""
    readings: tuple[Reading, ...] = ()
    decides_because: str | None = None
    numbers: tuple[Number, ...] = ()
    scope: str = "test"
    computed: Computation | None = None


# --------------------------------------------------------------------------- parsing


def _selector(raw: Any, role: str, x: str | None, fail: Fail, key: str) -> Selector:
    check_schema(raw, SELECTOR_SCHEMA, lambda k, p: fail(f"{key}.{k}", p))
    table = str(raw.get("table") or "main")
    y = raw.get("y") or ("value" if table == "summary" else None)
    if not y:
        fail(f"{key}.y", "is required (the column holding the values)")
    return Selector(
        role=str(raw["name"]) if raw.get("name") else role,
        y=str(y),
        where=dict(raw.get("where") or {}),
        x=str(raw["x"]) if raw.get("x") else x,
        figure=str(raw["figure"]) if raw.get("figure") else None,
        table=table,
        agg=str(raw.get("agg") or "only"),
    )


def _stat(raw: Any, role: str, x: str | None, fail: Fail, key: str) -> Stat:
    check_schema(raw, STAT_SCHEMA, lambda k, p: fail(f"{key}.{k}", p))
    if raw.get("value") is not None:
        if len(raw) != 1:
            fail(f"{key}.value", "a constant takes no other keys")
        return Stat(role, value=float(raw["value"]))
    reduce = str(raw.get("reduce") or "value")
    if raw.get("combine"):
        of = raw.get("of")
        if not isinstance(of, list) or len(of) != 2:
            fail(f"{key}.of", "combine needs `of`: a list of two series")
        parts = tuple(
            _selector(s, f"{role}.{i}", x, fail, f"{key}.of[{i}]") for i, s in enumerate(of)
        )
        if any(p.x is None for p in parts):
            fail(f"{key}.of", "combined series need an x (the check's or their own)")
        if reduce == "value":
            fail(f"{key}.reduce", "a combined series needs a reduction (mean, max, ...)")
        return Stat(role, combine=str(raw["combine"]), of=parts, reduce=reduce)
    sel_raw = {k: v for k, v in raw.items() if k in SELECTOR_SCHEMA}
    selector = _selector(sel_raw, role, x if reduce != "value" else None, fail, key)
    if reduce != "value" and selector.x is None:
        fail(f"{key}.reduce", f"= {reduce!r} reduces a series: give x")
    return Stat(role, selector=selector, reduce=reduce)


def parse_check(raw: Any, fail: Fail, key: str = "check") -> Check:
    """A :class:`Check` from its mapping; ``fail(key, problem)`` names the first problem."""
    if not isinstance(raw, Mapping):
        fail(key, "must be a mapping with a kind")
    kind = raw.get("kind")
    if kind not in CHECK_SCHEMAS:
        fail(f"{key}.kind", f"= {kind!r}: must be one of {list(CHECK_KINDS)}")
    check_schema(raw, CHECK_SCHEMAS[str(kind)], lambda k, p: fail(f"{key}.{k}", p))
    x = str(raw["x"]) if raw.get("x") else None
    rng = raw.get("range") or {}
    base: dict[str, Any] = {
        "kind": kind,
        "x": x,
        "for_each": tuple(raw.get("for_each") or ()),
        "range": (rng.get("min"), rng.get("max")),
    }
    for k in ("relation", "quantifier", "direction", "low", "high"):
        if raw.get(k) is not None:
            base[k] = str(raw[k])
    if raw.get("measure") is not None:
        base["on"] = str(raw["measure"])
    for k in ("margin", "tolerance", "slack"):
        if raw.get(k) is not None:
            base[k] = float(raw[k])
    if raw.get("strict") is not None:
        if not isinstance(raw["strict"], bool):
            fail(f"{key}.strict", f"= {raw['strict']!r}: must be true or false")
        base["strict"] = bool(raw["strict"])
    if raw.get("relation") == "~=" and raw.get("tolerance") is None:
        fail(f"{key}.tolerance", "is required with relation ~= (how close is equal)")
    if kind == "all_of":
        parts = raw["parts"]
        if not parts:
            fail(f"{key}.parts", "must list at least one check")
        return Check(
            **base,
            parts=tuple(parse_check(p, fail, f"{key}.parts[{i}]") for i, p in enumerate(parts)),
        )
    if kind == "stat":
        return Check(
            **base,
            stat_lhs=_stat(raw["lhs"], "lhs", x, fail, f"{key}.lhs"),
            stat_rhs=_stat(raw["rhs"], "rhs", x, fail, f"{key}.rhs"),
        )
    if kind in ("monotone", "trend"):
        series = _selector(raw["series"], "series", x, fail, f"{key}.series")
        if series.x is None:
            fail(f"{key}.x", f"is required for kind {kind}")
        return Check(**base, series=series)
    lhs = _selector(raw["lhs"], "lhs", x, fail, f"{key}.lhs")
    if lhs.x is None:
        fail(f"{key}.x", f"is required for kind {kind}")
    rhs_raw = raw["rhs"]
    if isinstance(rhs_raw, Mapping) and set(rhs_raw) == {"value"} and kind == "compare":
        if not is_number(rhs_raw["value"]):
            fail(f"{key}.rhs.value", f"= {rhs_raw['value']!r}: must be a number")
        return Check(**base, lhs=lhs, rhs_value=float(rhs_raw["value"]))
    return Check(**base, lhs=lhs, rhs=_selector(rhs_raw, "rhs", x, fail, f"{key}.rhs"))


# --------------------------------------------------------------------------- evaluation


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


# --------------------------------------------------------------------------- scoring

CLAIM_COLUMNS = [
    "id",
    "paper",
    "figure",
    "claim",
    "quote",
    "source",
    "interpretation",
    "decides_because",
    "scope",
    "profile",
    "verdict",
    "decided_by",
    "decided_kind",
    "outcome",
    "numbers",
    "readings",
    "detail",
    "why",
    "code",
    "data",
    "file",
]
"""The claims scorecard. ``interpretation``: the deciding reading; ``numbers``: the decisive
values (``label = value; …``); ``readings``: a JSON list, one entry per (reading, computation):
``reading``, ``decides`` (the deciding reading or another), ``computation``, ``kind``,
``outcome`` (holds / fails / undecidable), ``numbers`` and ``why_not``; ``detail``: the full
predicate trace of the deciding computations."""


def _figures_of(claim: Claim) -> list[str]:
    checks = [claim.check, *(r.check for r in claim.readings if r.check is not None)]
    sel = [s for c in checks for s in c.selectors() if s.table != "computed"]
    return list(dict.fromkeys([claim.figure, *(s.figure or claim.figure for s in sel)]))


def _computed_table(claim: Claim) -> tuple[pd.DataFrame | None, str | None]:
    """The claim's computed table, or why there is none."""
    if claim.computed is None:
        return None, None
    res = run_computation(claim.computed)
    if res.error:
        return None, res.error
    if res.table is None:
        return None, f"{claim.computed.call_text()} gave a number, not a table"
    return res.table, None


def _state(outcomes: Sequence[Outcome]) -> str:
    states = [o.state for o in outcomes]
    return "fails" if "fails" in states else "holds" if set(states) == {"holds"} else "undecidable"


def _numbers_text(
    claim: Claim,
    figures: Mapping[tuple[str, str], FigureResults],
    profiles: Mapping[str, str | None],
    computed: pd.DataFrame | None,
) -> str:
    """``label = value; …`` for the claim's decisive numbers (``—`` where one cannot be read)."""
    out = []
    for num in claim.numbers:
        ctx = _Ctx(claim.paper, claim.figure, figures, dict(profiles), {}, {}, [], computed)
        try:
            out.append(f"{num.label} = {_num(_scalar(num.selector, ctx))}")
        except _Undecidable as e:
            out.append(f"{num.label} = — ({e})")
    return "; ".join(out)


def score_claim(claim: Claim, figures: Mapping[tuple[str, str], FigureResults]) -> dict[str, Any]:
    """One row of the claims scorecard (:data:`CLAIM_COLUMNS`)."""
    row: dict[str, Any] = {
        "id": claim.id,
        "paper": claim.paper,
        "figure": claim.figure,
        "claim": claim.claim,
        "quote": claim.quote,
        "source": claim.where,
        "interpretation": claim.interpretation or "",
        "decides_because": claim.decides_because or "",
        "scope": claim.scope,
        "profile": "",
        "verdict": "not comparable",
        "decided_by": "",
        "decided_kind": "",
        "outcome": "",
        "numbers": "",
        "readings": "[]",
        "detail": "",
        "why": "",
        "code": "",
        "data": "",
        "file": claim.file,
    }
    computed, computed_error = _computed_table(claim)
    if computed_error:
        row.update(why=f"the computed table does not run: {computed_error}", code="undecidable")
        return row
    names = _figures_of(claim) if claim.computed is None or _uses_figures(claim) else []
    profiles: dict[str, str | None] = {}
    profile_ok = True
    for name in names:
        fr = figures.get((claim.paper, name))
        if fr is not None and fr.error:
            row.update(why=f"results unreadable: {fr.error}", code="unreadable")
            return row
        if fr is not None and not fr.ran and fr.no_canonical:
            row.update(why=f"no canonical view: {fr.no_canonical}", code="no-canonical")
            return row
        if fr is None or not fr.ran:
            row.update(why=f"not run: `{make_target(claim.paper, name)}`", code="not-run")
            return row
        p, ok = choose_profile(profiles_of(fr), claim.profiles)
        profiles[name] = p
        profile_ok &= ok
    row["profile"] = ",".join(sorted({p for p in profiles.values() if p}))

    def run(check: Check, deciders: tuple[Decider, ...]) -> list[tuple[Decider, Outcome]]:
        ds = deciders or (Decider(label="the figure's table"),)
        return [
            (
                d,
                evaluate_check(
                    check, figures, claim.paper, claim.figure, profiles, d.where, computed
                ),
            )
            for d in ds
        ]

    outcomes = run(claim.check, claim.decided_by)
    readings: list[dict[str, Any]] = [
        _reading_entry(claim.interpretation or claim.claim, True, d, o, None) for d, o in outcomes
    ]
    for r in claim.readings:
        for d, o in run(r.check or claim.check, r.decided_by or claim.decided_by):
            readings.append(_reading_entry(r.text, False, d, o, r.why_not))
    row["readings"] = json.dumps(readings, ensure_ascii=False)
    row["numbers"] = _numbers_text(claim, figures, profiles, computed)
    labels: set[str] = set()
    for _, out in outcomes:
        for name, rows in out.rows:
            if name == "computed":
                continue
            found = data_labels(figures[(claim.paper, name)], profiles.get(name), rows)
            labels |= set(found or [])
    row["data"] = "; ".join(sorted(labels))
    overall = _state([o for _, o in outcomes])
    row["outcome"] = overall
    row["detail"] = " · ".join(
        (f"{d.label}: " if claim.decided_by else "") + f"{o.state} — {o.detail}"
        for d, o in outcomes
    )
    problem = data_problem(sorted(labels)) if labels else None
    if not profile_ok:
        allowed = ", ".join(claim.profiles or ())
        row.update(
            why=f"made under profile {row['profile']!r}; the claim is decided under {allowed} "
            f"(here the claim {overall})",
            code="profile",
        )
        return row
    if problem:
        code, why = problem
        row.update(why=f"{why} (on it the claim {overall})", code=code)
        return row
    if claim.scope == "illustration" and overall != "undecidable":
        row.update(
            why="an illustration (a statement the paper makes in theory only, or one the "
            "computation satisfies by construction): shown, not counted "
            f"(on it the claim {overall})",
            code="illustration",
        )
        return row
    failing = [d for d, o in outcomes if o.state == "fails"]
    if failing:
        row.update(
            verdict="contradicted",
            decided_by="; ".join(d.label for d in failing),
            decided_kind="; ".join(sorted({d.kind or "" for d in failing} - {""})),
        )
        return row
    if overall == "holds":
        row.update(
            verdict="reproduced",
            decided_by="; ".join(d.label for d, _ in outcomes),
            decided_kind="; ".join(sorted({d.kind or "" for d, _ in outcomes} - {""})),
        )
        return row
    undecided = next(o for _, o in outcomes if o.state == "undecidable")
    row.update(why=f"cannot be decided: {undecided.detail}", code="undecidable")
    return row


def _uses_figures(claim: Claim) -> bool:
    checks = [claim.check, *(r.check for r in claim.readings if r.check is not None)]
    sel = [s for c in checks for s in c.selectors()] + [n.selector for n in claim.numbers]
    return any(s.table != "computed" for s in sel)


def _reading_entry(
    text: str, decides: bool, d: Decider, o: Outcome, why_not: str | None
) -> dict[str, Any]:
    return {
        "reading": text,
        "decides": decides,
        "computation": d.label,
        "kind": d.kind or "",
        "outcome": o.state,
        "numbers": o.numbers or o.detail,
        "why_not": why_not or "",
    }


def claim_readings(row: Mapping[Any, Any]) -> list[dict[str, Any]]:
    """The ``readings`` of a scorecard row as a list (the CSV holds them as JSON)."""
    raw = row.get("readings")
    if not isinstance(raw, str) or not raw.strip():
        return []
    try:
        out = json.loads(raw)
    except json.JSONDecodeError:
        return []
    return [r for r in out if isinstance(r, dict)] if isinstance(out, list) else []


def build_claim_card(
    claims: Sequence[Claim], figures: Mapping[tuple[str, str], FigureResults]
) -> pd.DataFrame:
    """One row per claim (:data:`CLAIM_COLUMNS`), in reference-file order."""
    return pd.DataFrame([score_claim(c, figures) for c in claims], columns=CLAIM_COLUMNS)
