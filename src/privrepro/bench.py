"""``make bench``: run every ``benchmarks/bench_*.py`` and gather their rows in one table.

Each benchmark module defines ``bench() -> list[dict]`` whose rows carry ``benchmark``, ``metric``,
``value``, ``unit``, ``baseline`` (measured in the same run), ``ratio`` and ``note``. The table is
printed and written to ``results/benchmarks.csv``; a benchmark that fails is reported and the
others still run.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import platform
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.store.atomic import atomic_write_table

__all__ = ["best_time", "main", "row", "run_benchmarks"]

COLUMNS = ["benchmark", "metric", "value", "unit", "baseline", "ratio", "note"]


def best_time(fn: Callable[[], Any], repeats: int = 3) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``fn()``, in seconds."""
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def row(
    benchmark: str, metric: str, value: float, unit: str, baseline: float, note: str
) -> dict[str, Any]:
    """One benchmark row; ``ratio`` is value / baseline (NaN without a baseline)."""
    return {
        "benchmark": benchmark,
        "metric": metric,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "ratio": value / baseline if baseline else math.nan,
        "note": note,
    }


def run_benchmarks(folder: Path, only: list[str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Import and run each ``bench_*.py`` under ``folder``; return the rows and the failures."""
    rows: list[dict[str, object]] = []
    failures: list[str] = []
    for path in sorted(folder.glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        if only and name not in only:
            continue
        t0 = time.perf_counter()
        try:
            spec = importlib.util.spec_from_file_location(f"benchmarks.{path.stem}", path)
            assert spec and spec.loader
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            for row in module.bench():
                rows.append({**{c: None for c in COLUMNS}, "file": path.name, **row})
        except Exception:
            traceback.print_exc()
            failures.append(path.name)
        print(f"{path.name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    table = pd.DataFrame(rows, columns=[*COLUMNS, "file"] if not rows else None)
    if len(table):
        table["machine"] = f"{platform.machine()} {platform.processor() or ''}".strip()
    return table, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="privrepro-bench", description=__doc__)
    parser.add_argument("--folder", type=Path, default=Path("benchmarks"))
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks.csv"))
    parser.add_argument("only", nargs="*", help="benchmark names (bench_<name>.py) to run")
    args = parser.parse_args(argv)
    table, failures = run_benchmarks(args.folder, args.only or None)
    with pd.option_context(
        "display.max_rows", None, "display.width", 160, "display.max_colwidth", 60
    ):
        print(table.drop(columns=["file", "machine"], errors="ignore").to_string(index=False))
    atomic_write_table(table, args.out, parquet=False)
    print(f"-> {args.out}")
    for name in failures:
        print(f"FAILED {name}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
