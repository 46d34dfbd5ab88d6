"""Reference values, claims and errata: what each paper (or its authors' code) reports, as data.

Each paper has one or more files ``references/<paper>.yaml`` or ``references/<paper>-<part>.yaml``
(format: ``docs/adding-a-figure.md``, "Reference values"; schema: ``references/README.md``).
:func:`load_references` reads every such file, checks each entry against :data:`VALUE_SCHEMA`,
:data:`CLAIM_SCHEMA` and :data:`ERRATUM_SCHEMA`, and returns typed records.

More in ``docs/modules.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from privrepro.report.claim_checks import (
    COMPUTATION_KINDS,
    SCOPES,
    SELECTOR_SCHEMA,
    Claim,
    Decider,
    Number,
    Reading,
    Selector,
    parse_check,
)
from privrepro.report.derivation_entries import COMPUTATION_SCHEMA, Computation, parse_computation
from privrepro.report.reference_schema import Spec, check_schema

__all__ = [
    "CLAIM_SCHEMA",
    "ERRATUM_SCHEMA",
    "REFERENCE_CLASSES",
    "SOURCE_KINDS",
    "VALUE_SCHEMA",
    "Claim",
    "Erratum",
    "Lookup",
    "Match",
    "ReferenceError",
    "ReferenceSet",
    "ReferenceValue",
    "Source",
    "Tolerance",
    "default_references_dir",
    "load_reference_file",
    "load_references",
]

#: How a reference value was obtained: printed in the paper's text or a table; read off a plot;
#: taken from the authors' notebook or code; derived by the project from printed numbers.
SOURCE_KINDS = ("printed", "read-off-plot", "notebook", "derived")
#: The two kinds of reference: what the paper (or its authors' artefact) printed, and what the
#: project derived from the paper's formulas.
REFERENCE_CLASSES = ("printed", "derived")
#: Which results table a value is matched in: the ``summarize`` rows or the figure's main table.
MATCH_TABLES = ("summary", "main")
#: How several matched rows become one reproduced value (``only``: exactly one distinct value).
REDUCERS = ("only", "mean", "median", "min", "max")


class ReferenceError(ValueError):
    """A malformed reference file: names the file, the entry (index and id) and the key."""

    def __init__(self, file: str, entry: str, key: str, problem: str) -> None:
        self.file, self.entry, self.key, self.problem = file, entry, key, problem
        where = f"{entry}: " if entry else ""
        keytxt = f"{key}: " if key else ""
        super().__init__(f"{file}: {where}{keytxt}{problem}")


# --------------------------------------------------------------------------- schema

TOLERANCE_SCHEMA: Spec = {
    "abs": {"type": "number", "min": 0.0},
    "rel": {"type": "number", "min": 0.0},
    "reason": {"type": "string", "required": True},
}
SOURCE_SCHEMA: Spec = {
    "where": {"type": "string", "required": True},
    "kind": {"type": "string", "required": True, "choices": SOURCE_KINDS},
    "page": {"type": ("number", "string")},
    "equation": {"type": "string"},
    "file": {"type": "string"},
    "note": {"type": "string"},
}
MATCH_SCHEMA: Spec = {
    "table": {"type": "string", "required": True, "choices": MATCH_TABLES},
    "metric": {"type": "string"},
    "column": {"type": "string"},
    "where": {"type": "mapping"},
    "reduce": {"type": "string", "choices": REDUCERS},
}
VALUE_SCHEMA: Spec = {
    "id": {"type": "id", "required": True},
    "figure": {"type": "string", "required": True},
    "quantity": {"type": "string", "required": True},
    "value": {"type": "number", "required": True},
    "source": {"type": "object", "required": True, "schema": SOURCE_SCHEMA},
    "match": {"type": "object", "required": True, "schema": MATCH_SCHEMA},
    "tolerance": {"type": "object", "schema": TOLERANCE_SCHEMA},
    "profiles": {"type": "list", "items": "string"},
    "requires": {"type": "mapping"},
    "note": {"type": "string"},
    "derivation": {"type": "object", "schema": COMPUTATION_SCHEMA},
    "guarantee": {"type": "object", "schema": {**MATCH_SCHEMA, "label": {"type": "string"}}},
}
LOOKUP_SCHEMA: Spec = {
    "figure": {"type": "string", "required": True},
    "table": {"type": "string", "choices": MATCH_TABLES},
    "metric": {"type": "string"},
    "column": {"type": "string"},
    "where": {"type": "mapping"},
    "label": {"type": "string"},
}
ERRATUM_SCHEMA: Spec = {
    "id": {"type": "id", "required": True},
    "title": {"type": "string", "required": True},
    "detail": {"type": "string", "required": True},
    "figure": {"type": "string"},
    "source": {
        "type": "object",
        "schema": {**SOURCE_SCHEMA, "kind": {"type": "string", "choices": SOURCE_KINDS}},
    },
    "used": {"type": "string"},
    "evidence": {
        "type": "lookups",
        "schema": {**LOOKUP_SCHEMA, "figure": {"type": "string"}, **COMPUTATION_SCHEMA},
    },
}
CLAIM_SCHEMA: Spec = {
    "id": {"type": "id", "required": True},
    "figure": {"type": "string", "required": True},
    "claim": {"type": "string", "required": True},
    "quote": {"type": "string", "required": True},
    "source": {
        "type": "object",
        "required": True,
        "schema": {"where": {"type": "string", "required": True}},
    },
    "check": {"type": "object", "required": True},
    "decided_by": {"type": "list"},
    "profiles": {"type": "list", "items": "string"},
    "interpretation": {"type": "string", "required": True},
    "decides_because": {"type": "string"},
    "readings": {"type": "list"},
    "numbers": {"type": "list"},
    "scope": {"type": "string", "choices": SCOPES},
    "computed": {"type": "object", "schema": COMPUTATION_SCHEMA},
    "note": {"type": "string"},
}
READING_SCHEMA: Spec = {
    "reading": {"type": "string", "required": True},
    "check": {"type": "object"},
    "decided_by": {"type": "list"},
    "why_not": {"type": "string", "required": True},
}
NUMBER_SCHEMA: Spec = {"label": {"type": "string", "required": True}, **SELECTOR_SCHEMA}
DECIDER_SCHEMA: Spec = {
    "label": {"type": "string", "required": True},
    "kind": {"type": "string", "choices": COMPUTATION_KINDS},
    "where": {"type": "object"},
}
FILE_SCHEMA: Spec = {
    "paper": {"type": "string", "required": True},
    "citation": {"type": "string"},
    "values": {"type": "list"},
    "claims": {"type": "list"},
    "errata": {"type": "list"},
}


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Tolerance:
    """|reproduced − reference| ≤ abs + rel·|reference| (numpy.isclose's rule), with its reason."""

    abs: float = 0.0
    rel: float = 0.0
    reason: str = ""

    def allowed(self, reference: float) -> float:
        """The largest difference that still passes for ``reference``."""
        return self.abs + self.rel * abs(reference)

    def text(self) -> str:
        """A short human form: ``±0.01``, ``±5%``, ``±0.01 + 5%``."""
        parts = []
        if self.abs or not self.rel:
            parts.append(f"±{self.abs:.3g}")
        if self.rel:
            parts.append(f"{'' if parts else '±'}{100 * self.rel:.3g}%")
        return " + ".join(parts)


@dataclass(frozen=True)
class Source:
    """Where a number comes from: ``where`` (section, table, figure), ``kind`` (see SOURCE_KINDS)."""

    where: str
    kind: str | None = None
    page: str | None = None
    equation: str | None = None
    file: str | None = None
    note: str | None = None

    def text(self) -> str:
        """One line: ``Fig. 2 caption (printed), p. 7, eq. (4)``."""
        out = self.where
        if self.kind:
            out += f" ({self.kind})"
        if self.page:
            out += f", p. {self.page}"
        if self.equation:
            out += f", {self.equation}"
        if self.file:
            out += f", {self.file}"
        return out


@dataclass(frozen=True)
class Lookup:
    """A value in a figure's results: ``table`` summary (by ``metric``) or main (by ``column``).

    ``where`` selects rows by column values (floats compared with a relative 1e-9).
    """

    figure: str
    table: str = "summary"
    metric: str | None = None
    column: str | None = None
    where: dict[str, Any] = field(default_factory=dict)
    reduce: str = "only"
    label: str | None = None

    @property
    def value_column(self) -> str:
        """The column holding the value: ``value`` for summary rows, else ``column``."""
        return "value" if self.table == "summary" else str(self.column)


@dataclass(frozen=True)
class Match(Lookup):
    """How a reference value finds its reproduced value (a :class:`Lookup` with a reducer)."""


@dataclass(frozen=True)
class ReferenceValue:
    """One number the paper reports, matched to one reproduced value.

    Attributes:
        id: unique across all reference files.
        paper, figure: the figure whose results hold the reproduced value.
        quantity: what the number is, in words.
        value: the published number.
        source: where it is published and how it was obtained.
        match: where the reproduced value is found.
        tolerance: the allowed difference and its reason; ``None`` means not comparable.
        profiles: the profiles under which the comparison is meaningful (``None``: all).
        requires: settings the results must have been made with (``{dataset: cifar10}``): a
            parameter of the run (``params`` in its metadata, dotted keys for nested ones) or a
            column with one value; otherwise the value is not comparable (data not available).
        file: the reference file it was read from (for messages).
        guarantee: for a privacy parameter (an ε) computed by a paper's formula, where the exact
            value of the same mechanism is found: the value is a valid guarantee only if the
            exact one does not exceed it (the report flags it beside its tick otherwise).
    """

    id: str
    paper: str
    figure: str
    quantity: str
    value: float
    source: Source
    match: Match
    tolerance: Tolerance | None = None
    profiles: tuple[str, ...] | None = None
    requires: dict[str, Any] = field(default_factory=dict)
    note: str | None = None
    derivation: Computation | None = None
    file: str = ""
    guarantee: Lookup | None = None

    @property
    def reference_class(self) -> str:
        """``derived`` (computed by the project) or ``printed`` (the paper or its artefact)."""
        return "derived" if self.source.kind == "derived" else "printed"


@dataclass(frozen=True)
class Erratum:
    """An error or ambiguity the project found in a paper, with what the harness computed."""

    id: str
    paper: str
    title: str
    detail: str
    figure: str | None = None
    source: Source | None = None
    used: str | None = None
    evidence: tuple[Lookup | Computation, ...] = ()
    file: str = ""


@dataclass
class ReferenceSet:
    """All reference values, claims and errata, in file order; ``files`` lists what was read;
    ``citations`` cites each paper (arXiv id or venue)."""

    values: list[ReferenceValue] = field(default_factory=list)
    errata: list[Erratum] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    citations: dict[str, str] = field(default_factory=dict)

    def papers(self) -> list[str]:
        """The papers that have reference values, claims or errata, in first-seen order."""
        seen: dict[str, None] = {}
        for paper in [*(v.paper for v in self.values), *(c.paper for c in self.claims)]:
            seen.setdefault(paper)
        for e in self.errata:
            seen.setdefault(e.paper)
        return list(seen)

    def for_figure(self, paper: str, figure: str) -> list[ReferenceValue]:
        """The reference values matched in ``paper``'s ``figure``."""
        return [v for v in self.values if v.paper == paper and v.figure == figure]


# --------------------------------------------------------------------------- loading


def default_references_dir() -> Path:
    """The ``references/`` folder shipped with the package."""
    return Path(__file__).resolve().parent / "references"


def _str(x: Any) -> str | None:
    return None if x is None else str(x)


def _source(raw: Mapping[str, Any]) -> Source:
    return Source(
        where=str(raw["where"]),
        kind=_str(raw.get("kind")),
        page=_str(raw.get("page")),
        equation=_str(raw.get("equation")),
        file=_str(raw.get("file")),
        note=_str(raw.get("note")),
    )


def _lookup_fields(raw: Mapping[str, Any], figure: str, fail: Any, prefix: str) -> dict[str, Any]:
    table = raw.get("table") or (
        "main" if raw.get("column") and not raw.get("metric") else "summary"
    )
    if table == "summary" and not raw.get("metric"):
        fail(prefix + "metric", "is required when table is summary (the summarize row's name)")
    if table == "main" and not raw.get("column"):
        fail(prefix + "column", "is required when table is main (the column holding the value)")
    return {
        "figure": figure,
        "table": table,
        "metric": _str(raw.get("metric")),
        "column": _str(raw.get("column")),
        "where": dict(raw.get("where") or {}),
    }


def _parse_value(raw: Mapping[str, Any], paper: str, file: str, fail: Any) -> ReferenceValue:
    check_schema(raw, VALUE_SCHEMA, fail)
    m = raw["match"]
    match = Match(
        **_lookup_fields(m, str(raw["figure"]), fail, "match."),
        reduce=str(m.get("reduce") or "only"),
    )
    tol = raw.get("tolerance")
    tolerance = None
    if tol is not None:
        if tol.get("abs") is None and tol.get("rel") is None:
            fail("tolerance", "needs abs, rel or both (and a reason)")
        tolerance = Tolerance(
            abs=float(tol.get("abs") or 0.0),
            rel=float(tol.get("rel") or 0.0),
            reason=str(tol["reason"]),
        )
    profiles = raw.get("profiles")
    derivation = None
    if raw.get("derivation") is not None:
        derivation = parse_computation(
            raw["derivation"], lambda k, problem: fail(f"derivation.{k}", problem)
        )
    if raw["source"].get("kind") == "derived" and derivation is None:
        fail(
            "derivation",
            "is required for a derived value: the formula or the privrepro function that "
            "computes it",
        )
    guarantee = None
    if raw.get("guarantee") is not None:
        g = raw["guarantee"]
        guarantee = Lookup(
            **_lookup_fields(g, str(raw["figure"]), fail, "guarantee."),
            label=_str(g.get("label")),
        )
    return ReferenceValue(
        guarantee=guarantee,
        id=str(raw["id"]),
        paper=paper,
        figure=str(raw["figure"]),
        quantity=str(raw["quantity"]),
        value=raw["value"],
        source=_source(raw["source"]),
        match=match,
        tolerance=tolerance,
        profiles=None if profiles is None else tuple(str(p) for p in profiles),
        requires=dict(raw.get("requires") or {}),
        note=_str(raw.get("note")),
        derivation=derivation,
        file=file,
    )


def _parse_decider(raw: Any, fail: Any, key: str) -> Decider:
    check_schema(raw, DECIDER_SCHEMA, lambda k, p: fail(f"{key}.{k}", p))
    where: dict[str, dict[str, Any]] = {}
    for role, extra in (raw.get("where") or {}).items():
        if not isinstance(extra, Mapping):
            fail(f"{key}.where.{role}", "must map a selector role (lhs, rhs, series) to a where")
        where[str(role)] = dict(extra)
    return Decider(label=str(raw["label"]), kind=_str(raw.get("kind")), where=where)


def _parse_deciders(raw: Any, roles: set[str], fail: Any, key: str) -> tuple[Decider, ...]:
    deciders = []
    for i, d in enumerate(raw or []):
        decider = _parse_decider(d, fail, f"{key}[{i}]")
        unknown = set(decider.where) - roles
        if unknown:
            fail(
                f"{key}[{i}].where.{sorted(unknown)[0]}",
                f"no selector has this role; the check's roles are {sorted(roles)}",
            )
        deciders.append(decider)
    return tuple(deciders)


def _roles(check: Any) -> set[str]:
    sel = check.selectors()
    return {s.role for s in sel} | {s.role.split(".")[0] for s in sel}


def _parse_claim(raw: Mapping[str, Any], paper: str, file: str, fail: Any) -> Claim:
    check_schema(raw, CLAIM_SCHEMA, fail)
    check = parse_check(raw["check"], fail)
    deciders = _parse_deciders(raw.get("decided_by"), _roles(check), fail, "decided_by")
    readings = []
    for i, r in enumerate(raw.get("readings") or []):
        key = f"readings[{i}]"
        check_schema(r, READING_SCHEMA, lambda k, p, _key=key: fail(f"{_key}.{k}", p))
        own = parse_check(r["check"], fail, f"{key}.check") if r.get("check") else None
        roles = _roles(own or check)
        readings.append(
            Reading(
                text=str(r["reading"]),
                check=own,
                decided_by=_parse_deciders(r.get("decided_by"), roles, fail, f"{key}.decided_by"),
                why_not=_str(r.get("why_not")),
            )
        )
    numbers = []
    for i, n in enumerate(raw.get("numbers") or []):
        key = f"numbers[{i}]"
        check_schema(n, NUMBER_SCHEMA, lambda k, p, _key=key: fail(f"{_key}.{k}", p))
        table = str(n.get("table") or "main")
        y = n.get("y") or ("value" if table == "summary" else None)
        if not y:
            fail(f"{key}.y", "is required (the column holding the value)")
        numbers.append(
            Number(
                label=str(n["label"]),
                selector=Selector(
                    role="number",
                    y=str(y),
                    where=dict(n.get("where") or {}),
                    figure=_str(n.get("figure")),
                    table=table,
                    agg=str(n.get("agg") or "only"),
                ),
            )
        )
    computed = None
    if raw.get("computed") is not None:
        computed = parse_computation(raw["computed"], lambda k, p: fail(f"computed.{k}", p))
        if computed.function is None:
            fail("computed.function", "is required: the project function computing the table")
    selectors = [s for c in (check, *(r.check for r in readings if r.check)) for s in c.selectors()]
    if any(s.table == "computed" for s in selectors) and computed is None:
        fail("computed", "is required: a selector reads `table: computed`")
    profiles = raw.get("profiles")
    return Claim(
        id=str(raw["id"]),
        paper=paper,
        figure=str(raw["figure"]),
        claim=str(raw["claim"]),
        quote=str(raw["quote"]),
        where=str(raw["source"]["where"]),
        check=check,
        decided_by=deciders,
        profiles=None if profiles is None else tuple(str(p) for p in profiles),
        interpretation=_str(raw.get("interpretation")),
        note=_str(raw.get("note")),
        file=file,
        readings=tuple(readings),
        decides_because=_str(raw.get("decides_because")),
        numbers=tuple(numbers),
        scope=str(raw.get("scope") or "test"),
        computed=computed,
    )


def _parse_erratum(raw: Mapping[str, Any], paper: str, file: str, fail: Any) -> Erratum:
    check_schema(raw, ERRATUM_SCHEMA, fail)
    ev = raw.get("evidence")
    items = [] if ev is None else ([ev] if isinstance(ev, Mapping) else list(ev))
    lookups: list[Lookup | Computation] = []
    for i, item in enumerate(items):
        prefix = "evidence." if isinstance(ev, Mapping) else f"evidence[{i}]."
        if item.get("function") or item.get("formula"):

            def item_fail(key: str, problem: str, _p: str = prefix) -> None:
                fail(_p + key, problem)

            lookups.append(parse_computation(item, item_fail))
            continue
        if not item.get("figure"):
            fail(prefix + "figure", "is required (or a function / formula computing the evidence)")
        lookups.append(
            Lookup(
                **_lookup_fields(item, str(item["figure"]), fail, prefix),
                label=_str(item.get("label")),
            )
        )
    src = raw.get("source")
    return Erratum(
        id=str(raw["id"]),
        paper=paper,
        title=str(raw["title"]),
        detail=str(raw["detail"]),
        figure=_str(raw.get("figure")),
        source=None if src is None else _source(src),
        used=_str(raw.get("used")),
        evidence=tuple(lookups),
        file=file,
    )


def load_reference_file(path: str | Path, label: str | None = None) -> ReferenceSet:
    """Read and validate one reference file (its values, claims, errata and citation).

    Args:
        path: the YAML file, named ``<paper>.yaml`` or ``<paper>-<part>.yaml``.
        label: how the file is named in errors (default: ``references/<name>``).

    Raises:
        ReferenceError: naming the file, the entry and the key of the first problem.
    """
    path = Path(path)
    name = label or f"references/{path.name}"

    def file_fail(key: str, problem: str) -> None:
        raise ReferenceError(name, "", key, problem)

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ReferenceError(name, "", "", f"not valid YAML: {e}") from e
    if raw is None:
        raw = {}
    check_schema(raw, FILE_SCHEMA, file_fail)
    paper = str(raw["paper"])
    stem_paper = path.stem.split("-", 1)[0]
    if stem_paper != paper:
        file_fail(
            "paper",
            f"= {paper!r}: must match the file name ({path.name} belongs to paper {stem_paper!r})",
        )

    def entries(section: str) -> list[tuple[Any, Any]]:
        out = []
        for i, entry in enumerate(raw.get(section) or []):
            eid = entry.get("id") if isinstance(entry, Mapping) else None
            label_i = f"{section}[{i}]" + (f" (id {eid})" if eid else "")

            def fail(key: str, problem: str, _label: str = label_i) -> None:
                raise ReferenceError(name, _label, key, problem)

            out.append((entry, fail))
        return out

    return ReferenceSet(
        values=[_parse_value(entry, paper, name, fail) for entry, fail in entries("values")],
        errata=[_parse_erratum(entry, paper, name, fail) for entry, fail in entries("errata")],
        files=[path],
        claims=[_parse_claim(entry, paper, name, fail) for entry, fail in entries("claims")],
        citations={paper: str(raw["citation"])} if raw.get("citation") else {},
    )


def load_references(directory: str | Path | None = None) -> ReferenceSet:
    """Read every ``<paper>*.yaml`` in ``directory`` (default: the shipped references).

    A missing folder or one with no files gives an empty set (the report then shows no
    comparisons). Ids must be unique across all files (values, claims and errata alike).

    Raises:
        ReferenceError: a malformed file or entry, or a duplicated id.
    """
    directory = default_references_dir() if directory is None else Path(directory)
    refs = ReferenceSet()
    if not directory.is_dir():
        return refs
    seen: dict[str, str] = {}
    paths = [*directory.glob("*.yaml"), *directory.glob("*.yml")]
    for path in sorted(paths, key=lambda p: p.stem.split("-", 1)):  # <paper> before <paper>-<part>
        one = load_reference_file(path)
        sections: list[tuple[str, list[Any]]] = [
            ("values", list(one.values)),
            ("claims", list(one.claims)),
            ("errata", list(one.errata)),
        ]
        for kind, items in sections:
            for item in items:
                if item.id in seen:
                    raise ReferenceError(
                        item.file,
                        f"{kind} (id {item.id})",
                        "id",
                        f"duplicate id; first defined in {seen[item.id]}",
                    )
                seen[item.id] = item.file
        refs.values.extend(one.values)
        refs.claims.extend(one.claims)
        refs.errata.extend(one.errata)
        refs.files.append(path)
        for paper, citation in one.citations.items():
            refs.citations.setdefault(paper, citation)
    return refs
