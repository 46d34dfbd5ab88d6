"""Reference values and errata: what each paper (or its authors' code) reports, as data.

Each paper has one or more files ``references/<paper>.yaml`` or ``references/<paper>-<part>.yaml``
(format: ``docs/adding-a-figure.md``, "Reference values"; schema: ``references/README.md``).
:func:`load_references` reads every such file, checks each entry against :data:`VALUE_SCHEMA` and
:data:`ERRATUM_SCHEMA`, and returns typed records. A malformed entry stops the load with a
:class:`ReferenceError` that names the file, the entry id and the key::

    references/cl.yaml: values[0] (id cl-fig2-largest-k-dropped): tolerance.abs = -1: must be >= 0
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "ERRATUM_SCHEMA",
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
    "default_references_dir",
    "load_reference_file",
    "load_references",
]

#: How a reference value was obtained: printed in the paper's text or a table; read off a plot;
#: taken from the authors' notebook or code; derived by the project from printed numbers.
SOURCE_KINDS = ("printed", "read-off-plot", "notebook", "derived")
#: Which results table a value is matched in: the ``summarize`` rows or the figure's main table.
MATCH_TABLES = ("summary", "main")
#: How several matched rows become one reproduced value (``only``: exactly one distinct value).
REDUCERS = ("only", "mean", "median", "min", "max")

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


class ReferenceError(ValueError):
    """A malformed reference file: names the file, the entry (index and id) and the key."""

    def __init__(self, file: str, entry: str, key: str, problem: str) -> None:
        self.file, self.entry, self.key, self.problem = file, entry, key, problem
        where = f"{entry}: " if entry else ""
        keytxt = f"{key}: " if key else ""
        super().__init__(f"{file}: {where}{keytxt}{problem}")


# --------------------------------------------------------------------------- schema
#
# A small JSON-schema-like description: for each key, the accepted types, whether it is required,
# and (for nested mappings) the schema of its keys. ``"number"`` is int or float (not bool),
# ``"scalar"`` is a number, string, bool or null, ``"mapping"`` a free mapping of scalars.

Spec = dict[str, Any]

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
    "evidence": {"type": "lookups", "schema": LOOKUP_SCHEMA},
}
FILE_SCHEMA: Spec = {
    "paper": {"type": "string", "required": True},
    "values": {"type": "list"},
    "errata": {"type": "list"},
}


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_scalar(x: Any) -> bool:
    return x is None or isinstance(x, (str, bool, int, float))


def _check_type(value: Any, kind: str) -> bool:
    if kind == "number":
        return _is_number(value) and not (isinstance(value, float) and math.isnan(value))
    if kind in ("string", "id"):
        return isinstance(value, str) and value.strip() != ""
    if kind in ("object", "mapping"):
        return isinstance(value, Mapping)
    if kind == "list":
        return isinstance(value, Sequence) and not isinstance(value, (str, bytes))
    if kind == "lookups":
        return isinstance(value, Mapping) or (
            isinstance(value, Sequence) and not isinstance(value, (str, bytes))
        )
    raise AssertionError(kind)


_TYPE_TEXT = {
    "number": "a number",
    "string": "a non-empty string",
    "id": "an id",
    "object": "a mapping",
    "mapping": "a mapping of column to value",
    "list": "a list",
    "lookups": "a mapping or a list of mappings",
}


def check_schema(obj: Any, schema: Spec, fail: Any, prefix: str = "") -> None:
    """Check ``obj`` (a mapping) against ``schema``; call ``fail(key, problem)`` on the first error.

    Unknown keys, missing required keys, wrong types, values outside ``choices`` and numbers
    below ``min`` are errors. Nested ``object`` keys are checked with their own ``schema``.
    """
    if not isinstance(obj, Mapping):
        fail(prefix.rstrip(".") or "(entry)", f"must be a mapping, got {type(obj).__name__}")
        return
    unknown = sorted(set(map(str, obj)) - set(schema))
    if unknown:
        fail(prefix + unknown[0], f"unknown key; allowed keys are {sorted(schema)}")
    for key, spec in schema.items():
        full = prefix + key
        if key not in obj or obj[key] is None:
            if spec.get("required"):
                fail(full, "is required")
            continue
        value = obj[key]
        kinds = spec["type"] if isinstance(spec["type"], tuple) else (spec["type"],)
        if not any(_check_type(value, k) for k in kinds):
            fail(full, f"= {value!r}: must be " + " or ".join(_TYPE_TEXT[k] for k in kinds))
        if "id" in kinds and not _ID_RE.match(str(value)):
            fail(full, f"= {value!r}: must be letters, digits, '-', '_' or '.'")
        if spec.get("choices") is not None and value not in spec["choices"]:
            fail(full, f"= {value!r}: must be one of {list(spec['choices'])}")
        if spec.get("min") is not None and _is_number(value) and value < spec["min"]:
            fail(full, f"= {value!r}: must be >= {spec['min']:g}")
        if "mapping" in kinds and isinstance(value, Mapping):
            for k, v in value.items():
                if not _is_scalar(v):
                    fail(f"{full}.{k}", f"= {v!r}: must be a number, string, bool or null")
        if spec.get("items") == "string" and isinstance(value, list):
            for i, v in enumerate(value):
                if not isinstance(v, str):
                    fail(f"{full}[{i}]", f"= {v!r}: must be a string")
        if "object" in kinds and spec.get("schema") is not None:
            check_schema(value, spec["schema"], fail, full + ".")
        if "lookups" in kinds:
            items = [value] if isinstance(value, Mapping) else list(value)
            for i, item in enumerate(items):
                sub = full + "." if isinstance(value, Mapping) else f"{full}[{i}]."
                check_schema(item, spec["schema"], fail, sub)


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
    file: str = ""


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
    evidence: tuple[Lookup, ...] = ()
    file: str = ""


@dataclass
class ReferenceSet:
    """All reference values and errata, in file order; ``files`` lists what was read."""

    values: list[ReferenceValue] = field(default_factory=list)
    errata: list[Erratum] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)

    def papers(self) -> list[str]:
        """The papers that have reference values or errata, in first-seen order."""
        seen: dict[str, None] = {}
        for v in self.values:
            seen.setdefault(v.paper)
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
    return ReferenceValue(
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
        file=file,
    )


def _parse_erratum(raw: Mapping[str, Any], paper: str, file: str, fail: Any) -> Erratum:
    check_schema(raw, ERRATUM_SCHEMA, fail)
    ev = raw.get("evidence")
    items = [] if ev is None else ([ev] if isinstance(ev, Mapping) else list(ev))
    lookups = []
    for i, item in enumerate(items):
        prefix = "evidence." if isinstance(ev, Mapping) else f"evidence[{i}]."
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


def load_reference_file(
    path: str | Path, label: str | None = None
) -> tuple[list[ReferenceValue], list[Erratum]]:
    """Read and validate one reference file.

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

    values = [_parse_value(entry, paper, name, fail) for entry, fail in entries("values")]
    errata = [_parse_erratum(entry, paper, name, fail) for entry, fail in entries("errata")]
    return values, errata


def load_references(directory: str | Path | None = None) -> ReferenceSet:
    """Read every ``<paper>*.yaml`` in ``directory`` (default: the shipped references).

    A missing folder or one with no files gives an empty set (the report then shows no
    comparisons). Ids must be unique across all files.

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
        values, errata = load_reference_file(path)
        for kind, items in (("values", values), ("errata", errata)):
            for item in items:
                if item.id in seen:
                    raise ReferenceError(
                        item.file,
                        f"{kind} (id {item.id})",
                        "id",
                        f"duplicate id; first defined in {seen[item.id]}",
                    )
                seen[item.id] = item.file
        refs.values.extend(values)
        refs.errata.extend(errata)
        refs.files.append(path)
    return refs
