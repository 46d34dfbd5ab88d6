"""Redraw every plot from ``results/`` without recomputing anything (``make plots``).

Each plot is drawn from the figure's Parquet table (the source of truth; a CSV edited by hand is
reported and ignored), restricted to the selection its ``meta.json`` records: the units of the
run that last drew it, so the plot is the same one that run drew.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.config.validation import build_params
from privrepro.runner.figure_tables import read_table, select_units
from privrepro.runner.plan import load_recipe
from privrepro.runner.run import draw

__all__ = ["main", "replot"]

log = logging.getLogger("privrepro.replot")


def _selection(table: pd.DataFrame, meta: dict[str, Any]) -> pd.DataFrame:
    ids = meta.get("selection")
    if ids is None:  # a meta.json written before selections were recorded: its units
        old = meta.get("units")
        ids = old if isinstance(old, list) and all(isinstance(u, str) for u in old) else None
    if ids is None:
        return table[table["profile"] == meta.get("profile")].reset_index(drop=True)
    return select_units(table, list(ids))


def replot(results_dir: Path, plots_dir: Path) -> list[Path]:
    """Plot each figure of ``results_dir`` with its recipe, recorded params and selection."""
    made: list[Path] = []
    for meta_path in sorted(Path(results_dir).glob("*/*.meta.json")):
        meta = json.loads(meta_path.read_text())
        paper, figure = meta["paper"], meta["figure"]
        if "params" not in meta or "recipe" not in meta:
            print(f"{paper}/{figure}: no run recorded (run the figure to draw it)", file=sys.stderr)
            continue
        try:
            table = read_table(Path(results_dir), paper, figure, meta)
        except FileNotFoundError as exc:
            print(
                f"{paper}/{figure}: {exc.filename} is missing; run `make tables`", file=sys.stderr
            )
            continue
        selection = _selection(table, meta)
        if selection.empty:
            print(f"{paper}/{figure}: the recorded selection is not in the table", file=sys.stderr)
            continue
        recipe = load_recipe(meta["recipe"])
        params: Any = build_params(recipe.params_type, meta["params"], "params")
        stem = Path(plots_dir) / paper / figure
        made += draw(recipe, selection, params, stem, meta)
        print(f"{paper}/{figure}: {stem}.png")
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="privrepro-plots", description=__doc__)
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--plots", type=Path, default=Path("plots"))
    args = parser.parse_args(argv)
    from privrepro.commands import quiet_console_logging

    quiet_console_logging()
    made = replot(args.results, args.plots)
    if not made:
        print(f"no results under {args.results}: run `make figures` first", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
