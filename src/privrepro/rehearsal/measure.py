"""Rehearse one figure: the paper profile's code path on stand-ins, capped, measured, predicted.

:func:`rehearse_figure` plans the experiment with the runner's own plan step
(:func:`~privrepro.rehearsal.settings.plan_rehearsal`), checks the recipe's memory estimate
against the target machine, and computes the first unit(s) of each cost class with a
:class:`~privrepro.rehearsal.cap.RehearsalCap` as the unit's loops (:mod:`privrepro.loops`),
each stopped after the unit timeout. Nothing is written to the
run store or the results tables: the row it returns goes to ``results/rehearsal.csv`` only, with
``data`` saying "rehearsal stand-in". How the CPU and GPU predictions are made (cost classes,
shared parts, probed items, lower bounds, the GPU column from operation counts) is in
``docs/rehearsal.md`` ("The prediction"); the cost model is :mod:`~privrepro.rehearsal.figure_cost`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import resource
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from privrepro.figures.api import UnitContext
from privrepro.figures.cost_model import cost_model_of
from privrepro.rehearsal.cap import RehearsalCap
from privrepro.rehearsal.device_model import DEVICES
from privrepro.rehearsal.figure_cost import (
    UnitCost,
    UnitParts,
    cost_per_part,
    describe_loops,
    figure_total,
    loop_summary,
    prediction_text,
    unit_parts,
    units_to_run,
)
from privrepro.rehearsal.film_rows import film_row, pass_cost
from privrepro.rehearsal.settings import RehearsalSettings, plan_rehearsal
from privrepro.rehearsal.summary import FILM_TUNING
from privrepro.runner.plan import FigurePlan
from privrepro.runner.preflight import peak_device_memory
from privrepro.threads import use_threads
from privrepro.training.precision import unit_precision

__all__ = ["STUCK_GRACE_S", "RehearsalTimeout", "rehearse_figure", "unit_clock", "watch_unit"]

#: seconds a unit may stay past its timeout inside one call that the timer cannot interrupt (a
#: long numpy or LAPACK call: Python runs the timer's handler only when the call returns) before
#: the rehearsal takes what it measured so far as the unit's row, a lower bound
STUCK_GRACE_S = 60.0


class RehearsalTimeout(BaseException):
    """A capped unit ran past :attr:`RehearsalSettings.unit_timeout_s` (a ``BaseException``,
    so that no library ``except Exception`` swallows it)."""


class _StandInLog(logging.Handler):
    """Collect the datasets the loaders report reading in rehearsal stand-in mode."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.datasets: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if "rehearsal stand-in mode" in msg:
            self.datasets.add(msg.split(":", 1)[0].strip())


def _peak_host_bytes() -> int:
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def _where(frame: FrameType | None) -> str:
    """The innermost ``privrepro`` function on the stack: the stage a timeout stopped."""
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name.startswith("privrepro.") and not name.startswith("privrepro.rehearsal"):
            return f"{name}:{frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise RehearsalTimeout(_where(frame))


