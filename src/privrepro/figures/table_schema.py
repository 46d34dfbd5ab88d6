"""Each figure's table schema: the columns it must have, their types, where NaN is not allowed,
and the ranges and values its numbers may take.

Schemas are declared per paper in ``figures/schemas/<paper>.yaml``, one entry per figure
(``columns``, ``not_null``, ``range``, ``values``, ``optional``; the format and an example:
``docs/adding-a-figure.md``, "The table schema"). Every table also has the runner's bookkeeping
columns (:data:`BOOKKEEPING`), never NaN; columns the schema does not list are allowed.
:func:`check_table` returns the problems in words (empty when the table conforms); the test suite
runs it on every figure's tiny run (``tests/runner/test_every_experiment.py``). Hand-written
rather than pandera: these rules are about values, not pandas dtypes (why: the same page).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

__all__ = ["BOOKKEEPING", "TYPES", "TableSchema", "check_table", "load_schema", "schema_files"]

#: Columns the runner adds to every table (never NaN).
BOOKKEEPING: dict[str, str] = {
    "paper": "str",
    "figure": "str",
    "profile": "str",
    "seed": "int",
    "unit_id": "str",
    "data": "str",
}
TYPES = ("float", "int", "str", "bool")
_SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"


@dataclass(frozen=True)
class TableSchema:
    """The declared shape of one figure's table (see the module docstring)."""

    columns: dict[str, str]
    not_null: tuple[str, ...] = ()
    range: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    values: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    optional: tuple[str, ...] = ()

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any], where: str) -> TableSchema:
        """Build and validate a schema from its YAML mapping; ``where`` names it in errors."""
        allowed = {"columns", "not_null", "range", "values", "optional"}
        unknown = set(raw) - allowed
        if unknown:
            raise ValueError(
                f"{where}: unknown key {sorted(unknown)[0]!r}; allowed: {sorted(allowed)}"
            )
        columns = {str(k): str(v) for k, v in (raw.get("columns") or {}).items()}
        for name, kind in columns.items():
            if kind not in TYPES:
                raise ValueError(
                    f"{where}: columns.{name} = {kind!r}: must be one of {list(TYPES)}"
                )
        known = set(columns) | set(BOOKKEEPING)
        for key in ("not_null", "optional"):
            for name in raw.get(key) or []:
                if name not in known:
                    raise ValueError(f"{where}: {key} names {name!r}, which is not in columns")
        ranges: dict[str, tuple[float | None, float | None]] = {}
        for name, bounds in (raw.get("range") or {}).items():
            if name not in known or not isinstance(bounds, Sequence) or len(bounds) != 2:
                raise ValueError(f"{where}: range.{name} must be [min, max] of a listed column")
            ranges[str(name)] = (bounds[0], bounds[1])
        values = {}
        for name, allowed_values in (raw.get("values") or {}).items():
            if name not in known:
                raise ValueError(f"{where}: values names {name!r}, which is not in columns")
            values[str(name)] = tuple(allowed_values)
        return cls(
            columns=columns,
            not_null=tuple(raw.get("not_null") or ()),
            range=ranges,
            values=values,
            optional=tuple(raw.get("optional") or ()),
        )


def schema_files() -> list[Path]:
    """The schema files shipped with the package (one per paper)."""
    return sorted(_SCHEMA_DIR.glob("*.yaml"))


@cache
def _load(paper: str) -> dict[str, TableSchema]:
    path = _SCHEMA_DIR / f"{paper}.yaml"
    if not path.is_file():
        return {}
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {
        str(fig): TableSchema.from_mapping(entry, f"figures/schemas/{path.name}: {fig}")
        for fig, entry in raw.items()
    }


def load_schema(paper: str, figure: str) -> TableSchema | None:
    """The declared schema of ``paper``'s ``figure``, or ``None`` when none is declared."""
    return _load(paper).get(figure)


def _numbers(values: pd.Series) -> np.ndarray | None:
    """The values as floats, or ``None`` when one is not a real number (bools are not)."""
    if any(isinstance(v, (bool, np.bool_)) for v in values):
        return None
    num = pd.to_numeric(values, errors="coerce")
    return None if num.isna().any() else num.to_numpy(dtype=float)


def _type_problem(column: pd.Series, kind: str) -> str | None:
    values = column.dropna()
    if values.empty:
        return None
    if kind in ("float", "int"):
        num = _numbers(values)
        if num is None:
            return f"holds {column.dtype} values that are not numbers"
        if kind == "int" and not np.all(num[np.isfinite(num)] == np.round(num[np.isfinite(num)])):
            return "holds non-integral values"
        return None
    if kind == "bool":
        ok = pd.api.types.is_bool_dtype(column) or set(values.unique()) <= {True, False}
        return None if ok else f"holds {column.dtype}, not booleans"
    ok = all(isinstance(v, str) for v in values)
    return None if ok else f"holds {column.dtype}, not strings"


def check_table(table: pd.DataFrame, schema: TableSchema) -> list[str]:
    """The ways ``table`` breaks ``schema``, in words (empty: it conforms)."""
    problems: list[str] = []
    declared = {**BOOKKEEPING, **schema.columns}
    for name, kind in declared.items():
        if name not in table.columns:
            if name not in schema.optional:
                problems.append(f"column {name!r} is missing")
            continue
        col = table[name]
        problem = _type_problem(col, kind)
        if problem:
            problems.append(f"column {name!r} ({kind}) {problem}")
        if (name in BOOKKEEPING or name in schema.not_null) and col.isna().any():
            problems.append(f"column {name!r} has {int(col.isna().sum())} NaN / empty values")
    for name, (lo, hi) in schema.range.items():
        if name not in table.columns:
            continue
        num = pd.to_numeric(table[name], errors="coerce").dropna().to_numpy(dtype=float)
        low = -math.inf if lo is None else float(lo)
        high = math.inf if hi is None else float(hi)
        bad = num[(num < low) | (num > high)]
        if bad.size:
            problems.append(
                f"column {name!r} has {bad.size} values outside [{lo}, {hi}] (e.g. {bad[0]:g})"
            )
    for name, allowed in schema.values.items():
        if name not in table.columns:
            continue
        seen = set(table[name].dropna().unique())
        extra = sorted(map(str, seen - set(allowed)))
        if extra:
            problems.append(f"column {name!r} has values {extra} outside {list(allowed)}")
    return problems
