"""How much of the library sits in the figure layer: lines per ``figures/<paper>``, their share of
the library, and the longest function of each (issue 18's budget: ``figures/`` ≤ 15 % of the
library's lines, no function there longer than 60 lines)::

    python benchmarks/figures_budget.py            # the working tree
    python benchmarks/figures_budget.py --max 60   # exit 1 when a function is longer

Lines are counted as ``wc -l`` counts them; a function's length runs from its ``def`` (decorators
excluded) to its last line.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "privrepro"


def _lines(path: Path) -> int:
    return len(path.read_bytes().splitlines())


def _longest(path: Path) -> tuple[int, str]:
    best = (0, "")
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            n = (node.end_lineno or node.lineno) - node.lineno + 1
            best = max(best, (n, f"{path.relative_to(SRC.parent)}:{node.lineno} {node.name}"))
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max", type=int, default=None, help="longest function allowed in figures/")
    args = ap.parse_args(argv)
    library = sum(_lines(f) for f in SRC.rglob("*.py"))
    figures = SRC / "figures"
    total = sum(_lines(f) for f in figures.rglob("*.py"))
    print(f"library {library} lines; figures/ {total} ({100 * total / library:.1f} %)")
    worst = 0
    for part in sorted(p for p in figures.iterdir() if p.is_dir() and p.name != "__pycache__"):
        files = sorted(part.glob("*.py"))
        if not files:  # data only (the table schemas)
            continue
        n, where = max(_longest(f) for f in files)
        worst = max(worst, n)
        print(
            f"  figures/{part.name}: {sum(_lines(f) for f in files)} lines; longest function {n} ({where})"
        )
    return 1 if args.max is not None and worst > args.max else 0


if __name__ == "__main__":
    sys.exit(main())
