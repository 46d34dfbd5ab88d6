"""The recipe contract: a recipe's parameter dataclass is the ``P`` of its ``Figure[P]`` base."""

from __future__ import annotations

import dataclasses
import importlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, get_args

import pandas as pd

from privrepro.figures.api import Figure, UnitContext, param

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class AParams:
    n: int = param(1, ge=1)


@dataclass
class BParams:
    m: int = param(2, ge=1)


Q = TypeVar("Q")


class _Steps(Figure[Q]):
    """The three steps, so that the test classes can be built."""

    def units(self, params: Q) -> list[dict[str, Any]]:
        return [{}]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        return pd.DataFrame()

    def plot(self, table: pd.DataFrame, params: Q) -> Any:
        return None


def test_params_type_is_the_generic_argument() -> None:
    class A(_Steps[AParams]):
        pass

    assert A.params_type is AParams
    assert "params_type" not in _Steps.__dict__  # a generic base names no parameters


def test_a_subclass_keeps_its_parent_s_params_type_and_an_explicit_one_wins() -> None:
    class A(_Steps[AParams]):
        pass

    class A2(A):
        pass

    class B(_Steps[AParams]):
        params_type = BParams

    assert A2.params_type is AParams
    assert B.params_type is BParams


def _recipes() -> list[type]:
    found = set()
    for f in (ROOT / "conf" / "experiment").rglob("*.yaml"):
        text = f.read_text(encoding="utf-8")
        found |= set(re.findall(r"recipe:\s*([\w.]+):(\w+)", text))
    return [getattr(importlib.import_module(m), c) for m, c in sorted(found)]


def _named(cls: type) -> list[type]:
    """The dataclasses named as ``P`` by the nearest ``Base[P]`` in the class's ancestry."""
    for k in cls.__mro__:
        bases = k.__dict__.get("__orig_bases__", ())
        named = [a for b in bases for a in get_args(b) if isinstance(a, type)]
        if named:
            return named
    return []


def test_every_recipe_s_params_type_is_the_dataclass_its_base_names() -> None:
    recipes = _recipes()
    assert len(recipes) >= 25
    for cls in recipes:
        assert dataclasses.is_dataclass(cls.params_type), cls
        assert _named(cls) == [cls.params_type], cls
