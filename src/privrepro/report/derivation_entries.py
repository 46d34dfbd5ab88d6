"""Computations a reference file names: how a derived value or an erratum's evidence is made.

A derived reference value is not a number typed in from a note: it carries the computation that
produced it, so a reader can rerun it. Either a ``formula`` in words (a closed form with its
numbers) or a ``function`` of the project the report calls with plain arguments (more in
``docs/modules.md``).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privrepro.report.reference_schema import Spec, is_scalar

__all__ = [
    "COMPUTATION_SCHEMA",
    "Computation",
    "ComputationResult",
    "parse_computation",
    "resolve_function",
    "run_computation",
]

COMPUTATION_SCHEMA: Spec = {
    "formula": {"type": "string"},
    "function": {"type": "string"},
    "args": {"type": "object"},
    "output": {"type": ("string", "number")},
    "label": {"type": "string"},
}


@dataclass(frozen=True)
class Computation:
    """A formula in words and/or a project function with its arguments."""

    formula: str | None = None
    function: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    output: str | int | None = None
    label: str | None = None

    def call_text(self) -> str:
        """``privrepro.dp.group:drop_probability_lower_bound(k=13, epsilon=1, delta=1e-07)``."""
        if not self.function:
            return ""
        args = ", ".join(f"{k}={_arg_text(v)}" for k, v in self.args.items())
        out = f"{self.function}({args})"
        if self.output is not None:
            out += f"[{self.output!r}]"
        return out


def _arg_text(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list):
        return "[" + ", ".join(_arg_text(x) for x in v) + "]"
    return repr(v)


@dataclass(frozen=True)
class ComputationResult:
    """What a computation gave: a number, a table, or why it could not run."""

    value: float | None = None
    table: pd.DataFrame | None = None
    error: str | None = None


def parse_computation(raw: Mapping[str, Any], fail: Callable[[str, str], None]) -> Computation:
    """A :class:`Computation` from a checked mapping; ``fail(key, problem)`` on a bad one."""
    if not raw.get("formula") and not raw.get("function"):
        fail("formula", "a derivation needs a formula, a function, or both")
    fn = raw.get("function")
    if fn is not None:
        module, _, name = str(fn).partition(":")
        if not name or not (module == "privrepro" or module.startswith("privrepro.")):
            fail("function", f"= {fn!r}: must read 'privrepro.<module>:<function>'")
    args = dict(raw.get("args") or {})
    for k, v in args.items():
        ok = is_scalar(v) or (isinstance(v, list) and all(is_scalar(x) for x in v))
        if not ok:
            fail(f"args.{k}", f"= {v!r}: must be a number, string, bool or a list of them")
    if args and fn is None:
        fail("args", "given without a function")
    out = raw.get("output")
    return Computation(
        formula=None if raw.get("formula") is None else str(raw["formula"]),
        function=None if fn is None else str(fn),
        args=args,
        output=out if out is None or isinstance(out, int) else str(out),
        label=None if raw.get("label") is None else str(raw["label"]),
    )


def resolve_function(path: str) -> Callable[..., Any]:
    """The function ``privrepro.<module>:<name>`` (``name`` may be ``Class.method``)."""
    module_name, _, name = path.partition(":")
    if not (module_name == "privrepro" or module_name.startswith("privrepro.")):
        raise ValueError(f"{path}: only functions of the privrepro package can be called")
    obj: Any = importlib.import_module(module_name)
    for part in name.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"{path} is not callable")
    return obj  # type: ignore[no-any-return]


def _pick(result: Any, output: str | int | None) -> Any:
    if output is None:
        return result
    if isinstance(result, Mapping) or (
        isinstance(output, int) and isinstance(result, (list, tuple, np.ndarray))
    ):
        return result[output]  # type: ignore[index]
    if isinstance(result, pd.DataFrame) and isinstance(output, str):
        return result[output]
    return getattr(result, str(output))


def run_computation(c: Computation) -> ComputationResult:
    """Call ``c.function`` with ``c.args``: a number, or a table (a mapping of columns, a frame).

    Never raises: an import error, a failing call or an unusable result is returned in words.
    """
    if not c.function:
        return ComputationResult(error="no function to call (a formula only)")
    try:
        result = _pick(resolve_function(c.function)(**c.args), c.output)
    except Exception as e:  # a derivation that no longer runs is reported, not fatal
        return ComputationResult(error=f"{c.call_text()} failed: {type(e).__name__}: {e}")
    if isinstance(result, pd.DataFrame):
        return ComputationResult(table=result)
    if isinstance(result, Mapping):
        try:
            return ComputationResult(table=pd.DataFrame(dict(result)))
        except ValueError:
            return ComputationResult(table=pd.DataFrame([dict(result)]))
    try:
        value = float(np.asarray(result, dtype=float).reshape(()))
    except (TypeError, ValueError):
        return ComputationResult(error=f"{c.call_text()} returned {type(result).__name__}")
    if math.isnan(value):
        return ComputationResult(error=f"{c.call_text()} returned NaN")
    return ComputationResult(value=value)
