"""``make tables``: every figure's table, summary and meta derived again from the run store.

    python -m privrepro.runner.make_tables                      # every figure in experiments/
    python -m privrepro.runner.make_tables --figure pb/fig1     # one figure

Each figure is published by the run's own step (:func:`~privrepro.runner.publish.publish`), with
the figure's configured recipe and each profile's canonical units recorded from the config tree
first; one figure's failure is one line and the others go on.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from privrepro.commands import command_parser
from privrepro.config.validation import build_params
from privrepro.figures.api import Figure
from privrepro.runner.figure_tables import (
    DerivedTable,
    failure_line,
    figure_recipe,
    stored_units,
    table_files,
)
from privrepro.store.units import UnitStore, figure_stores


def record_from_config(
    store: UnitStore, recipe: Figure[Any], recipe_id: tuple[str, int], conf: Path | None = None
) -> None:
    """Record in the store the canonical units of each profile the store holds or recorded,
    composed from the config tree ``conf`` (:func:`~privrepro.runner.canonical.record_canonical`):
    ``make tables`` follows a changed or removed profile file."""
    from privrepro.runner.canonical import record_canonical, recorded_profiles
    from privrepro.runner.plan import compose, effective_params
    from privrepro.runner.storages import without_study_locations

    profiles = {u.profile for u in stored_units(store)} | set(recorded_profiles(store))
    for profile in sorted(profiles):
        try:
            cfg = compose(f"{store.paper}/{store.figure}", [f"profile={profile}"], conf)
            params: Any = build_params(recipe.params_type, effective_params(cfg), "params")
            units = [without_study_locations(u) for u in recipe.units(params)]
        except Exception as exc:  # a ConfigError, or any of Hydra's composition errors
            record_canonical(store, profile, recipe_id, error=" ".join(str(exc).split())[:200])
            continue
        record_canonical(store, profile, recipe_id, params, units)


def rebuild(
    store: UnitStore, results_dir: Path, conf: Path | None = None
) -> tuple[DerivedTable, dict[str, Any]]:
    """Derive one figure's table, its canonical summary and its meta
    (:func:`~privrepro.runner.publish.publish`) with the figure's configured recipe
    (:func:`figure_recipe`), each profile's canonical units recorded from the config tree
    ``conf`` first (:func:`record_from_config`)."""
    from privrepro.runner.publish import publish
    from privrepro.runner.recipe_config import load_recipe

    current = figure_recipe(store.paper, store.figure, conf)
    recipe = load_recipe(current[0])
    record_from_config(store, recipe, current, conf)
    done = publish(store, recipe, current, results_dir)
    return done.derived, done.meta


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("privrepro-tables", __doc__)
    parser.add_argument("--experiments", type=Path, default=Path("experiments"))
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--figure", action="append", default=[], help="paper/figure (repeatable)")
    parser.add_argument(
        "--conf", type=Path, default=None, help="config root (default: PRIVREPRO_CONF or conf/)"
    )
    args = parser.parse_args(argv)
    from privrepro.commands import quiet_console_logging

    quiet_console_logging()
    stores = [
        s
        for s in figure_stores(args.experiments)
        if not args.figure or f"{s.paper}/{s.figure}" in args.figure
    ]
    if not stores:
        print(f"no units under {args.experiments}: run `make figures` first", file=sys.stderr)
        return 0
    failed = []
    for store in stores:
        try:
            _, meta = rebuild(store, args.results, conf=args.conf)
        except Exception as exc:  # one figure's failure does not stop the others
            failed.append(f"{store.paper}/{store.figure}")
            print(f"{store.paper}/{store.figure}: failed: {failure_line(exc)}", file=sys.stderr)
            continue
        facts = meta["table"]
        extra = (
            f"; columns for differing parameters: {facts['param_columns']}"
            if facts["param_columns"]
            else ""
        )
        print(
            f"{store.paper}/{store.figure}: {facts['rows']} rows from {facts['units']} units "
            f"(profiles {facts['profiles']}, seeds {facts['seeds']}) -> "
            f"{table_files(args.results, store.paper, store.figure).parquet}{extra}"
        )
    if failed:
        print(f"{len(failed)} figure(s) failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
