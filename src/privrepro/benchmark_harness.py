"""``make bench``: run every ``benchmarks/bench_*.py`` and gather their rows in one table.

Each module defines ``bench(device: str, quick: bool) -> list[dict]`` built with :func:`row`:
``value`` is what the project's code costs and ``baseline_value`` what the row's ``baseline``
costs for the same work, so ``speedup = baseline_value / value`` (> 1: the project is faster);
``baseline_kind`` says what the baseline is. ``quick`` shrinks every size so that the tests check
the rows and the state handling in seconds, never the timings. A benchmark restores the global
state it changes (:func:`torch_threads`, :func:`preserved_state`); :func:`run_benchmarks` also
restores it after each module and reports a module that leaked. The table is printed and written
to ``results/benchmarks.csv``; the convention in full is ``docs/testing.md`` ("Benchmarks").
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import math
import os
import platform
import random
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from privrepro.store.atomic import atomic_write_table

__all__ = [
    "COLUMNS",
    "KINDS",
    "best_time",
    "global_state",
    "load_script",
    "main",
    "preserved_state",
    "resolve_device",
    "row",
    "run_benchmarks",
    "torch_threads",
]

COLUMNS = [
    "benchmark",
    "metric",
    "value",
    "unit",
    "baseline",
    "baseline_kind",
    "baseline_value",
    "speedup",
    "note",
]
KINDS = ("peer library", "straw man", "variant", "floor", "target")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def best_time(fn: Callable[[], Any], repeats: int = 3) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``fn()``, in seconds."""
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def row(
    benchmark: str,
    metric: str,
    value: float,
    unit: str,
    baseline_value: float,
    baseline: str,
    kind: str,
    note: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """One row: the project's cost ``value`` against ``baseline``'s ``baseline_value`` (same
    unit, lower is better); ``speedup = baseline_value / value`` (> 1: the project is faster)."""
    if kind not in KINDS:
        raise ValueError(f"baseline_kind = {kind!r}: must be one of {list(KINDS)}")
    if not baseline:
        raise ValueError("every row names its baseline")
    ok = value > 0 and math.isfinite(value) and math.isfinite(baseline_value)
    return {
        "benchmark": benchmark,
        "metric": metric,
        "value": float(value),
        "unit": unit,
        "baseline": baseline,
        "baseline_kind": kind,
        "baseline_value": float(baseline_value),
        "speedup": float(baseline_value) / float(value) if ok else math.nan,
        "note": note,
        **extra,
    }


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when a GPU is present, else ``cpu``; others unchanged."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def global_state() -> dict[str, Any]:
    """What a benchmark may change and must give back, as comparable values."""
    import torch

    state: dict[str, Any] = {
        "torch_threads": torch.get_num_threads(),
        "torch_default_dtype": torch.get_default_dtype(),
        "torch_rng": bytes(torch.random.get_rng_state().numpy().tobytes()),
        "numpy_rng": _numpy_state(),
        "python_rng": random.getstate(),
        "environment": {k: os.environ.get(k) for k in THREAD_VARIABLES},
    }
    if hasattr(torch, "get_default_device"):
        state["torch_default_device"] = str(torch.get_default_device())
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda_rng"] = [bytes(s.numpy().tobytes()) for s in torch.cuda.get_rng_state_all()]
    return state


def _numpy_state() -> tuple[Any, ...]:
    """numpy's legacy global generator (what ``np.random.seed`` changes), as comparable values."""
    state: Any = np.random.get_state(legacy=True)  # noqa: NPY002 (the global state itself)
    name, keys, pos, has_gauss, cached = state
    return (name, np.asarray(keys).tobytes(), pos, has_gauss, cached)


def _restore(state: dict[str, Any]) -> None:
    import torch

    torch.set_num_threads(state["torch_threads"])
    torch.set_default_dtype(state["torch_default_dtype"])
    if "torch_default_device" in state:
        torch.set_default_device(state["torch_default_device"])
    torch.random.set_rng_state(
        torch.frombuffer(bytearray(state["torch_rng"]), dtype=torch.uint8).clone()
    )
    name, keys, pos, has_gauss, cached = state["numpy_rng"]
    legacy = (name, np.frombuffer(keys, dtype=np.uint32), pos, has_gauss, cached)
    np.random.set_state(legacy)  # noqa: NPY002 (the global state itself)
    random.setstate(state["python_rng"])
    for k, v in state["environment"].items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    if "cuda_rng" in state:
        torch.cuda.set_rng_state_all(
            [torch.frombuffer(bytearray(s), dtype=torch.uint8).clone() for s in state["cuda_rng"]]
        )


def changed_state(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The keys of :func:`global_state` whose values differ."""
    return [k for k in before if before[k] != after.get(k)]


@contextlib.contextmanager
def preserved_state() -> Iterator[dict[str, Any]]:
    """Run a block and give back every piece of :func:`global_state` it changed."""
    state = global_state()
    try:
        yield state
    finally:
        _restore(state)


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch's intra-op thread count set to ``n`` for the block, then given back."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def load_average() -> float:
    """The 1-minute load average (NaN where the system has none)."""
    try:
        return float(os.getloadavg()[0])
    except OSError:
        return math.nan


def load_script(path: Path) -> ModuleType:
    """The script at ``path`` (a ``benchmarks/*.py`` file, not a package module) imported as
    ``benchmarks.<stem>``."""
    spec = importlib.util.spec_from_file_location(f"benchmarks.{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_benchmarks(
    folder: Path, only: list[str] | None = None, device: str = "auto", quick: bool = False
) -> tuple[pd.DataFrame, list[str], dict[str, list[str]]]:
    """Import and run each ``bench_*.py`` under ``folder``.

    Returns the rows, the modules that failed, and per module the pieces of global state it
    left changed (restored here before the next module runs).
    """
    import torch

    dev = resolve_device(device)
    rows: list[dict[str, object]] = []
    failures: list[str] = []
    leaks: dict[str, list[str]] = {}
    for path in sorted(folder.glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        context = {"load_1min": load_average(), "threads": torch.get_num_threads(), "device": dev}
        with preserved_state() as before:
            try:
                module = load_script(path)
                for r in module.bench(device=dev, quick=quick):
                    rows.append({**{c: None for c in COLUMNS}, **context, "file": path.name, **r})
            except Exception:
                traceback.print_exc()
                failures.append(path.name)
            leaked = changed_state(before, global_state())
        if leaked:
            leaks[path.name] = leaked
            print(f"{path.name} left global state changed: {leaked} (restored)", file=sys.stderr)
        print(f"{path.name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    extra = ["load_1min", "threads", "device", "file"]
    table = pd.DataFrame(rows, columns=[*COLUMNS, *extra] if not rows else None)
    if len(table):
        table["machine"] = f"{platform.machine()} {platform.processor() or ''}".strip()
        table["cpus"] = os.cpu_count()
    return table, failures, leaks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="privrepro-bench", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("--folder", type=Path, default=Path("benchmarks"))
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks.csv"))
    parser.add_argument(
        "--device", default="auto", help="cpu, cuda or auto (CUDA when present; default)"
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes: rows, not timings")
    parser.add_argument("only", nargs="*", help="benchmark names (bench_<name>.py) to run")
    args = parser.parse_args(argv)
    print(
        "speedup = baseline cost / project cost (seconds, or bytes where the unit says so): "
        "> 1 means the project is faster (or smaller)",
    )
    table, failures, leaks = run_benchmarks(args.folder, args.only or None, args.device, args.quick)
    shown = ["benchmark", "metric", "value", "unit", "baseline_value", "speedup", "baseline_kind"]
    with pd.option_context(
        "display.max_rows", None, "display.width", 200, "display.max_colwidth", 70
    ):
        if len(table):
            print(table[[*shown, "threads", "load_1min"]].to_string(index=False))
            print()
            for (bench, metric), g in table.groupby(["benchmark", "metric"], sort=False):
                print(
                    f"- {bench} / {metric}: baseline {g['baseline'].iloc[0]}. {g['note'].iloc[0]}"
                )
    atomic_write_table(table, args.out, parquet=False)
    print(f"-> {args.out}")
    for name in failures:
        print(f"FAILED {name}", file=sys.stderr)
    for name, keys in leaks.items():
        print(f"LEAKED {name}: {keys}", file=sys.stderr)
    return 1 if failures or leaks else 0


if __name__ == "__main__":
    sys.exit(main())
