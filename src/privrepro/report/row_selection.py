"""Row selection in a figure's tables: by column values, by profile, and the data rows ran on.

A figure's table holds every unit of the figure in the store: several profiles, seeds and
parameter settings (``profile``, ``seed``, ``unit_id`` columns). Reference values and claims
therefore select their rows explicitly: :func:`choose_profile` picks the profile a comparison is
made under (the most faithful one the entry allows), :func:`rows_where` the rows of a ``where``
selector, and :func:`data_labels` what those rows were computed on (the ``data`` column).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privrepro.data.provenance import UNDECLARED, is_stand_in_label
from privrepro.report.results import FigureResults

__all__ = [
    "PROFILE_ORDER",
    "choose_profile",
    "data_labels",
    "data_problem",
    "mask",
    "profiles_of",
    "rows_of_profile",
    "rows_where",
    "where_text",
]

#: Profiles from the most faithful to the least: a comparison uses the first one available.
PROFILE_ORDER = ("paper", "smoke", "tiny")
_FLOAT_RTOL = 1e-9  # `where` matching of floats (docs/adding-a-figure.md)


def where_text(where: Mapping[str, Any]) -> str:
    """``epsilon=1, delta=1e-07``: a row selector in words."""
    return ", ".join(f"{k}={fmt_key(v)}" for k, v in where.items())


def fmt_key(v: Any) -> str:
    """A selector value in words (floats in ``%g``)."""
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def mask(column: pd.Series, value: Any) -> pd.Series:
    """Rows of ``column`` equal to ``value``; floats to a relative 1e-9, null matches NaN.

    A list matches any of its values.
    """
    if isinstance(value, (list, tuple)):
        out = pd.Series(False, index=column.index)
        for v in value:
            out |= mask(column, v)
        return out
    if value is None:
        return column.isna()
    if isinstance(value, bool):
        return column.astype(str).str.lower() == str(value).lower()
    if isinstance(value, (int, float)):
        num = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
        ok = np.isclose(num, float(value), rtol=_FLOAT_RTOL, atol=0.0) | (num == float(value))
        return pd.Series(ok, index=column.index)
    return column.astype(str) == str(value)


def rows_where(df: pd.DataFrame, where: Mapping[str, Any]) -> tuple[pd.DataFrame, str | None]:
    """The rows of ``df`` matching every ``column: value`` of ``where``.

    Returns the rows and, when a column is missing, a problem in words (rows then empty).
    """
    rows = df
    for key, value in where.items():
        if key not in rows.columns:
            return df.iloc[0:0], f"the table has no column {key!r}"
        rows = rows[mask(rows[key], value)]
    return rows, None


def profiles_of(fr: FigureResults) -> list[str]:
    """The profiles a figure's results were made under (table column, else the metadata)."""
    found: set[str] = set()
    for df in (fr.table, fr.summary):
        if df is not None and "profile" in df.columns:
            found |= {str(p) for p in df["profile"].dropna().unique()}
    if not found and fr.meta.get("profile"):
        found.add(str(fr.meta["profile"]))
    return _ordered(found)


def _ordered(profiles: Iterable[str]) -> list[str]:
    known = [p for p in PROFILE_ORDER if p in profiles]
    return known + sorted(set(profiles) - set(PROFILE_ORDER))


def choose_profile(
    available: Sequence[str], allowed: Sequence[str] | None
) -> tuple[str | None, bool]:
    """The profile a comparison is made under, and whether the entry allows it.

    The most faithful profile (:data:`PROFILE_ORDER`) among those ``available`` that the entry
    ``allowed`` (``None``: any); when none is allowed, the most faithful available one (its
    value is shown, not compared).
    """
    ordered = _ordered(available)
    if not ordered:
        return None, allowed is None
    if allowed is None:
        return ordered[0], True
    for p in ordered:
        if p in allowed:
            return p, True
    return ordered[0], False


def rows_of_profile(df: pd.DataFrame | None, profile: str | None) -> pd.DataFrame | None:
    """The rows of ``df`` made under ``profile`` (all rows when it has no ``profile`` column)."""
    if df is None or profile is None or "profile" not in df.columns:
        return df
    return df[df["profile"].astype(str) == profile]


def data_labels(
    fr: FigureResults, profile: str | None, rows: pd.DataFrame | None = None
) -> list[str] | None:
    """What the rows were computed on: the distinct ``data`` labels.

    ``rows`` are rows of the main table (a value or claim on it); without them (a summary row),
    every row of the main table under ``profile``. ``None`` when the table has no ``data``
    column (results written before it existed).
    """
    source = rows if rows is not None and "data" in rows.columns else None
    if source is None:
        table = rows_of_profile(fr.table, profile)
        if table is None or "data" not in table.columns:
            return None
        source = table
    return sorted({str(d) for d in source["data"].dropna().unique()})


def data_problem(labels: list[str] | None) -> tuple[str, str] | None:
    """``(code, why)`` when rows computed on ``labels`` must not be compared with the paper.

    Stand-in data (``stand-in``) or data the recipe did not declare (``data``).
    """
    if labels is None:
        return None
    stand_ins = [d for d in labels if is_stand_in_label(d)]
    if stand_ins:
        return "stand-in", "computed on stand-in data: " + "; ".join(stand_ins)
    if UNDECLARED.label in labels:
        return "data", "the recipe does not declare what its data are"
    return None
