"""Declarative ranges for configuration values, checked before any compute.

A dataclass field declared with :func:`param` carries its allowed range (and, for choices the
papers leave unstated, the assumption it encodes). :func:`validate` walks a dataclass, lists and
nested dataclasses included, and raises :class:`ConfigError` naming the key, the value and the
allowed range. :func:`build_params` turns a plain mapping (a Hydra node) into such a dataclass,
refusing unknown keys.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, Union

T = TypeVar("T")

__all__ = [
    "ConfigError",
    "FieldSpec",
    "allowed_text",
    "assumptions_of",
    "build_params",
    "field_default",
    "field_specs",
    "param",
    "validate",
]


class ConfigError(ValueError):
    """A configuration value outside its allowed range, or an unknown key.

    The message reads ``<key> = <value>: <what is allowed>``; ``key``, ``value`` and ``allowed``
    are kept as attributes for programs that catch it.
    """

    def __init__(self, key: str, value: Any, allowed: str) -> None:
        self.key, self.value, self.allowed = key, value, allowed
        super().__init__(f"{key} = {value!r}: {allowed}")


def param(
    default: Any = dataclasses.MISSING,
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
    choices: Sequence[Any] | None = None,
    min_len: int | None = None,
    length: int | None = None,
    unique: bool = False,
    increasing: bool = False,
    above: str | None = None,
    doc: str = "",
    assumed: str | None = None,
) -> Any:
    """A dataclass field with an allowed range, applied to every element when the value is a list.

    Args:
        default: the default value (lists and dicts are copied per instance).
        gt, ge, lt, le: strict / inclusive lower and upper bounds. An open side excludes the
            infinity it names: ``gt=0`` alone is ``(0, inf)`` and refuses ``inf``; pass
            ``le=math.inf`` where infinity is a meaningful value.
        choices: the allowed values.
        min_len: the fewest items a list (or characters a string) may hold; lists default to 1.
        length: the exact number of items of a list (a pair ``[lo, hi]``: 2).
        unique: no item of the list may repeat (each item is a run unit, say).
        increasing: the items must strictly increase.
        above: the name of a sibling field this value must exceed (``v_max`` above ``v_min``).
        doc: what the value means (shown in errors and the report).
        assumed: set when the paper leaves this choice unstated: why this default was chosen.
            Every figure records the assumptions it ran under.
    """
    metadata = {
        "gt": gt,
        "ge": ge,
        "lt": lt,
        "le": le,
        "choices": choices,
        "min_len": min_len,
        "length": length,
        "unique": unique,
        "increasing": increasing,
        "above": above,
        "doc": doc,
        "assumed": assumed,
    }
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _has_bounds(meta: Mapping[str, Any]) -> bool:
    return any(meta.get(b) is not None for b in ("gt", "ge", "lt", "le"))


def _interval_text(meta: Mapping[str, Any]) -> str:
    lo = (
        "(" + repr(meta["gt"])
        if meta.get("gt") is not None
        else ("[" + repr(meta["ge"]) if meta.get("ge") is not None else "(-inf")
    )
    hi = (
        repr(meta["lt"]) + ")"
        if meta.get("lt") is not None
        else (repr(meta["le"]) + "]" if meta.get("le") is not None else "inf)")
    )
    return f"must lie in {lo}, {hi}"


def allowed_text(meta: Mapping[str, Any]) -> str:
    """The allowed range of one scalar, as printed in errors: ``must lie in (0, 1)``."""
    if meta.get("choices") is not None:
        return f"must be one of {list(meta['choices'])}"
    return _interval_text(meta)


def _in_interval(value: float, meta: Mapping[str, Any]) -> bool:
    gt, ge, lt, le = (meta.get(b) for b in ("gt", "ge", "lt", "le"))
    if math.isnan(value):
        return False
    if math.isinf(value):  # an open side of the interval excludes its infinity
        if value > 0 and not (le is not None and le == math.inf):
            return False
        if value < 0 and not (ge is not None and ge == -math.inf):
            return False
    return not (
        (gt is not None and not value > gt)
        or (ge is not None and not value >= ge)
        or (lt is not None and not value < lt)
        or (le is not None and not value <= le)
    )


def _check_scalar(key: str, value: Any, meta: Mapping[str, Any], item: bool = False) -> None:
    if value is None:
        return
    choices = meta.get("choices")
    if choices is not None:
        if value not in choices:
            raise ConfigError(key, value, allowed_text(meta))
        return
    if isinstance(value, bool):
        if _has_bounds(meta):
            raise ConfigError(key, value, "must be a number; " + _interval_text(meta))
        return
    if isinstance(value, str):
        min_len = None if item else meta.get("min_len")
        if min_len and len(value) < min_len:
            raise ConfigError(key, value, "must be a non-empty string")
        if _has_bounds(meta):
            raise ConfigError(key, value, "must be a number; " + _interval_text(meta))
        return
    if isinstance(value, (int, float)):
        if isinstance(value, float) and math.isnan(value):
            raise ConfigError(key, value, "must not be NaN; " + _interval_text(meta))
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise ConfigError(
                key, value, f"must fit in a signed 64-bit integer; {_interval_text(meta)}"
            )
        if isinstance(value, float) and value != 0.0 and abs(value) < sys.float_info.min:
            raise ConfigError(
                key,
                value,
                f"is subnormal (nonzero and below {sys.float_info.min!r} in magnitude: "
                f"its precision is lost); {_interval_text(meta)}",
            )
        if not _in_interval(float(value), meta):
            raise ConfigError(key, value, _interval_text(meta))
        return
    if _has_bounds(meta):
        raise ConfigError(key, value, "must be a number; " + _interval_text(meta))


def _item_text(meta: Mapping[str, Any]) -> str:
    if meta.get("choices") is None and not _has_bounds(meta):
        return ""
    return "; each item " + allowed_text(meta)


def _check_list(key: str, value: Sequence[Any], meta: Mapping[str, Any]) -> None:
    items = list(value)
    length = meta.get("length")
    if length is not None and len(items) != length:
        raise ConfigError(key, items, f"must hold exactly {length} items" + _item_text(meta))
    min_len = meta.get("min_len")
    min_len = 1 if min_len is None else min_len
    if len(items) < min_len:
        what = "a non-empty list" if min_len == 1 else f"a list of at least {min_len} items"
        raise ConfigError(key, items, f"must be {what}" + _item_text(meta))
    if meta.get("unique"):
        seen: list[Any] = []
        for item in items:
            if item in seen:
                raise ConfigError(key, items, f"must not repeat a value ({item!r} appears twice)")
            seen.append(item)
    if meta.get("increasing"):
        for a, b in itertools.pairwise(items):
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not b > a:
                raise ConfigError(key, items, f"must increase strictly ({b!r} follows {a!r})")


def validate(obj: Any, prefix: str = "params") -> None:
    """Check every field of a dataclass instance (recursively) against its declared range.

    Raises:
        ConfigError: naming the first offending key (``prefix.field[index]``), its value and
            the allowed range.
    """
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        key = f"{prefix}.{f.name}"
        items: list[tuple[str, Any]]
        in_list = isinstance(value, (list, tuple))
        if in_list:
            _check_list(key, value, f.metadata)
            items = [(f"{key}[{i}]", v) for i, v in enumerate(value)]
        else:
            items = [(key, value)]
        for item_key, item in items:
            if dataclasses.is_dataclass(item) and not isinstance(item, type):
                validate(item, item_key)
            else:
                _check_scalar(item_key, item, f.metadata, item=in_list)
        below = f.metadata.get("above")
        if below is not None:
            lower = getattr(obj, below)
            if value is not None and lower is not None and not value > lower:
                raise ConfigError(key, value, f"must be greater than {prefix}.{below} = {lower!r}")
    check = getattr(obj, "check", None)
    if callable(check):
        check(prefix)


def assumptions_of(obj: Any, prefix: str = "params") -> dict[str, dict[str, Any]]:
    """The fields a paper leaves unstated, with their values and the reason for the default."""
    out: dict[str, dict[str, Any]] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.metadata.get("assumed"):
            out[f"{prefix}.{f.name}"] = {"value": value, "why": f.metadata["assumed"]}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            out.update(assumptions_of(value, f"{prefix}.{f.name}"))
    return out


@dataclasses.dataclass(frozen=True)
class FieldSpec:
    """One leaf parameter of a params dataclass: its dotted key, type and declared range."""

    key: str
    name: str
    hint: Any
    metadata: Mapping[str, Any]
    default: Any

    @property
    def is_list(self) -> bool:
        """A list, or a list that may be ``None`` (``list[float] | None``)."""
        hint = _strip_optional(self.hint)
        return typing.get_origin(hint) in (list, tuple, Sequence) or hint in (list, tuple)

    @property
    def _value_hint(self) -> Any:
        """The hint of the value, or of each item of a list (``Optional`` kept)."""
        if self.is_list:
            args = typing.get_args(_strip_optional(self.hint))
            return args[0] if args else Any
        return self.hint

    @property
    def item_hint(self) -> Any:
        """The type of the value, or of each item of a list (``Optional`` removed)."""
        return _strip_optional(self._value_hint)

    @property
    def optional(self) -> bool:
        """``None`` is a valid value (of the field, or of each list item)."""
        hint = self._value_hint
        origin = typing.get_origin(hint)
        return origin in (Union, types.UnionType) and type(None) in typing.get_args(hint)


def _strip_optional(hint: Any) -> Any:
    if typing.get_origin(hint) in (Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return args[0] if len(args) == 1 else hint
    return hint


def field_specs(params_type: type, prefix: str = "params") -> list[FieldSpec]:
    """Every leaf field of ``params_type`` (nested dataclasses flattened into dotted keys)."""
    hints = typing.get_type_hints(params_type)
    out: list[FieldSpec] = []
    for f in dataclasses.fields(params_type):
        hint = hints.get(f.name, Any)
        key = f"{prefix}.{f.name}"
        inner = _strip_optional(hint)
        if isinstance(inner, type) and dataclasses.is_dataclass(inner):
            out += field_specs(inner, key)
            continue
        out.append(FieldSpec(key, f.name, hint, f.metadata, field_default(f)))
    return out


def field_default(f: dataclasses.Field[Any]) -> Any:
    """The default of a dataclass field (its factory called), or ``dataclasses.MISSING``."""
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return dataclasses.MISSING


def _coerce(key: str, value: Any, hint: Any) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any or hint is None:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(key, value, arg)
            except ConfigError as e:
                errors.append(e)
        raise errors[0] if errors else ConfigError(key, value, f"must be {hint}")
    if origin in (list, tuple, Sequence) or hint in (list, tuple):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise ConfigError(key, value, f"must be a list ({hint})")
        inner = args[0] if args else Any
        items = [_coerce(f"{key}[{i}]", v, inner) for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin in (dict, Mapping) or hint is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(key, value, "must be a mapping")
        return dict(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, Mapping):
            raise ConfigError(key, value, f"must be a mapping of {hint.__name__} fields")
        return build_params(hint, value, key)
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(key, value, "must be true or false")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise ConfigError(key, value, "must be an integer")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            if isinstance(value, str):
                try:
                    return float(value)
                except ValueError:
                    pass
            raise ConfigError(key, value, "must be a number")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(key, value, "must be a string")
        return value
    return value


def build_params(
    params_type: type[T], values: Mapping[str, Any] | None, prefix: str = "params"
) -> T:
    """Build and validate a parameter dataclass from a mapping; unknown keys are errors.

    Values are coerced to the annotated types (``1`` to ``1.0`` for a float, YAML lists to lists);
    a value of the wrong kind or out of range raises :class:`ConfigError` before any compute.
    """
    if values is not None and not isinstance(values, Mapping):
        raise ConfigError(prefix, values, f"must be a mapping of {params_type.__name__} fields")
    values = dict(values or {})
    hints = typing.get_type_hints(params_type)
    names = {f.name for f in dataclasses.fields(params_type)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(
            f"{prefix}.{unknown[0]}",
            values[unknown[0]],
            f"unknown key; the keys of {prefix} are {sorted(names)}",
        )
    kwargs = {k: _coerce(f"{prefix}.{k}", v, hints.get(k, Any)) for k, v in values.items()}
    obj = params_type(**kwargs)
    validate(obj, prefix)
    return obj
