"""Redraw every plot from ``results/`` without recomputing anything (``make plots``).

Each plot is drawn from the figure's Parquet table (the source of truth; a CSV edited by hand is
reported and ignored), restricted to the canonical view its ``meta.json`` records (the figure's
own parameters of the most faithful profile, every seed that holds them all:
:mod:`privrepro.runner.canonical`), so the plot is the default plot the last run drew. A figure
with no run of its own parameters has no default plot: its last run's own plot is drawn again
(``plots/<paper>/<figure>/runs/``). A ``meta.json`` written before canonical views were recorded
draws its run's selection.

Each figure is drawn on its own: a ``meta.json`` that is cut short, not an object, names another
recipe than the figure's configured one, or records parameters that do not validate, fails that
figure alone, in one line; every other figure is drawn, and the command exits non-zero at the end.
The recipe is the figure's configured one (:func:`privrepro.runner.figure_tables.figure_recipe`); the
name ``meta.json`` records is compared with it, never imported. Temporaries that killed plot
writes left (``.tmp-<figure>.png-*``) are removed when the figure is drawn again.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.bounded_read import JSONTooDeep, UnsafeFile
from privrepro.commands import command_parser
from privrepro.config.validation import build_params
from privrepro.runner.canonical import CanonicalView, select_units, views_from_records
from privrepro.runner.figure_tables import (
    failure_line,
    figure_recipe,
    read_meta,
    read_table,
)
from privrepro.runner.publish import draw, draw_plots
from privrepro.runner.recipe_config import load_recipe

log = logging.getLogger("privrepro.replot")


class PlotFailure(Exception):
    """Why one figure cannot be drawn again, in one line."""


def _selection(table: pd.DataFrame, meta: dict[str, Any]) -> pd.DataFrame:
    ids = meta.get("selection")
    if ids is None:  # a meta.json written before selections were recorded: its units
        old = meta.get("units")
        ids = old if isinstance(old, list) and all(isinstance(u, str) for u in old) else None
    if ids is None:
        return table[table["profile"] == meta.get("profile")].reset_index(drop=True)
    if not isinstance(ids, list) or not all(isinstance(u, str) for u in ids):
        raise PlotFailure("its meta.json's selection is not a list of unit ids")
    return select_units(table, list(ids))


def _read_meta(meta_path: Path, results_dir: Path) -> dict[str, Any]:
    try:
        meta = read_meta(meta_path, tree=results_dir)
    except UnsafeFile as exc:
        raise PlotFailure(str(exc)) from exc
    except (OSError, ValueError) as exc:
        why = str(exc) if isinstance(exc, JSONTooDeep) else type(exc).__name__
        raise PlotFailure(f"{meta_path} cannot be read ({why})") from exc
    if not isinstance(meta, dict):
        raise PlotFailure(f"{meta_path} holds a {type(meta).__name__}, not an object")
    return meta


def replot_figure(
    results_dir: Path, plots_dir: Path, meta_path: Path, conf: Path | None = None
) -> list[Path]:
    """Draw one figure again from its ``meta.json``.

    Raises:
        PlotFailure: (or any error drawing raises) when the figure cannot be drawn.
    """
    meta = _read_meta(meta_path, Path(results_dir))
    paper, figure = meta_path.parent.name, meta_path.name[: -len(".meta.json")]
    if (meta.get("paper"), meta.get("figure")) != (paper, figure):
        raise PlotFailure(f"{meta_path} names the figure {meta.get('paper')}/{meta.get('figure')}")
    if "params" not in meta or "recipe" not in meta:
        raise PlotFailure("no run recorded (run the figure to draw it)")
    name = _configured(meta, paper, figure, conf)
    try:
        table = read_table(Path(results_dir), paper, figure, meta)
    except FileNotFoundError as exc:
        raise PlotFailure(f"{exc.filename} is missing; run `make tables`") from exc
    recipe = load_recipe(name)
    if isinstance(meta.get("canonical"), dict):
        views = _views(recipe, meta["canonical"])
        held = set(table["unit_id"]) if "unit_id" in table.columns else set()
        if any(not set(v.unit_ids) <= held for v in views.values()):
            raise PlotFailure("the recorded canonical units are not in the table")
        if not views and _selection(table, meta).empty:
            raise PlotFailure("the recorded selection is not in the table")
        # no run of the figure's own parameters: no default plot; the last run's own plot
        return draw_plots(recipe, table, meta, Path(plots_dir), views, own=not views)
    selection = _selection(table, meta)  # a meta.json written before canonical views
    if selection.empty:
        raise PlotFailure("the recorded selection is not in the table")
    params: Any = build_params(recipe.params_type, meta["params"], "params")
    return draw(recipe, selection, params, Path(plots_dir) / paper / figure, meta)


def _configured(meta: dict[str, Any], paper: str, figure: str, conf: Path | None) -> str:
    """The figure's configured recipe, when it is the one ``meta`` records."""
    name, version = figure_recipe(paper, figure, conf)
    if (meta.get("recipe"), meta.get("version", version)) != (name, version):
        raise PlotFailure(
            f"its meta.json records the recipe {str(meta.get('recipe'))[:80]!r} version "
            f"{meta.get('version')!r}, not the configured {name} version {version} "
            "(run the figure again)"
        )
    return name


def _views(recipe: Any, records: dict[str, Any]) -> dict[str, CanonicalView]:
    try:
        return views_from_records(recipe, records)
    except ValueError as exc:
        raise PlotFailure(f"its meta.json's {exc}") from exc


def replot(
    results_dir: Path, plots_dir: Path, conf: Path | None = None
) -> tuple[list[Path], list[str]]:
    """Plot each figure of ``results_dir`` with its configured recipe, recorded params and
    selection; one line per figure. Returns the files drawn and the figures that failed."""
    made: list[Path] = []
    failed: list[str] = []
    for meta_path in sorted(Path(results_dir).glob("*/*.meta.json")):
        where = f"{meta_path.parent.name}/{meta_path.name[: -len('.meta.json')]}"
        try:
            drawn = replot_figure(results_dir, plots_dir, meta_path, conf)
        except Exception as exc:  # one figure's failure does not stop the others
            failed.append(where)
            line = str(exc) if isinstance(exc, PlotFailure) else failure_line(exc)
            print(f"{where}: not drawn: {line}", file=sys.stderr)
            continue
        made += drawn
        pngs = [str(p) for p in drawn if p.suffix == ".png"]
        print(f"{where}: {', '.join(pngs)}")
    return made, failed


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("privrepro-plots", __doc__)
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--plots", type=Path, default=Path("plots"))
    parser.add_argument(
        "--conf", type=Path, default=None, help="config root (default: PRIVREPRO_CONF or conf/)"
    )
    args = parser.parse_args(argv)
    from privrepro.commands import quiet_console_logging

    quiet_console_logging()
    made, failed = replot(args.results, args.plots, args.conf)
    if not made and not failed:
        print(f"no results under {args.results}: run `make figures` first", file=sys.stderr)
    if failed:
        print(f"{len(failed)} figure(s) not drawn: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
