"""Reference values, claims and errata: what each paper (or its authors' code) reports, as data.

Each paper has one or more files ``references/<paper>.yaml`` or ``references/<paper>-<part>.yaml``
(format: ``docs/adding-a-figure.md``, "Reference values"; schema: ``references/README.md``).
:func:`load_references` reads every such file, checks each entry against its schema and returns
the records of :mod:`privrepro.report.reference_records`.

More in ``docs/modules.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from privrepro.report.claim_checks import Claim, Decider, Number, Reading, Selector, parse_check
from privrepro.report.derivation_entries import Computation, parse_computation
from privrepro.report.reference_records import (
    CLAIM_SCHEMA,
    DECIDER_SCHEMA,
    ERRATUM_SCHEMA,
    FILE_SCHEMA,
    NUMBER_SCHEMA,
    READING_SCHEMA,
    VALUE_SCHEMA,
    Erratum,
    Lookup,
    Match,
    ReferenceError,
    ReferenceSet,
    ReferenceValue,
    Source,
    Tolerance,
)
from privrepro.report.reference_schema import check_schema

__all__ = ["default_references_dir", "load_reference_file", "load_references"]


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
