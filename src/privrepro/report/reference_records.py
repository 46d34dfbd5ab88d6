"""The records of the reference files (values, claims, errata) and the schema each entry is
checked against (:mod:`privrepro.report.reference_schema`'s language); the files are read by
:mod:`privrepro.report.references`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privrepro.report.claim_checks import COMPUTATION_KINDS, SCOPES, SELECTOR_SCHEMA, Claim
from privrepro.report.derivation_entries import COMPUTATION_SCHEMA, Computation
from privrepro.report.reference_schema import Spec

__all__ = [
    "CLAIM_SCHEMA",
    "ERRATUM_SCHEMA",
    "REFERENCE_CLASSES",
    "SOURCE_KINDS",
    "VALUE_SCHEMA",
    "Erratum",
    "Lookup",
    "Match",
    "ReferenceError",
    "ReferenceSet",
    "ReferenceValue",
    "Source",
    "Tolerance",
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
