"""A small schema language for the reference files: key → accepted types, required, choices.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ID_RE", "Spec", "check_schema", "is_number", "is_scalar"]

Spec = dict[str, Any]

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def is_number(x: Any) -> bool:
    """An int or a float, not a bool."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def is_scalar(x: Any) -> bool:
    """A number, string, bool or null."""
    return x is None or isinstance(x, (str, bool, int, float))


def _check_type(value: Any, kind: str) -> bool:
    if kind == "any":
        return True
    if kind == "number":
        return is_number(value) and not (isinstance(value, float) and math.isnan(value))
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
    "any": "anything",
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
        if "id" in kinds and not ID_RE.match(str(value)):
            fail(full, f"= {value!r}: must be letters, digits, '-', '_' or '.'")
        if spec.get("choices") is not None and value not in spec["choices"]:
            fail(full, f"= {value!r}: must be one of {list(spec['choices'])}")
        if spec.get("min") is not None and is_number(value) and value < spec["min"]:
            fail(full, f"= {value!r}: must be >= {spec['min']:g}")
        if "mapping" in kinds and isinstance(value, Mapping):
            for k, v in value.items():
                if not _is_selector_value(v):
                    fail(
                        f"{full}.{k}",
                        f"= {v!r}: must be a number, string, bool, null or a list of them",
                    )
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


def _is_selector_value(v: Any) -> bool:
    if isinstance(v, (list, tuple)):
        return len(v) > 0 and all(is_scalar(x) for x in v)
    return is_scalar(v)