def _is_oom(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def _table_problems(table: Any, unit: dict[str, Any], paper: str, figure: str) -> list[str]:
    """How a unit's table breaks its figure's schema (types, NaN, ranges, values), with what the
    store adds to it: the runner's bookkeeping columns and the unit's scalar parameters."""
    import pandas as pd

    from privrepro.figures.table_schema import BOOKKEEPING, check_table, load_schema

    schema = load_schema(paper, figure)
    if schema is None or not isinstance(table, pd.DataFrame):
        return []
    full = table.copy()
    for name, kind in BOOKKEEPING.items():
        if name not in full:
            full[name] = 0 if kind == "int" else "x"
    for name, value in unit.items():
        if name not in full and isinstance(value, (bool, int, float, str)):
            full[name] = value
    # a column may come from another unit of the figure (pb Fig. 5's panels): only the figure's
    # whole table must hold every column
    return [p for p in check_table(full, schema) if not p.endswith("is missing")]


@dataclass
class _UnitRun:
    """What rehearsing one unit measured: its wall time (``wall_s``), its time on the cap's
    clock (``clock_s``: what the predictions use, :func:`unit_clock`) and the clock's time
    before its first loop (``load_s``)."""

    status: str
    wall_s: float
    load_s: float
    cap: RehearsalCap
    note: str = ""
    ended_early: bool = False
    clock_s: float = 0.0

    @classmethod
    def measured(
        cls,
        status: str,
        wall: float,
        spent: float,
        c0: float,
        cap: RehearsalCap,
        note: str,
        ended_early: bool,
    ) -> _UnitRun:
        """The run of a unit started at ``c0`` on the cap's clock that spent ``spent`` there:
        its time before its first loop (``load_s``) read from the cap's records."""
        first = min((r.started for r in cap.records), default=None)
        load = (first - c0) if first is not None else spent
        return cls(status, wall, load, cap, note, ended_early, spent)


def _clock_of(clock: Callable[[], float], thread: int) -> float:
    """``clock`` read for the thread ``thread`` from another thread: its CPU time where
    ``clock`` is the thread CPU clock, else ``clock`` itself (the wall)."""
    if clock is time.thread_time and hasattr(time, "pthread_getcpuclockid"):
        return time.clock_gettime(time.pthread_getcpuclockid(thread))
    return clock()


@contextlib.contextmanager
def watch_unit(
    cap: RehearsalCap,
    after_s: float,
    stuck: Callable[[_UnitRun], None] | None,
    label: str = "unit",
) -> Iterator[None]:
    """Watch the unit computed in the ``with`` block: still running ``after_s`` seconds (wall)
    after it started, it is inside a call the unit timeout could not interrupt, and ``stuck`` is
    called, from the watching thread, with what the cap measured so far as a ``timeout`` run
    (the loops still open dropped: :meth:`RehearsalCap.drop_open_loops`; the unit's time so far
    on the cap's clock, read for the unit's thread, counts once, unscaled: a lower bound). The
    caller's ``stuck`` writes the row and ends the process; ``None``: no watching."""
    if stuck is None:
        yield
        return
    thread = threading.get_ident()
    t0, c0 = time.perf_counter(), _clock_of(cap.clock, thread)
    lock, finished = threading.Lock(), [False]

    def fire() -> None:
        with lock:
            if finished[0]:
                return
            finished[0] = True
        where = _where(sys._current_frames().get(thread))
        spent = _clock_of(cap.clock, thread) - c0
        cap.drop_open_loops()
        note = (
            f"{label} still running {after_s:g} s after it started, inside {where} (one call "
            "the unit timeout cannot interrupt): what it measured until then is kept, a lower "
            "bound"
        )
        stuck(_UnitRun.measured("timeout", time.perf_counter() - t0, spent, c0, cap, note, True))

    timer = threading.Timer(after_s, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            finished[0] = True
        timer.cancel()


def unit_clock(device: str) -> Callable[[], float]:
    """The clock a unit's times are measured on (:attr:`RehearsalCap.clock`): on the CPU the
    thread's CPU time (:func:`time.thread_time`), which a unit computing on one thread
    (:attr:`RehearsalSettings.threads` = 1) spends whatever the machine's load; on a GPU
    (``cuda``) the wall clock (:func:`time.perf_counter`), since the kernels run on the device
    while the thread waits, and the thread's CPU time would not see them."""
    return time.perf_counter if device == "cuda" else time.thread_time


def _rehearse_unit(
    plan: FigurePlan,
    i: int,
    settings: RehearsalSettings,
    device: str,
    timer: bool,
    stuck: Callable[[_UnitRun], None] | None = None,
) -> _UnitRun:
    """Compute unit ``i`` of ``plan`` under a fresh cap, stopped after the unit timeout (and,
    inside a call the timeout cannot interrupt, handed to ``stuck``: :func:`watch_unit`)."""
    experiment = f"{plan.paper}/{plan.figure}"
    unit = plan.units[i]
    cap = RehearsalCap(
        items=settings.items,
        probe_samples=settings.probe_samples,
        precision=unit_precision(unit),
        gpu=DEVICES[settings.gpu_model],
        clock=unit_clock(device),
    )
    ctx = UnitContext(
        seed=0,
        unit_id=f"rehearsal-{experiment}-{i}",
        profile="paper",
        device=device,
        data_dir=Path(settings.root),
        cache_dir=Path(settings.scratch) / "cache" / plan.paper / plan.figure,
        loops=cap,
    )
    t0, c0 = time.perf_counter(), cap.clock()
    status, note, ended_early = "ok", "", False
    if timer:  # the timeout is wall time: what the rehearsal may take, not what a unit costs
        signal.setitimer(signal.ITIMER_REAL, settings.unit_timeout_s)
    watch = watch_unit(cap, settings.unit_timeout_s + STUCK_GRACE_S, stuck, f"unit {i}")
    try:
        with watch, use_threads(settings.threads), cap.active(settings.count_operations):
            table = plan.recipe.compute(dict(unit), ctx)
        problems = _table_problems(table, unit, plan.paper, plan.figure)
        if problems:  # the cap must never leave a wrong-shaped table
            status = "error"
            note = f"unit {i}'s capped table breaks its schema: {problems}"[:500]
    except RehearsalTimeout as stop:
        status = "timeout"
        note = (
            f"unit {i} stopped after {settings.unit_timeout_s:.0f} s in {stop} "
            "(a stage with no capped loop, or one item longer than the timeout)"
        )
    except Exception as exc:
        if _is_oom(exc):
            status = "does not fit (memory)"
        elif cap.capped:
            ended_early = True
            note = (
                f"unit {i} ended after a capped loop (what follows is not measured: "
                f"the prediction is a lower bound): {type(exc).__name__}: {exc}"[:300]
            )
        else:
            status = "error"
            note = f"{type(exc).__name__}: {exc}"[:500]
    finally:
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
    wall, spent = time.perf_counter() - t0, cap.clock() - c0
    return _UnitRun.measured(status, wall, spent, c0, cap, note, ended_early)


def _quiet_stand_in_log() -> _StandInLog:
    """Listen to the ``privrepro`` logger for the datasets read in stand-in mode."""
    stand_ins = _StandInLog()
    logger = logging.getLogger("privrepro")
    logger.addHandler(stand_ins)
    if logger.level in (logging.NOTSET,) or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    return stand_ins


def _predictions(
    row: dict[str, Any],
    runs: Sequence[tuple[int, _UnitRun]],
    classes: Sequence[str],
    parts: Sequence[UnitParts],
    settings: RehearsalSettings,
) -> None:
    """Fill ``row`` with the figure's measured rates and predicted cost from its units run."""
    costs: dict[str, list[UnitCost]] = {"cpu": [], "gpu": [], "flops": []}
    for i, run in runs:
        by_part = run.cap.predict_parts(run.clock_s)
        keys = {part: key for part, (_, key) in parts[i].items()}
        for j, kind in enumerate(("cpu", "gpu", "flops")):
            values = {part: v[j] for part, v in by_part.items()}
            costs[kind].append(UnitCost(classes[i], values, keys))
    records = [r for _, run in runs for r in run.cap.records]
    row["units_run"] = len(runs)
    row["capped_wall_s"] = sum(run.wall_s for _, run in runs)
    row["load_s"] = sum(run.load_s for _, run in runs) / len(runs)
    row["s_per_unit"] = sum(c.total for c in costs["cpu"]) / len(costs["cpu"])
    row.update(loop_summary(records))
    # a shared part (a cache, a study, an ensemble's members) runs once per key, not per unit
    totals = {kind: figure_total(c, classes, parts) for kind, c in costs.items()}
    n_caches = len(totals["cpu"][1])
    row["n_caches"] = n_caches
    row["cost_classes"] = len(set(classes))
    row["cache_s"] = sum(totals["cpu"][1].values())
    row["predicted_s"] = sum(totals["cpu"][0].values()) + row["cache_s"]
    row["cache_gpu_s"] = sum(totals["gpu"][1].values())
    row["predicted_gpu_s"] = sum(totals["gpu"][0].values()) + row["cache_gpu_s"]
    flops = sum(totals["flops"][0].values()) + sum(totals["flops"][1].values())
    row["predicted_tflop"] = flops / 1e12
    row["cache_keys"] = json.dumps(
        {
            k: [v, totals["gpu"][1][k], totals["flops"][1][k] / 1e12]
            for k, v in totals["cpu"][1].items()
        }
    )
    row["parts"] = json.dumps(cost_per_part(totals))
    precisions = sorted({run.cap.precision for _, run in runs})
    row["precision"] = ", ".join(precisions)
    row["gpu_model"] = "; ".join(DEVICES[settings.gpu_model].describe(p) for p in precisions)
    ended_early = any(run.ended_early for _, run in runs)
    row["lower_bound"] = (
        row["status"] == "timeout" or ended_early or any(r.interrupted for r in records)
    )
    probed = max((r.scale for r in records), default=1.0)
    row["loops"] = describe_loops(records)
    row["prediction"] = prediction_text(
        row, len(runs), len(classes), n_caches, settings.probe_samples, probed
    )


def _priced_film_row(
    row: dict[str, Any], plan: FigurePlan, settings: RehearsalSettings
) -> dict[str, Any]:
    """A cl PEFT figure's row priced from its FiLM image-passes (:mod:`.film_rows`), in the
    precision and at the physical batch of its first FiLM unit."""
    from privrepro.continual.peft import PeftRun

    film = [u for u in plan.units if PeftRun.from_unit(u).kind == "film"]
    first = film[0] if film else plan.units[0]
    batch = int(first.get("film", {}).get("physical_batch", 256))
    cost = pass_cost(
        unit_precision(first),
        batch,
        settings.gpu_model,
        cache=Path(settings.scratch) / "film-pass-cost.json",
    )
    row["device"] = None  # nothing ran
    row["data"] = "none read (priced from the units' grid)"
    return film_row(row, plan.units, cost)


def rehearse_figure(
    experiment: str,
    settings: RehearsalSettings,
    on_stuck: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Rehearse ``experiment`` (``cl/fig5_cosine``) and return its ``results/rehearsal.csv`` row.

    ``on_stuck``: where a unit stays inside one call past its timeout (:func:`watch_unit`), the
    row of what was measured until then (a lower bound) is handed to it from another thread,
    which must end the process (the figure's process writes it and exits); ``None``: no
    watching."""
    from privrepro.runner.environment import resolve_device

    scratch = Path(settings.scratch)
    paper, figure = experiment.split("/", 1)
    row: dict[str, Any] = {
        "paper": paper,
        "figure": figure,
        "experiment": experiment,
        "profile": "paper",
        "data": "rehearsal stand-in",
        "status": "error",
    }
    t_start = time.perf_counter()
    try:
        plan, extra = plan_rehearsal(experiment, settings)
        row["overrides"] = " ".join([*settings.overrides, *extra])
        row["n_units"] = len(plan.units)
        est = plan.recipe.estimate_memory(plan.params)
        if est is not None:
            row["estimated_host_bytes"] = est.bytes
            if est.bytes > settings.host_bytes:
                row["status"] = "does not fit (host, estimated)"
                row["note"] = f"{est.key} = {est.value}: {est.detail}"
                return row
        peak = peak_device_memory(plan.recipe, plan.units)  # the plan step's, shapes only
        if peak is not None:
            row["estimated_device_bytes"] = peak[1].bytes
        device = resolve_device(settings.device)
        if settings.price_film and experiment in FILM_TUNING:
            row = _priced_film_row(row, plan, settings)
            row["rehearsal_wall_s"] = time.perf_counter() - t_start
            return row
    except Exception as exc:  # a configuration that cannot even be composed is a row, too
        row["note"] = f"{type(exc).__name__}: {exc}"[:500]
        return row
    row["device"] = device
    # the figure starts from no cache, as the full run does: a cache left by an earlier rehearsal
    # holds placeholders (rows a capped loop skipped) and would hide the stage that builds it
    shutil.rmtree(scratch / "cache" / paper / figure, ignore_errors=True)
    cuda = device == "cuda"
    if cuda:
        import torch

        torch.cuda.reset_peak_memory_stats()
    recipe = plan.recipe
    classes = [repr(cost_model_of(recipe).cost_class(u)) for u in plan.units]
    parts = [unit_parts(recipe, u, experiment) for u in plan.units]
    stand_ins = _quiet_stand_in_log()
    old = signal.signal(signal.SIGALRM, _alarm) if hasattr(signal, "SIGALRM") else None
    runs: list[tuple[int, _UnitRun]] = []

    def finish(runs: list[tuple[int, _UnitRun]]) -> dict[str, Any]:
        return _finish_row(row, runs, classes, parts, settings, stand_ins, cuda, t_start)

    try:
        for i in units_to_run(classes, settings.units):
            stuck = None if on_stuck is None else _when_stuck(on_stuck, finish, runs, i)
            runs.append((i, _rehearse_unit(plan, i, settings, device, old is not None, stuck)))
    finally:
        if old is not None:
            signal.signal(signal.SIGALRM, old)
        logging.getLogger("privrepro").removeHandler(stand_ins)
    return finish(runs)


def _when_stuck(
    on_stuck: Callable[[dict[str, Any]], None],
    finish: Callable[[list[tuple[int, _UnitRun]]], dict[str, Any]],
    runs: list[tuple[int, _UnitRun]],
    i: int,
) -> Callable[[_UnitRun], None]:
    """What to do when unit ``i`` is stuck: the row of the units run and its partial run."""

    def stuck(run: _UnitRun) -> None:
        on_stuck(finish([*runs, (i, run)]))

    return stuck


def _finish_row(
    row: dict[str, Any],
    runs: list[tuple[int, _UnitRun]],
    classes: Sequence[str],
    parts: Sequence[UnitParts],
    settings: RehearsalSettings,
    stand_ins: _StandInLog,
    cuda: bool,
    t_start: float,
) -> dict[str, Any]:
    """The figure's row from its units run: status, data read, predictions, memory, notes."""
    row["status"] = next((run.status for _, run in runs if run.status != "ok"), "ok")
    if stand_ins.datasets:
        row["data"] = "rehearsal stand-in (" + ", ".join(sorted(stand_ins.datasets)) + ")"
    else:
        row["data"] = "rehearsal stand-in (no data file read)"
    _predictions(row, runs, classes, parts, settings)
    row["peak_host_bytes"] = _peak_host_bytes()
    row["peak_device_bytes"] = 0
    if cuda:
        import torch

        row["peak_device_bytes"] = int(torch.cuda.max_memory_allocated())
    row["fits_host"] = row["peak_host_bytes"] <= settings.host_bytes
    row["fits_device"] = row["peak_device_bytes"] <= settings.device_bytes
    if row["status"] == "ok" and not (row["fits_host"] and row["fits_device"]):
        row["status"] = "does not fit (measured)"
    row["note"] = "; ".join(run.note for _, run in runs if run.note)[:1000]
    row["rehearsal_wall_s"] = time.perf_counter() - t_start
    return row
