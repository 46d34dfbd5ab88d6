"""The claims' vocabulary: checks (predicates over a figure's tables), claims, and their parser.

A claim is written once in a reference file with the sentence it comes from and a ``check``: a
predicate in a small vocabulary (:data:`CHECK_KINDS`: ``compare``, ``monotone``, ``crossover``,
``trend``, ``stat``, ``all_of``), evaluated by code (nothing is ``eval``'d;
:mod:`~privrepro.report.check_evaluation`). A check reads *series* from a figure's tidy table
(rows chosen by ``where``, a value column ``y`` against an ``x`` column) and compares them.
``decided_by`` lists the computations a claim is decided by; other plausible ``readings`` are
shown beside the verdict, never deciding it; ``numbers`` name the decisive values. The
vocabulary, key by key, is in ``src/privrepro/report/references/README.md``; the verdicts in
``docs/report.md``. :func:`parse_check` reads a check and names the first problem by its key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from privrepro.report.derivation_entries import Computation
from privrepro.report.reference_schema import Spec, check_schema, is_number
from privrepro.report.row_selection import where_text

__all__ = [
    "AGGS",
    "CHECK_KINDS",
    "CHECK_SCHEMAS",
    "COMBINES",
    "COMPUTATION_KINDS",
    "REDUCERS",
    "RELATIONS",
    "SCOPES",
    "SELECTOR_SCHEMA",
    "STAT_SCHEMA",
    "Check",
    "Claim",
    "Decider",
    "Fail",
    "Number",
    "Reading",
    "Selector",
    "Stat",
    "parse_check",
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
_PAIR: Spec = {
    "lhs": {"type": "object", "required": True},
    "rhs": {"type": "object", "required": True},
}
_RELATION: Spec = {
    "relation": {"type": "string", "required": True, "choices": RELATIONS},
    "margin": {"type": "number"},
    "tolerance": {"type": "number", "min": 0.0},
    "measure": {"type": "string", "choices": ("difference", "ratio")},
}
CHECK_SCHEMAS: dict[str, Spec] = {
    "compare": {
        **_COMMON,
        **_PAIR,
        **_RELATION,
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
        **_PAIR,
        "low": {"type": "string", "required": True, "choices": ("<", ">")},
        "high": {"type": "string", "required": True, "choices": ("<", ">")},
    },
    "trend": {**_COMMON, "series": {"type": "object", "required": True}, **_RELATION},
    "stat": {**_COMMON, **_PAIR, **_RELATION},
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
