"""Run one figure: plan (:mod:`~privrepro.runner.plan`, every check before compute) → execute
(each unit the store lacks, computed and sealed) → publish (:mod:`~privrepro.runner.publish`)."""

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
from privrepro.runner.canonical import record_canonical, select_units
from privrepro.runner.environment import launcher_workers, run_environment
from privrepro.runner.plan import FigurePlan, compose, plan_config
from privrepro.runner.publish import publish, shown_overrides
from privrepro.runner.run_views import data_key, own_configuration, record_job_selection
from privrepro.runner.sweeps import default_invocation
from privrepro.runner.tracking import open_tracker
from privrepro.runner.unit_warnings import library_warnings_to_log
from privrepro.store.units import UnitStore
from privrepro.threads import plan_threads, threads_per_item

log = logging.getLogger("privrepro.runner")


@dataclass
class FigureRun:
    """What one run of a figure produced: ``table``, the rows of its own units; ``table_path``,
    the figure's CSV of every verified unit (``table_rows`` rows, ``table_units`` units)."""

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
    """The unit's log file, for the ``privrepro`` logger and third-party warnings, while it
    computes (:mod:`privrepro.runner.unit_warnings`)."""

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
    """Where ``paths.data_dir`` came from: command line, ``PRIVREPRO_DATA`` or the default
    (``conf/config.yaml``'s ``${oc.env:PRIVREPRO_DATA,data}``)."""
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
) -> FigureRun:
    """Run the figure ``cfg`` describes: plan, compute the units the store lacks, publish.

    ``command``: what the units and the meta record of the command (default: this process's);
    when it overrides only the profile, seed and where or how it runs, the plan's units are
    recorded as the profile's canonical ones (:func:`~.canonical.record_canonical`).
    """
    started, started_at = (
        time.perf_counter(),
        datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    plan = plan_config(cfg)  # every check, before any compute
    paths, store = cfg.paths, UnitStore(Path(cfg.paths.experiments_dir), plan.paper, plan.figure)
    if command is not None and own_configuration(command.get("overrides") or []):
        units = [i["unit"] for i in plan.identities]  # as stored: no study location
        record_canonical(store, plan.profile, plan.recipe_id, plan.params, units)
    threads = plan_threads(cfg.get("threads", "auto"), launcher_workers() if multirun else 1)
    if threads.warning:
        log.warning(threads.warning)
    invoked = dict(command or default_invocation())
    env = redact(  # the command as typed may name a storage URL with its password
        {
            **run_environment(plan.device, plan.profile, repo),
            "threads": threads.as_record(),
            **invoked,
        }
    )
    tracker = open_tracker(cfg, plan.paper, plan.figure, plan.profile, plan.seed, plan.units)
    computed, reused = _execute(plan, store, env, threads, tracker)
    record = {
        **_run_record(plan, started_at, computed, reused, started),
        **{"data_dir": {"path": str(paths.data_dir), "from": _data_dir_source(cfg)}},
        **env,
    }
    job = invoked.get("sweep")
    plots = Path(paths.plots_dir) if cfg.get("plot", True) else None
    done = publish(
        store,
        plan.recipe,
        plan.recipe_id,
        Path(paths.results_dir),
        plots,
        run=record,
        sources=dict(zip(plan.unit_ids, plan.sources, strict=True)),
        own_plot=not isinstance(job, Mapping),
    )
    if plots is not None and isinstance(job, Mapping):  # a sweep's job: the sweep's plot shows it
        _record_job(job, done.meta, paths, plan.unit_ids)
    selection = select_units(done.derived.table, plan.unit_ids)
    tracker.figure_done(
        done.meta,
        [done.files.csv, done.files.summary, done.files.meta, *done.plots],
        plan.unit_ids,
        summary=lambda: plan.recipe.summarize(selection, plan.params),
    )
    return FigureRun(
        plan.paper,
        plan.figure,
        selection,
        done.files.csv,
        done.plots,
        computed,
        reused,
        time.perf_counter() - started,
        table_rows=len(done.derived.table),
        table_units=len(done.derived.units),
    )


def _run_record(
    plan: FigurePlan, started_at: str, computed: int, reused: int, started: float
) -> dict[str, Any]:
    """What ``meta.json`` and the store's ``last_run.json`` keep of the run (top level)."""
    cfg, recipe = plan.cfg, plan.recipe
    source = cfg.figure.get("source")
    return {
        "paper": plan.paper,
        "figure": plan.figure,
        "title": recipe.title,
        "kind": recipe.kind,
        "recipe": str(cfg.figure.recipe),
        "version": plan.recipe_id[1],
        "profile": plan.profile,
        "seed": plan.seed,
        "started": started_at,
        "wall_time_s": round(time.perf_counter() - started, 3),
        "units_computed": computed,
        "units_reused": reused,
        "selection": plan.unit_ids,
        "params": _jsonable(plan.params),
        "assumptions": assumptions_of(plan.params),
        "data_key": data_key(plan.identities),
        "source": OmegaConf.to_container(source, resolve=True) if source is not None else {},
    }


def _record_job(
    job: Mapping[str, Any], meta: Mapping[str, Any], paths: Any, ids: list[str]
) -> None:
    """Leave a sweep job's units in its folder for the sweep's plot."""
    record_job_selection(
        Path(str(job["dir"])) / str(job["job"]),
        {
            **{k: meta[k] for k in ("paper", "figure", "profile", "seed", "params")},
            "unit_ids": ids,
            "overrides": shown_overrides(meta),
            "results_dir": str(paths.results_dir),
            "plots_dir": str(paths.plots_dir),
            "git_sha": meta.get("git_sha"),
        },
    )


def _execute(
    plan: FigurePlan, store: UnitStore, env: Mapping[str, Any], threads: Any, tracker: Any
) -> tuple[int, int]:
    """Compute each unit of the plan the store does not hold verified (all of them with
    ``force``); return how many were computed and how many reused."""
    cfg = plan.cfg
    force, show = bool(cfg.get("force", False)), bool(cfg.get("progress", True))
    store.sweep_abandoned()
    from privrepro.progress import progress_bar

    bar = progress_bar(
        list(zip(plan.units, plan.identities, plan.unit_ids, plan.sources, strict=True)),
        desc=f"{plan.paper}/{plan.figure}",
        enabled=show and len(plan.units) > 1,
        unit="unit",
    )
    computed = reused = 0
    for (unit, identity, uid, source), unit_threads in threads_per_item(bar, threads):
        if not force and store.is_complete(uid):
            reused += 1
            continue
        _same_data(plan.recipe, unit, source, cfg.paths, f"as unit {uid} started")
        with store.building(uid, replace=force) as tmp:  # force: replaced once sealed
            rows, unit_env = _compute_unit(plan, unit, identity, uid, tmp, tracker, show)
            _same_data(plan.recipe, unit, source, cfg.paths, f"while unit {uid} computed")
            unit_env.update(
                threads=unit_threads.as_record(),  # auto: planned again before each unit
                unit_id=uid,
                finished=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                # what the unit ran on (its fingerprint, where it read a data root, is part of
                # its identity; the label is not)
                data=source.label,
                data_source=asdict(source),
            )
            store.write_unit(tmp, identity, rows, {**env, **unit_env})
        computed += 1
    return computed, reused


def _compute_unit(
    plan: FigurePlan,
    unit: Mapping[str, Any],
    identity: Mapping[str, Any],
    uid: str,
    tmp: Path,
    tracker: Any,
    show: bool,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One unit's rows, computed with its log in ``tmp``, and its times."""
    cfg, recipe = plan.cfg, plan.recipe
    paths = cfg.paths
    from privrepro.progress import ProgressLoops

    ctx = UnitContext(
        seed=plan.seed,
        unit_id=uid,
        profile=plan.profile,
        device=plan.device,
        data_dir=Path(paths.data_dir),
        cache_dir=Path(paths.cache_dir),
        loops=ProgressLoops(show),
    )
    t0, c0 = time.perf_counter(), time.process_time()
    shown = identity["unit"]  # the unit as stored: no study location, no password
    with _UnitLog(tmp / "log.txt"), tracker.unit(uid, shown) as ctx.metrics:
        log.info(
            "unit %s of %s/%s: %s", uid, plan.paper, plan.figure, json.dumps(shown, default=str)
        )
        try:
            rows = recipe.compute(dict(unit), ctx)
        except MissingDataError as exc:
            exc.root_from = f"{_data_dir_source(cfg)} ({paths.data_dir})"
            raise
        if isinstance(rows, pd.DataFrame):  # its outcome, beside its per-step metrics
            tracker.unit_result(
                rows.assign(profile=plan.profile, seed=plan.seed, unit_id=uid),
                lambda t: recipe.summarize(t, plan.params),
            )
        log.info("unit %s: %d rows in %.2f s", uid, len(rows), time.perf_counter() - t0)
    if not isinstance(rows, pd.DataFrame):
        raise TypeError(f"{type(recipe).__name__}.compute must return a DataFrame")
    return rows, {
        "wall_time_s": time.perf_counter() - t0,
        "cpu_time_s": round(time.process_time() - c0, 3),  # every thread's user + sys
    }


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


def run_experiment(
    experiment: str, overrides: Sequence[str] = (), conf: Path | None = None
) -> FigureRun:
    """Compose and run one experiment in this process (what tests and ``make figures`` use)."""
    command = {
        "command": default_invocation()["command"],
        "overrides": [f"experiment={experiment}", *overrides],
    }
    return run_config(compose(experiment, overrides, conf), command=command)
