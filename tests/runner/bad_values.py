"""Out-of-range values for a declared parameter, written as Hydra command-line overrides.

:func:`bad_values` lists, for one leaf parameter (a :class:`~privrepro.config.validation.FieldSpec`),
representative values its declaration refuses, one per kind of constraint: below or above the
interval, an infinity the interval excludes, NaN, a non-integer for an integer, a value outside
the choices, an empty or repeated or wrongly sized list, a non-boolean, a wrong type, a pair out of
order. :func:`bad_value_strategy` draws such values with hypothesis.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from privrepro.config.validation import FieldSpec

__all__ = ["bad_value_strategy", "bad_values", "hydra_literal"]


def hydra_literal(value: Any) -> str:
    """``value`` in Hydra's override grammar."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_literal(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{hydra_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(value)


def _is_int(hint: Any) -> bool:
    return hint is int


def _is_number(hint: Any) -> bool:
    return hint in (int, float)


def _scalar_bad(meta: Mapping[str, Any], hint: Any) -> list[tuple[str, Any]]:
    """Values one scalar (or one list item) of this declaration refuses."""
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return [("not a mapping", 5)]
    if meta.get("choices") is not None:
        return [("not a choice", "zz-not-a-choice")]
    if hint is bool:
        return [("not a boolean", "maybe")]
    if hint is dict or getattr(hint, "__origin__", None) is dict:
        return [("not a mapping", 5)]
    if hint is str:
        return [("empty string", "")] if meta.get("min_len") else [("not a string", [1])]
    if not _is_number(hint):
        return []
    out: list[tuple[str, Any]] = []
    gt, ge, lt, le = (meta.get(b) for b in ("gt", "ge", "lt", "le"))
    step = 1 if _is_int(hint) else 0.5
    if gt is not None and not math.isinf(gt):
        out.append(("at the open lower bound", int(gt) if _is_int(hint) else float(gt)))
    if ge is not None and not math.isinf(ge):
        out.append(("below the lower bound", (int(ge) if _is_int(hint) else ge) - step))
    if lt is not None and not math.isinf(lt):
        out.append(("at the open upper bound", int(lt) if _is_int(hint) else float(lt)))
    if le is not None and not math.isinf(le):
        out.append(("above the upper bound", (int(le) if _is_int(hint) else le) + step))
    if _is_int(hint):
        out.append(("not an integer", 1.5))
    else:
        if le is None or not math.isinf(le):
            out.append(("infinite", math.inf))
        if ge is None or not math.isinf(ge):
            out.append(("minus infinity", -math.inf))
        out.append(("NaN", math.nan))
    out.append(("not a number", "abc"))
    return out


def _sample_item(spec: FieldSpec) -> Any:
    default = spec.default
    if isinstance(default, (list, tuple)):
        items = [v for v in default if v is not None]
        if items:
            return items[0]
    return None


def bad_values(spec: FieldSpec, current: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """``(kind, overrides)`` pairs that must each be refused, naming ``spec.key``.

    ``current`` holds the effective values of the parameter's siblings (for ordered pairs).
    """
    meta, hint = spec.metadata, spec.item_hint
    out: list[tuple[str, list[str]]] = []
    if spec.is_list:
        if meta.get("min_len", None) != 0:
            out.append(("empty list", [f"{spec.key}=[]"]))
        out.append(("not a list", [f"{spec.key}=5"]))
        item = _sample_item(spec)
        if meta.get("unique") and item is not None:
            out.append(("repeated item", [f"{spec.key}={hydra_literal([item, item])}"]))
        if meta.get("length") is not None and item is not None:
            wrong = [item] * (meta["length"] + 1)
            out.append(("wrong length", [f"{spec.key}={hydra_literal(wrong)}"]))
        if meta.get("increasing") and isinstance(spec.default, list) and len(spec.default) > 1:
            out.append(("decreasing", [f"{spec.key}={hydra_literal(spec.default[::-1])}"]))
        for kind, value in _scalar_bad(meta, hint):
            out.append((f"item {kind}", [f"{spec.key}={hydra_literal([value])}"]))
    else:
        for kind, value in _scalar_bad(meta, hint):
            out.append((kind, [f"{spec.key}={hydra_literal(value)}"]))
        below = meta.get("above")
        if below is not None and current.get(below) is not None:
            out.append(("not above its pair", [f"{spec.key}={hydra_literal(current[below])}"]))
    return out


def bad_value_strategy(spec: FieldSpec, current: Mapping[str, Any]) -> st.SearchStrategy[list[str]]:
    """Hypothesis draws of refused values for ``spec``: numbers anywhere outside the interval,
    arbitrary non-choices, the fixed kinds of :func:`bad_values`."""
    meta, hint = spec.metadata, spec.item_hint
    fixed = st.sampled_from([o for _, o in bad_values(spec, current)] or [[f"{spec.key}=[]"]])
    outside: list[st.SearchStrategy[Any]] = []
    if _is_number(hint) and meta.get("choices") is None:
        lo = meta.get("gt") if meta.get("gt") is not None else meta.get("ge")
        hi = meta.get("lt") if meta.get("lt") is not None else meta.get("le")
        ints = _is_int(hint)
        if lo is not None and not math.isinf(lo):
            top = (
                lo
                if meta.get("gt") is not None
                else (lo - 1 if ints else math.nextafter(lo, -math.inf))
            )
            outside.append(
                st.integers(max_value=int(top))
                if ints
                else st.floats(max_value=top, allow_nan=False)
            )
        if hi is not None and not math.isinf(hi):
            bottom = (
                hi
                if meta.get("lt") is not None
                else (hi + 1 if ints else math.nextafter(hi, math.inf))
            )
            outside.append(
                st.integers(min_value=int(bottom))
                if ints
                else st.floats(min_value=bottom, allow_nan=False)
            )
    elif meta.get("choices") is not None and hint is str:
        choices = set(meta["choices"])
        outside.append(
            st.text(alphabet="abcdefghijklmnopqrstuvwxyz-_", min_size=1, max_size=12).filter(
                lambda s: s not in choices and s not in ("null", "true", "false", "nan", "inf")
            )
        )
    if not outside:
        return fixed
    value = st.one_of(*outside)
    if spec.is_list:
        drawn = value.map(lambda v: [f"{spec.key}={hydra_literal([v])}"])
    else:
        drawn = value.map(lambda v: [f"{spec.key}={hydra_literal(v)}"])
    return st.one_of(fixed, drawn)
