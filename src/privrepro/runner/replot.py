"""Redraw every plot from ``results/`` without recomputing anything (``make plots``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.config.validation import build_params
from privrepro.runner.run import draw, load_recipe

__all__ = ["main", "replot"]


def replot(results_dir: Path, plots_dir: Path) -> list[Path]:
    """Plot each ``results/<paper>/<figure>.csv`` with its recipe and recorded params."""
    made: list[Path] = []
    for meta_path in sorted(results_dir.glob("*/*.meta.json")):
        meta = json.loads(meta_path.read_text())
        table_path = meta_path.with_name(meta_path.name.replace(".meta.json", ".csv"))
        parquet = table_path.with_suffix(".parquet")
        table = pd.read_parquet(parquet) if parquet.is_file() else pd.read_csv(table_path)
        recipe = load_recipe(meta["recipe"])
        params: Any = build_params(recipe.params_type, meta["params"], "params")
        stem = plots_dir / meta["paper"] / meta["figure"]
        made += draw(recipe, table, params, stem, meta)
        print(f"{meta['paper']}/{meta['figure']}: {stem}.png")
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="privrepro-plots", description=__doc__)
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--plots", type=Path, default=Path("plots"))
    args = parser.parse_args(argv)
    made = replot(args.results, args.plots)
    if not made:
        print(f"no results under {args.results}: run `make figures` first", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
