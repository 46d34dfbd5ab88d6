"""Run one figure: config → validated params → run units (resumable) → table → plot.

The steps, in order, each before the next can start:

1. **Plan.** :func:`privrepro.runner.plan.plan_config`: the recipe the experiment names, its
   parameter dataclass built from the ``params`` Hydra composed (the recipe's defaults, the
   experiment's values, the profile's, the command line's: what ``--cfg job`` prints), the units;
   any unknown key or out-of-range value raises :class:`~privrepro.config.ConfigError` naming
   key, value and range. The root keys, the device, the weights, the output folders and the
   memory the largest unit is predicted to need are checked too. Nothing has been computed or
   written.
2. **Units.** Each unit dict is hashed with the figure, profile, seed, recipe version and, for a
   unit that reads the data root, the fingerprint of the data it reads; a unit
   whose folder verifies in the store is loaded, the rest are computed and sealed (a folder that
   fails verification is moved aside and computed again).
3. **Table.** Under the figure's lock, ``results/<paper>/<figure>.parquet`` (and its CSV export) is
   derived from every verified unit of the figure in the store, whatever this run computed
   (:mod:`privrepro.runner.figure_tables`); ``<figure>.summary.csv`` is summarised from the
   figure's *canonical* units (:mod:`privrepro.runner.canonical`: for each profile, the units of
   the figure's own parameters, every seed that holds them all), and ``<figure>.meta.json``
   records the run, its units (its *selection*), the canonical views and every unit.
4. **Plot.** ``plots/<paper>/<figure>.png`` and ``.pdf`` show the canonical view of the most
   faithful profile, whatever ran last. A run that is not one seed of its profile's canonical
   view (an ad-hoc run) also gets its own plot, named by what it varied; a sweep's jobs leave
   their selections in the sweep folder for the sweep's plot (:mod:`privrepro.runner.run_views`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from privrepro.config.secrets import redact
from privrepro.config.validation import assumptions_of
from privrepro.data.registry import MissingDataError
from privrepro.figures.api import Figure, UnitContext
from privrepro.runner import figure_tables as tables
from privrepro.runner.canonical import (
    CanonicalView,
    default_view,
    is_canonical_run,
)
from privrepro.runner.environment import launcher_workers, run_environment
from privrepro.runner.plan import compose, plan_config
from privrepro.runner.preflight import PROFILES
from privrepro.runner.run_views import (
    adhoc_stem,
    data_key,
    facet,
    mark_stand_in,
    no_view_reason,
    record_job_selection,
    render,
    retire_default_plot,
)
from privrepro.runner.sweeps import default_invocation
from privrepro.runner.tracking import open_tracker
from privrepro.runner.unit_warnings import library_warnings_to_log
from privrepro.store.units import UnitStore
from privrepro.threads import plan_threads, threads_per_item

__all__ = [
    "PROFILES",
    "FigureRun",
    "adhoc_footer",
    "canonical_footer",
    "clear_temporaries",
    "draw",
    "draw_canonical",
    "footer",
    "mark_stand_in",
    "render",
    "run_config",
    "run_experiment",
]

log = logging.getLogger("privrepro.runner")


@dataclass
class FigureRun:
    """What one run of a figure produced.

    Attributes:
        table: the rows of this run's units (its selection; the default plot and the summary
            show the figure's canonical units, :mod:`privrepro.runner.canonical`).
        plot_paths: the plots this run drew: the default plot, and an ad-hoc run's own.
        table_path: the figure's CSV (the export of its Parquet), which holds every verified unit
            of the figure in the store: ``table_rows`` rows from ``table_units`` units.
    """

    paper: str
    figure: str
    table: pd.DataFrame
    table_path: Path
    plot_paths: list[Path]
    computed: int
    reused: int
    wall_time_s: float
    table_rows: int = 0
    table_units: int = 0


def _jsonable(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    return obj


class _UnitLog:
    """Attach a file handler for the ``privrepro`` logger while a unit computes; third-party
    warnings the researcher cannot act on go there too, not to the console
    (:mod:`privrepro.runner.unit_warnings`)."""

    def __init__(self, path: Path) -> None:
        self.handler = logging.FileHandler(path, encoding="utf-8")
        self.handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        self.logger = logging.getLogger("privrepro")
        self.warnings = library_warnings_to_log()

    def __enter__(self) -> None:
        self.logger.addHandler(self.handler)
        if self.logger.level == logging.NOTSET or self.logger.level > logging.INFO:
            self.logger.setLevel(logging.INFO)
        self.warnings.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.warnings.__exit__(*exc)
        self.logger.removeHandler(self.handler)
        self.handler.close()


def _data_dir_source(cfg: DictConfig) -> str:
    """Where ``paths.data_dir`` came from: command line, ``PRIVREPRO_DATA`` or the default.

    ``conf/config.yaml`` sets it to ``${oc.env:PRIVREPRO_DATA,data}``; any other unresolved
    value was put there by an override."""
    import os

    raw = OmegaConf.to_container(cfg.paths, resolve=False)
    if isinstance(raw, dict) and "oc.env:PRIVREPRO_DATA" not in str(raw.get("data_dir", "")):
        return "paths.data_dir on the command line"
    if os.environ.get("PRIVREPRO_DATA"):
        return "PRIVREPRO_DATA"
    return "the default of paths.data_dir"


def run_config(
    cfg: DictConfig,
    multirun: bool = False,
    repo: Path | None = None,
    command: Mapping[str, Any] | None = None,
    conf: Path | None = None,
) -> FigureRun:
    """Run the figure ``cfg`` describes (a composed root config: what ``--cfg job`` prints).

    ``multirun`` is accepted for the Hydra app; a sweep's jobs and single runs derive the
    figure's table the same way (from the store, under the figure's lock). ``command`` is what
    each unit and the table's meta record of the command that made them
    (:func:`privrepro.runner.sweeps.invocation`; default: this process's command line).
    ``conf`` is the config tree the figure's canonical configurations are composed from
    (default: the running Hydra app's, else :func:`~privrepro.runner.catalog.conf_dir`).
    """
    started = time.perf_counter()
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    plan = plan_config(cfg)  # every check, before any compute
    paper, figure, recipe, params = plan.paper, plan.figure, plan.recipe, plan.params
    profile, seed, force = plan.profile, plan.seed, bool(cfg.get("force", False))
    device, paths = plan.device, cfg.paths
    units, identities, ids, unit_sources = plan.units, plan.identities, plan.unit_ids, plan.sources
    store = UnitStore(Path(paths.experiments_dir), paper, figure)
    recipe_id = plan.recipe_id
    threads = plan_threads(cfg.get("threads", "auto"), launcher_workers() if multirun else 1)
    if threads.warning:
        log.warning(threads.warning)
    env = redact(  # the command as typed may name a storage URL with its password
        {
            **run_environment(device, profile, repo),
            "threads": threads.as_record(),
            **(command or default_invocation()),
        }
    )
    tracker = open_tracker(cfg, paper, figure, profile, seed, units)
    store.sweep_abandoned()

    computed = reused = 0
    show = bool(cfg.get("progress", True))
    from privrepro.progress import ProgressLoops, progress_bar

    bar = progress_bar(
        list(zip(units, identities, ids, unit_sources, strict=True)),
        desc=f"{paper}/{figure}",
        enabled=show and len(units) > 1,
        unit="unit",
    )
    for (unit, identity, uid, source), unit_threads in threads_per_item(bar, threads):
        if not force and store.is_complete(uid):
            reused += 1
            continue
        _same_data(recipe, unit, source, paths, f"as unit {uid} started")  # before its compute
        with store.building(uid, replace=force) as tmp:  # force: replaced once sealed
            ctx = UnitContext(
                seed=seed,
                unit_id=uid,
                profile=profile,
                device=device,
                data_dir=Path(paths.data_dir),
                cache_dir=Path(paths.cache_dir),
                loops=ProgressLoops(show),
            )
            t0, c0 = time.perf_counter(), time.process_time()
            shown = identity["unit"]  # the unit as stored: no study location, no password
            with _UnitLog(tmp / "log.txt"), tracker.unit(uid, shown) as ctx.metrics:
                log.info("unit %s of %s/%s: %s", uid, paper, figure, json.dumps(shown, default=str))
                try:
                    rows = recipe.compute(dict(unit), ctx)
                except MissingDataError as exc:
                    exc.root_from = f"{_data_dir_source(cfg)} ({paths.data_dir})"
                    raise
                if isinstance(rows, pd.DataFrame):  # its outcome, beside its per-step metrics
                    tracker.unit_result(
                        rows.assign(profile=profile, seed=seed, unit_id=uid),
                        lambda t: recipe.summarize(t, params),
                    )
                log.info("unit %s: %d rows in %.2f s", uid, len(rows), time.perf_counter() - t0)
            if not isinstance(rows, pd.DataFrame):
                raise TypeError(f"{type(recipe).__name__}.compute must return a DataFrame")
            _same_data(recipe, unit, source, paths, f"while unit {uid} computed")  # what it read
            unit_env = {
                **env,
                "threads": unit_threads.as_record(),  # auto: planned again before each unit
                "wall_time_s": time.perf_counter() - t0,
                "cpu_time_s": round(time.process_time() - c0, 3),  # every thread's user + sys
                "unit_id": uid,
                "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                # what the unit ran on (its fingerprint, where it read a data root, is part of
                # its identity; the label is not)
                "data": source.label,
                "data_source": asdict(source),
            }
            store.write_unit(tmp, identity, rows, unit_env)
        computed += 1

    files = tables.table_files(Path(paths.results_dir), paper, figure)
    with tables.table_lock(store):
        derived = tables.derive_table(store, recipe_id, dict(zip(ids, unit_sources, strict=True)))
        facts = tables.write_table(derived, Path(paths.results_dir))
        selection = tables.select_units(derived.table, ids)
        lost = sorted(set(ids) - {u.unit_id for u in derived.units})
        if lost:
            raise RuntimeError(
                f"{paper}/{figure}: unit(s) {', '.join(lost)} vanished from the store "
                "while the table was derived (another worker ran force=true?); run again"
            )
        canonical = tables.write_canonical(derived, recipe, files, conf)
        views = canonical.views
        record = {
            "paper": paper,
            "figure": figure,
            "title": recipe.title,
            "kind": recipe.kind,
            "recipe": str(cfg.figure.recipe),
            "version": recipe_id[1],
            "profile": profile,
            "seed": seed,
            "started": started_at,
            "wall_time_s": round(time.perf_counter() - started, 3),
            "units_computed": computed,
            "units_reused": reused,
            "selection": ids,
            "params": _jsonable(params),
            "assumptions": assumptions_of(params),
            "data_sources": tables.data_sources(derived, ids),
            "data_dir": {"path": str(paths.data_dir), "from": _data_dir_source(cfg)},
            "data_key": data_key(identities),
            "source": OmegaConf.to_container(cfg.figure.source, resolve=True)
            if cfg.figure.get("source") is not None
            else {},
            **env,
        }
        record = redact(record)  # params.tuning.storage may be a URL with a password
        tables.write_last_run(store, record)
        meta = tables.write_meta(files, record, derived, facts, canonical)
        plot_paths: list[Path] = []
        if cfg.get("plot", True):
            stem = Path(paths.plots_dir) / paper / figure
            plot_paths = draw_canonical(recipe, derived.table, views, stem, meta)
            job = (command or {}).get("sweep")
            if isinstance(job, Mapping):  # a sweep's job: the sweep's plot shows it
                record_job_selection(
                    Path(str(job["dir"])) / str(job["job"]),
                    {
                        **{k: record[k] for k in ("paper", "figure", "profile", "seed", "params")},
                        "unit_ids": ids,
                        "overrides": _shown_overrides(command),
                        "results_dir": str(paths.results_dir),
                        "plots_dir": str(paths.plots_dir),
                        "git_sha": env.get("git_sha"),
                    },
                )
            elif len(selection) and not is_canonical_run(views, profile, seed, ids):
                overrides = _shown_overrides(command)
                plot_paths += draw(
                    recipe,
                    selection,
                    params,
                    adhoc_stem(Path(paths.plots_dir), paper, figure, overrides, record["data_key"]),
                    meta,
                    caption=adhoc_footer(meta, overrides),
                )
    tracker.figure_done(
        record,
        [files.csv, files.summary, files.meta, *plot_paths],
        ids,
        summary=lambda: recipe.summarize(selection, params),
    )
    wall = time.perf_counter() - started
    return FigureRun(
        paper,
        figure,
        selection,
        files.csv,
        plot_paths,
        computed,
        reused,
        wall,
        table_rows=len(derived.table),
        table_units=len(derived.units),
    )


def _same_data(
    recipe: Figure[Any], unit: Mapping[str, Any], planned: Any, paths: Any, when: str
) -> None:
    """The data ``unit`` reads still has the fingerprint the plan took (its identity names it):
    else :class:`~privrepro.data.provenance.DataChangedError`, and the unit is not stored."""
    if planned.fingerprint is None:
        return
    from privrepro.data.provenance import unchanged_since_plan

    data_dir = Path(paths.data_dir)
    unchanged_since_plan(planned, recipe.data_source(unit, data_dir), str(data_dir), when)


def _shown_overrides(command: Mapping[str, Any] | None) -> list[str]:
    """The command's overrides as a plot and the sweep's records show them: a study's storage
    (where it is kept, not what the run computes) left out, any other credential redacted."""
    overrides = [str(o) for o in (command or {}).get("overrides") or []]
    return redact([o for o in overrides if not o.partition("=")[0].endswith(".storage")])


def footer(meta: Mapping[str, Any], selected_units: int | None = None) -> str:
    """The provenance line under a plot of the run ``meta`` records: figure, profile, and which
    rows of the table it shows (the run's seed and how many of the table's units, when the table
    holds more)."""
    sha = (meta.get("git_sha") or "no-git")[:10]
    text = f"privrepro {meta['paper']}/{meta['figure']} · profile={meta['profile']}"
    held = (meta.get("table") or {}).get("units")
    chosen = len(meta.get("selection") or []) if selected_units is None else selected_units
    if held is not None and held > chosen:
        text += f" · seed={meta.get('seed')} · {chosen} of the table's {held} units"
    return f"{text} · {sha}"


def canonical_footer(meta: Mapping[str, Any], view: CanonicalView) -> str:
    """The line under a default plot: the figure, the profile, and that it shows the figure's own
    parameters at the seeds the store holds them all for."""
    sha = (meta.get("git_sha") or "no-git")[:10]
    seeds = ", ".join(str(s) for s in view.seeds)
    return (
        f"privrepro {meta['paper']}/{meta['figure']} · profile={view.profile} · the figure's "
        f"own parameters, seed{'s' if len(view.seeds) > 1 else ''} {seeds} "
        f"({len(view.unit_ids)} units) · {sha}"
    )


def adhoc_footer(meta: Mapping[str, Any], overrides: Sequence[str]) -> str:
    """The line under an ad-hoc run's own plot: what it was run with, and that it is not the
    figure's default plot."""
    from privrepro.runner.run_views import varied_overrides

    sha = (meta.get("git_sha") or "no-git")[:10]
    varied = " ".join(varied_overrides(overrides)) or "the figure's parameters"
    return (
        f"privrepro {meta['paper']}/{meta['figure']} · ad-hoc run: {varied} · "
        f"not the figure's default plot · {sha}"
    )


def clear_temporaries(stem: Path) -> None:
    """Temporaries a killed save of this plot left (``.tmp-<figure>.png-*``, older than a minute:
    a save takes well under that) and any older than an hour in its folder."""
    from privrepro.store.atomic import leftover_temporaries

    folder = Path(stem).parent
    names = (f"{Path(stem).name}.png", f"{Path(stem).name}.pdf")
    for stale in leftover_temporaries(folder, names, older_than_s=60.0) + leftover_temporaries(
        folder, older_than_s=3600.0
    ):
        stale.unlink(missing_ok=True)


def draw(
    recipe: Figure[Any],
    table: pd.DataFrame,
    params: Any,
    stem: Path,
    meta: Mapping[str, Any],
    caption: str | None = None,
) -> list[Path]:
    """Plot the table with the recipe (:func:`render`) and save PNG and PDF with a provenance
    footer (``caption``, default :func:`footer`); leftover temporaries of the plot are removed
    first."""
    from privrepro.plotting.style import save_figure

    clear_temporaries(stem)
    fig = render(recipe, table, params, meta)
    return save_figure(fig, stem, caption=caption or footer(meta))


def draw_canonical(
    recipe: Figure[Any],
    table: pd.DataFrame,
    views: Mapping[str, CanonicalView],
    stem: Path,
    meta: Mapping[str, Any],
) -> list[Path]:
    """The figure's default plot: the canonical view of the most faithful profile the table
    holds (:func:`~privrepro.runner.canonical.default_view`); one seed as the recipe draws it,
    several as one panel per seed. Nothing is drawn when no profile has a canonical view."""
    from privrepro.plotting.style import save_figure

    view = default_view(views)
    if view is None:
        retire_default_plot(stem, no_view_reason(meta))
        return []
    shown = {**meta, "profile": view.profile}
    caption = canonical_footer(meta, view)
    if len(view.seeds) == 1:
        rows = tables.select_units(table, view.unit_ids)
        return draw(recipe, rows, view.params, stem, shown, caption=caption)
    clear_temporaries(stem)
    panels = [
        (
            f"seed {seed}",
            render(recipe, tables.select_units(table, view.seed_ids(seed)), view.params, shown),
        )
        for seed in view.seeds
    ]
    fig = facet(panels, f"{meta['paper']}/{meta['figure']} — profile {view.profile}, every seed")
    return save_figure(fig, stem, caption=caption)


def run_experiment(
    experiment: str, overrides: Sequence[str] = (), conf: Path | None = None
) -> FigureRun:
    """Compose and run one experiment in this process (what tests and ``make figures`` use)."""
    command = {
        "command": default_invocation()["command"],
        "overrides": [f"experiment={experiment}", *overrides],
    }
    return run_config(compose(experiment, overrides, conf), command=command, conf=conf)
