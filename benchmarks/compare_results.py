"""Compare two ``results/`` folders figure by figure (tables and summaries), ignoring timings.

    python benchmarks/compare_results.py BASELINE/results NEW/results

For every ``<paper>/<figure>.csv`` and ``.summary.csv`` of the first folder: the same rows and
values in the second, up to row order (both are sorted on every column) and columns that measure
time (``*time*``, ``*seconds*``, ``wall*``). Columns present in only one of them are listed
separately. Exit status 1 when any figure differs in its shared columns.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

TIMING = re.compile(r"time|seconds|^wall|_ms_|_ms$")


def _load(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path)
    return df[[c for c in df.columns if not TIMING.search(c)]]


def _canonical(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    out = df[columns].copy()
    for c in columns:
        if out[c].dtype == object:
            out[c] = out[c].astype(str)
    return out.sort_values(columns, kind="stable").reset_index(drop=True)


def compare(a: Path, b: Path) -> tuple[str, str]:
    """``(status, detail)`` of one table: ``same``, ``same (+columns)`` or ``DIFFERENT``."""
    if not b.is_file():
        return "MISSING", str(b)
    x, y = _load(a), _load(b)
    shared = [c for c in x.columns if c in y.columns]
    extra = sorted(set(x.columns) ^ set(y.columns))
    if len(x) != len(y):
        return "DIFFERENT", f"{len(x)} rows vs {len(y)}"
    try:
        pd.testing.assert_frame_equal(
            _canonical(x, shared), _canonical(y, shared), check_dtype=False
        )
    except AssertionError as exc:
        return "DIFFERENT", str(exc).splitlines()[0] if str(exc) else "values differ"
    return ("same", "") if not extra else ("same (columns differ)", f"only in one: {extra}")


def main(argv: list[str]) -> int:
    base, new = Path(argv[0]), Path(argv[1])
    bad = 0
    for path in sorted(base.glob("*/*.csv")):
        rel = path.relative_to(base)
        status, detail = compare(path, new / rel)
        bad += status in ("DIFFERENT", "MISSING")
        print(f"{rel!s:<40} {status:<22} {detail}")
    print(f"{bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
