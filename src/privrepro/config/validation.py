"""Declarative ranges for configuration values, checked before any compute.

A dataclass field declared with :func:`param` carries its allowed range (and, for choices the
papers leave unstated, the assumption it encodes). :func:`validate` walks a dataclass, lists and
nested dataclasses included, and raises :class:`ConfigError` naming the key, the value and the
allowed range. :func:`build_params` turns a plain mapping (a Hydra node) into such a dataclass,
refusing unknown keys.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, Union

T = TypeVar("T")

__all__ = ["ConfigError", "assumptions_of", "build_params", "param", "validate"]


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
    doc: str = "",
    assumed: str | None = None,
) -> Any:
    """A dataclass field with an allowed range, applied to every element when the value is a list.

    Args:
        default: the default value (lists and dicts are copied per instance).
        gt, ge, lt, le: strict / inclusive lower and upper bounds.
        choices: the allowed values.
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
        "doc": doc,
        "assumed": assumed,
    }
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def _allowed_text(meta: Mapping[str, Any]) -> str:
    if meta.get("choices") is not None:
        return f"must be one of {list(meta['choices'])}"
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


def _check_scalar(key: str, value: Any, meta: Mapping[str, Any]) -> None:
    choices = meta.get("choices")
    if choices is not None:
        if value not in choices:
            raise ConfigError(key, value, _allowed_text(meta))
        return
    bounds = [meta.get(b) for b in ("gt", "ge", "lt", "le")]
    if all(b is None for b in bounds) or value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(key, value, "must be a number; " + _allowed_text(meta))
    if isinstance(value, float) and math.isnan(value):
        raise ConfigError(key, value, "must not be NaN; " + _allowed_text(meta))
    gt, ge, lt, le = bounds
    if (
        (gt is not None and not value > gt)
        or (ge is not None and not value >= ge)
        or (lt is not None and not value < lt)
        or (le is not None and not value <= le)
    ):
        raise ConfigError(key, value, _allowed_text(meta))


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
        if isinstance(value, (list, tuple)):
            items = [(f"{key}[{i}]", v) for i, v in enumerate(value)]
        else:
            items = [(key, value)]
        for item_key, item in items:
            if dataclasses.is_dataclass(item) and not isinstance(item, type):
                validate(item, item_key)
            else:
                _check_scalar(item_key, item, f.metadata)
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
