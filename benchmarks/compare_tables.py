"""Compare two runs of the figures: tables cell for cell and unit hashes, timing aside.

A refactor that should not change what a figure computes is checked by running the same
experiments from two checkouts into two scratch folders and comparing them::

    python -m privrepro.runner.all --paper pb --profile tiny -- \\
        paths.experiments_dir=OLD/experiments paths.results_dir=OLD/results progress=false
    (same from the other checkout into NEW)
    python benchmarks/compare_tables.py OLD NEW --paper pb

For each ``results/<paper>/<figure>.csv`` and ``.summary.csv`` present in either run it reports
whether the two tables are identical (same columns, same rows in the same order, every value the
same to the bit, NaN equal to NaN), ignoring the columns that measure time. It also compares the
unit folders of ``experiments/<paper>/<figure>/`` (a unit's folder is its hash: an unchanged set
means the store reuses every stored unit). Exit status 1 when anything differs.

``--rows`` compares the row tables as sets of rows instead, each unit's hash aside (a unit whose
config changed and one that did not are then told apart): for each value of ``--by`` (default
``method``, where the table has it) how many rows the two tables share and how many are only in
one of them, so a change meant to touch some methods' rows can be shown to leave the others'
rows identical.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

TIMING = re.compile(r"^time_|_time|wall|seconds|ratio_to_gaussian|^timing")
"""Columns measured with a clock (pb Fig. 4's times and their ratio, wall times)."""


def _tables(root: Path, papers: list[str]) -> dict[str, Path]:
    out = {}
    for paper in papers or sorted(p.name for p in (root / "results").glob("*") if p.is_dir()):
        for f in sorted((root / "results" / paper).glob("*.csv")):
            out[f"{paper}/{f.name}"] = f
    return out


def _same_column(a: pd.Series, b: pd.Series) -> bool:
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        x, y = a.to_numpy(float), b.to_numpy(float)
        return bool(np.array_equal(x, y, equal_nan=True))
    return bool(a.astype(str).equals(b.astype(str)))


def _untimed(table: pd.DataFrame, ignore: re.Pattern[str]) -> pd.DataFrame:
    """A summary's rows whose ``metric`` is a time left out (the index renumbered)."""
    if "metric" not in table.columns:
        return table
    keep = ~table["metric"].astype(str).str.contains(ignore)
    return table[keep].reset_index(drop=True)


def compare_table(old: Path, new: Path, ignore: re.Pattern[str] = TIMING) -> list[str]:
    """The differences between two CSV tables (empty when identical, timing columns and timing
    metrics of a summary aside)."""
    a, b = (_untimed(pd.read_csv(f), ignore) for f in (old, new))
    cols_a = [c for c in a.columns if not ignore.search(c)]
    cols_b = [c for c in b.columns if not ignore.search(c)]
    if cols_a != cols_b:
        return [f"columns differ: {cols_a} vs {cols_b}"]
    if len(a) != len(b):
        return [f"{len(a)} rows vs {len(b)}"]
    return [
        f"column {c!r}: {int((a[c].astype(str) != b[c].astype(str)).sum())} cells differ"
        for c in cols_a
        if not _same_column(a[c], b[c])
    ]


def compare_rows(old: Path, new: Path, by: str, ignore: re.Pattern[str] = TIMING) -> list[str]:
    """Rows shared and rows only in one table, per value of ``by`` (unit hashes and timing
    columns aside); empty when the two hold the same rows."""
    a, b = pd.read_csv(old), pd.read_csv(new)
    cols = [c for c in a.columns if c != "unit_id" and not ignore.search(c)]
    if cols != [c for c in b.columns if c != "unit_id" and not ignore.search(c)]:
        return ["columns differ"]
    keys = {
        name: t[cols].apply(lambda r: "|".join(str(v) for v in r), axis=1)
        for name, t in (("a", a), ("b", b))
    }
    groups = a[by].astype(str) if by in a.columns else pd.Series("all", index=a.index)
    groups_b = b[by].astype(str) if by in b.columns else pd.Series("all", index=b.index)
    out = []
    for g in sorted(set(groups) | set(groups_b)):
        ra = keys["a"][groups == g].value_counts()
        rb = keys["b"][groups_b == g].value_counts()
        shared = int(pd.concat([ra, rb], axis=1).fillna(0).min(axis=1).sum())
        only_a, only_b = int(ra.sum()) - shared, int(rb.sum()) - shared
        if only_a or only_b:
            out.append(f"{by}={g}: {shared} rows shared, {only_a} only old, {only_b} only new")
        else:
            out.append(f"{by}={g}: {shared} rows identical")
    return out


def compare_units(old: Path, new: Path, key: str) -> list[str]:
    """The unit hashes of one figure present in one store and not in the other."""
    paper, name = key.split("/")
    fig = name.removesuffix(".summary.csv").removesuffix(".csv")
    ua = {p.name for p in (old / "experiments" / paper / fig).glob("*") if p.is_dir()}
    ub = {p.name for p in (new / "experiments" / paper / fig).glob("*") if p.is_dir()}
    if ua == ub:
        return []
    return [f"unit hashes differ: only old {sorted(ua - ub)}, only new {sorted(ub - ua)}"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path, help="run folder holding results/ and experiments/")
    ap.add_argument("new", type=Path)
    ap.add_argument("--paper", action="append", default=[], help="only this paper (repeatable)")
    ap.add_argument("--rows", action="store_true", help="compare row tables as sets of rows")
    ap.add_argument("--by", default="method", help="with --rows: the column to group by")
    args = ap.parse_args(argv)
    ta, tb = _tables(args.old, args.paper), _tables(args.new, args.paper)
    bad = 0
    for key in sorted(set(ta) | set(tb)):
        if key not in ta or key not in tb:
            msgs = [f"only in {'new' if key in tb else 'old'}"]
        elif args.rows and not key.endswith(".summary.csv"):
            msgs = compare_rows(ta[key], tb[key], args.by)
            print(f"{key}: {'; '.join(msgs)}")
            bad += any("only" in m or "differ" in m for m in msgs)
            continue
        else:
            msgs = compare_table(ta[key], tb[key])
            if not key.endswith(".summary.csv"):
                msgs += compare_units(args.old, args.new, key)
        bad += bool(msgs)
        print(f"{key}: {'; '.join(msgs) if msgs else 'identical'}")
    print(f"{len(set(ta) | set(tb)) - bad} identical, {bad} different")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
