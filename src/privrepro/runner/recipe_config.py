"""A recipe's parameter defaults as the config node Hydra composes first.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from typing import Any

from privrepro.config.validation import ConfigError, field_default
from privrepro.figures.api import Figure

MISSING_VALUE = "???"
"""What a parameter without a default shows (Hydra's mandatory value: the config must set it)."""


def _plain(key: str, value: Any) -> Any:
    """``value`` as YAML-like containers: dataclasses → dicts, tuples → lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(f"{key}.{f.name}", getattr(value, f.name))
            for f in dataclasses.fields(value)
        }
    if isinstance(value, Mapping):
        return {str(k): _plain(f"{key}.{k}", v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(f"{key}[{i}]", v) for i, v in enumerate(value)]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(
        f"{key}: a default of type {type(value).__name__} cannot be written in a config"
    )


def params_defaults(params_type: type, prefix: str = "params") -> dict[str, Any]:
    """Every field of a parameter dataclass with its default, as plain values.

    A field without a default shows :data:`MISSING_VALUE`, so Hydra refuses to run until the
    experiment config (or the command line) sets it.
    """
    out: dict[str, Any] = {}
    for f in dataclasses.fields(params_type):
        if not f.init:
            continue
        value = field_default(f)
        if value is dataclasses.MISSING:
            out[f.name] = MISSING_VALUE
        else:
            out[f.name] = _plain(f"{prefix}.{f.name}", value)
    return out


def recipe_node(path: str) -> dict[str, Any]:
    """The config a recipe contributes: ``figure.recipe`` and its parameters' defaults."""
    recipe = load_recipe(path)
    return {"figure": {"recipe": path}, "params": params_defaults(recipe.params_type)}


def load_recipe(path: str) -> Figure[Any]:
    """Instantiate the recipe named ``package.module:Class``."""
    module_name, _, class_name = path.partition(":")
    if not class_name:
        raise ConfigError("figure.recipe", path, "must read 'package.module:ClassName'")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError("figure.recipe", path, f"cannot be imported ({exc})") from exc
    if not (isinstance(cls, type) and issubclass(cls, Figure)):
        raise ConfigError(
            "figure.recipe", path, "must name a privrepro.figures.api.Figure subclass"
        )
    return cls()


def recipe_version(recipe: Figure[Any]) -> int:
    """The recipe's ``version`` (1 unless it declares one): part of every unit's identity."""
    return int(getattr(recipe, "version", 1))
