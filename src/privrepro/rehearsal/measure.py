"""Rehearse one figure: the paper profile's code path on stand-ins, capped, measured, predicted.

:func:`rehearse_figure` plans the experiment with the runner's own plan step
(:func:`plan_rehearsal`: ``profile=paper``, the data root at the stand-ins, a scratch store, the
stand-in weights where the profile needs pretrained ones), checks the recipe's memory estimate
against the target machine, and computes the first unit(s) of each cost class with a
:class:`RehearsalCap` as the unit's loops (:mod:`privrepro.loops`). Nothing is written to the run store or the results tables: the row it returns goes
to ``results/rehearsal.csv`` only, with ``data`` saying "rehearsal stand-in".

How the prediction is made (the ``prediction`` column says which case applies):

* each capped loop's full time is ``total × seconds per item`` (inner loops predicted first, see
  :mod:`privrepro.rehearsal.cap`); the unit's is its capped wall time with the top-level loops'
  measured time replaced by their predictions;
* the figure's is, per cost class (:meth:`privrepro.figures.cost_model.CostModel.cost_class`: ip's series
  groups; one class elsewhere, units of a sweep costing alike), the mean predicted time of the
  units run of that class × its number of units; the first unit(s) of each class are run;
* the time before the first loop (reading the full-size files, decoding, building the model) is
  ``load_s``, counted once per unit;
* a unit's work is split into parts (:data:`privrepro.rehearsal.cap.PARTS`: features, tuning,
  training, evaluation), which the recipe names and keys (:meth:`privrepro.figures.cost_model.CostModel.cost_parts`):
  a part other units compute too (a cache of features, pixel arrays or ip base models; a
  tuning study; an ensemble's members) counts once per key (``n_caches``), and once over all
  figures where several figures compute the same one (``cache_keys``); the ``parts`` column
  gives the figure's cost per part name;
* matmuls are priced at the precision the unit computes in
  (:func:`privrepro.training.precision.unit_precision`: on tensor cores in ``tf32``/``bf16``);
* an item too slow for the timeout is *probed* where its cost is affine in its size (a feature
  batch, a training batch, a DP-SGD step): it runs ``probe_samples`` samples (4 × that on the
  next item) and a full item is fitted (:meth:`privrepro.rehearsal.cap.RehearsalCap.item_size`); the rows a loop
  skipped are zero placeholders, so the stages after it run at full size;
* ``lower_bound`` is true where a unit hit the timeout, ended early after a capped loop, or left
  a loop midway: the stages not measured are missing from its prediction.

**The GPU column without a GPU** (``predicted_gpu_s``): every torch operator the capped unit runs
is counted (:mod:`privrepro.rehearsal.device_model`: FLOPs by ``torch.utils.flop_counter``'s
formulas, bytes read and written, the CPU time inside it), and the same prediction is made with
each operator's CPU time replaced by its time at the H100 roofline
(:data:`~privrepro.rehearsal.device_model.H100`); loading, Python and numpy keep the time measured
here. It is a prediction from operation counts, said so in ``prediction``. On a GPU the same
command measures the GPU's own rates (``torch.cuda.max_memory_allocated`` for the peak device
memory) and the operation-count column is a cross-check.
"""

from __future__ import annotations

import json
import logging
import resource
import shutil
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from privrepro.figures.api import UnitContext
from privrepro.figures.cost_model import cost_model_of
from privrepro.rehearsal.cap import PARTS, LoopRecord, RehearsalCap
from privrepro.rehearsal.device_model import DEVICES, H100
from privrepro.runner.plan import FigurePlan, plan_experiment
from privrepro.training.precision import unit_precision

__all__ = [
    "GIB",
    "RehearsalSettings",
    "RehearsalTimeout",
    "UnitCost",
    "figure_total",
    "plan_rehearsal",
    "rehearse_figure",
    "unit_parts",
    "units_to_run",
    "weights_overrides",
]

GIB = 1024**3

#: loop labels counted as steps, epochs, trials (a label containing the word)
KINDS = {
    "trial": ("trial", "study"),
    "epoch": ("epoch",),
    "task": ("task",),
    "step": ("step", "batch", "feature", "draw", "training", "chunk", "pixel", "point"),
}


@dataclass(frozen=True)
class RehearsalSettings:
    """What a rehearsal runs and where.

    Attributes:
        root: the stand-in data root (written by ``make rehearsal-data``).
        scratch: a folder for the rehearsal's own store and caches (never the real ones).
        items: items each capped loop runs.
        units: units of each figure computed.
        unit_timeout_s: a unit still running after this is stopped (its loops so far are kept).
        host_bytes: host memory of the target machine (a figure needing more does not fit).
        device_bytes: device memory of the target GPU.
        device: ``auto``, ``cpu`` or ``cuda``.
        probe_samples: where an item's cost is linear in its size (a batch), it runs this many
            samples and its time is scaled (0: items run whole; :meth:`privrepro.rehearsal.cap.RehearsalCap.item_size`).
        count_operations: count every torch operator for the GPU prediction
            (:mod:`privrepro.rehearsal.device_model`).
        gpu_model: the device model the GPU prediction is priced on, by name
            (:data:`~privrepro.rehearsal.device_model.DEVICES`: H100 SXM, H100 PCIe, A100 SXM
            80GB, V100 SXM2 32GB).
        overrides: Hydra overrides added to every figure's paper profile (e.g.
            ``params.train.precision=tf32``: the cost at another precision); a key a figure
            does not have is added with ``++`` by the caller.
    """

    root: Path
    scratch: Path
    items: int = 2
    units: int = 1
    unit_timeout_s: float = 120.0
    host_bytes: int = 128 * GIB
    device_bytes: int = 80 * GIB
    device: str = "auto"
    probe_samples: int = 4
    count_operations: bool = True
    overrides: tuple[str, ...] = ()
    gpu_model: str = H100.name


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


def weights_overrides(params: Any, root: Path) -> list[str]:
    """``++key=<stand-in file>`` for every backbone whose weights the paper profile needs and
    does not set (the stand-in writers put them where the missing-weights error says)."""
    from privrepro.models.weights import suggested_weights_path, weights_needed

    out = []
    for need in weights_needed(params):
        if need.backbone and not need.value and "[" not in need.key:
            out.append(f"++{need.key}={suggested_weights_path(need.backbone, root)}")
    return out


def _peak_host_bytes() -> int:
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def _kind_of(desc: str) -> str:
    d = desc.lower()
    for kind, words in KINDS.items():
        if any(w in d for w in words):
            return kind
    return "step"


def loop_summary(records: Sequence[LoopRecord]) -> dict[str, Any]:
    """Seconds per step / epoch / trial / task and how many the full run has, per loop kind.

    Per kind, the loop label with the most predicted time is reported; ``n_<kind>`` is its total
    per entry × the number of times the full run enters it (estimated from the enclosing loops'
    totals)."""
    out: dict[str, Any] = {}
    best: dict[str, tuple[float, LoopRecord]] = {}
    for r in records:
        kind = _kind_of(r.desc)
        if r.predicted_s >= best.get(kind, (-1.0, r))[0]:
            best[kind] = (r.predicted_s, r)
    for kind in ("step", "epoch", "task", "trial"):
        if kind in best:
            r = best[kind][1]
            out[f"s_per_{kind}"] = r.seconds_per_item
            out[f"n_{kind}s"] = r.total
    return out


def _describe(records: Sequence[LoopRecord]) -> str:
    seen: dict[tuple[str, int], list[LoopRecord]] = {}
    for r in records:
        seen.setdefault((r.desc, r.depth), []).append(r)
    parts = []
    for (desc, depth), rs in seen.items():
        done = sum(r.done for r in rs)
        total = rs[0].total
        rate = sum(r.seconds_per_item for r in rs) / len(rs)
        parts.append(
            f"{'  ' * depth}{desc}: ran {done} of {total if total is not None else '?'}"
            f" per entry ×{len(rs)}, {rate:.3g} s/item"
        )
    return "; ".join(parts)


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


def units_to_run(classes: Sequence[Any], per_class: int) -> list[int]:
    """Indices of the units a rehearsal runs: the first ``per_class`` units of each cost class
    (:meth:`privrepro.figures.cost_model.CostModel.cost_class`), in the order of the list."""
    seen: dict[str, int] = {}
    out = []
    for i, c in enumerate(classes):
        key = repr(c)
        if seen.get(key, 0) < max(1, per_class):
            seen[key] = seen.get(key, 0) + 1
            out.append(i)
    return out


@dataclass(frozen=True)
class UnitCost:
    """One rehearsed unit's predicted cost (seconds, GPU seconds or FLOPs: one quantity) per
    part of its work (:data:`privrepro.rehearsal.cap.PARTS`), with its cost class and its
    parts' share keys (:func:`unit_parts`)."""

    cost_class: str
    parts: Mapping[str, float]
    keys: Mapping[str, str | None] = field(default_factory=dict)

    @property
    def total(self) -> float:
        """The unit's whole predicted cost."""
        return sum(self.parts.values())


#: a unit's parts as :func:`figure_total` reads them: measured part → (report name, key or None)
UnitParts = Mapping[str, tuple[str, str | None]]


def unit_parts(
    recipe: Any, unit: Mapping[str, Any], experiment: str
) -> dict[str, tuple[str, str | None]]:
    """The parts of ``unit``'s work (:data:`PARTS`) with their report names and share keys,
    from :meth:`privrepro.figures.cost_model.CostModel.cost_parts`: a part not named keeps its measured
    name and is priced per unit; a key becomes its ``repr``; the ``features`` part (a cache) is
    built once per figure when its key is ``None``."""
    declared = cost_model_of(recipe).cost_parts(unit)
    out: dict[str, tuple[str, str | None]] = {}
    for part in PARTS:
        cp = declared.get(part)
        name = part if cp is None else cp.name
        key = None if cp is None or cp.key is None else repr(cp.key)
        if part == "features" and key is None:
            key = experiment
        out[part] = (name, key)
    return out


def figure_total(
    runs: Sequence[UnitCost], classes: Sequence[str], parts: Sequence[UnitParts]
) -> tuple[dict[str, float], dict[str, float]]:
    """A figure's predicted cost from the units it ran: ``(body, shared)``.

    ``body``, per part name: over every unit of the figure (``classes[i]`` is unit i's cost
    class, ``parts[i]`` its parts: :func:`unit_parts`), the mean cost of that part over the
    units run of its class (of all units run when none of its class ran), for each part it
    does not share. ``shared``, per ``"<name> | <key>"``: a shared part's cost, counted once:
    the most any unit run with that key measured, else the most of the units run of the class
    of the key's first unit. The figure's total is the sum of both; equal keys in other figures
    are counted once over the figures (:func:`privrepro.rehearsal.summary.mark_shared_caches`).
    """
    by_class: dict[str, list[UnitCost]] = {}
    for r in runs:
        by_class.setdefault(r.cost_class, []).append(r)
    body: dict[str, float] = {}
    shared: dict[str, float] = {}
    for c, unit in zip(classes, parts, strict=True):
        rs = by_class.get(c) or list(runs)
        for part, (name, key) in unit.items():
            if key is None:
                cost = sum(r.parts.get(part, 0.0) for r in rs) / len(rs)
                body[name] = body.get(name, 0.0) + cost
                continue
            label = f"{name} | {key}"
            if label not in shared:
                same = [r for r in runs if r.keys.get(part) == key] or rs
                shared[label] = max(r.parts.get(part, 0.0) for r in same)
    return body, shared


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


def _overrides(experiment: str, settings: RehearsalSettings) -> list[str]:
    """The paper profile with the data root at the stand-ins and every output in the scratch."""
    paper, figure = experiment.split("/", 1)
    scratch = Path(settings.scratch)
    return [
        "profile=paper",
        f"paths.data_dir={settings.root}",
        f"paths.experiments_dir={scratch / 'experiments'}",
        f"paths.cache_dir={scratch / 'cache' / paper / figure}",
        f"paths.results_dir={scratch / 'results'}",
        f"paths.plots_dir={scratch / 'plots'}",
        *settings.overrides,
    ]


def plan_rehearsal(experiment: str, settings: RehearsalSettings) -> tuple[FigurePlan, list[str]]:
    """The runner's plan of ``experiment`` under the paper profile on the stand-ins (the target
    machine is checked by the caller, not this one), and the ``++`` overrides that point the
    backbones the paper profile needs at the stand-in weights (:func:`weights_overrides`)."""
    base = _overrides(experiment, settings)
    plan = plan_experiment(experiment, base, check=False)
    extra = weights_overrides(plan.params, Path(settings.root))
    if extra:
        plan = plan_experiment(experiment, [*base, *extra], check=False)
    return plan, extra


@dataclass
class _UnitRun:
    """What rehearsing one unit measured."""

    status: str
    wall_s: float
    load_s: float
    cap: RehearsalCap
    note: str = ""
    ended_early: bool = False


def _rehearse_unit(
    plan: FigurePlan, i: int, settings: RehearsalSettings, device: str, timer: bool
) -> _UnitRun:
    """Compute unit ``i`` of ``plan`` under a fresh cap, stopped after the unit timeout."""
    experiment = f"{plan.paper}/{plan.figure}"
    unit = plan.units[i]
    cap = RehearsalCap(
        items=settings.items,
        probe_samples=settings.probe_samples,
        precision=unit_precision(unit),
        gpu=DEVICES[settings.gpu_model],
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
    t0 = time.perf_counter()
    status, note, ended_early = "ok", "", False
    if timer:
        signal.setitimer(signal.ITIMER_REAL, settings.unit_timeout_s)
    try:
        with cap.active(settings.count_operations):
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
    wall = time.perf_counter() - t0
    first = min((r.started for r in cap.records), default=None)
    load = (first - t0) if first is not None else wall
    return _UnitRun(status, wall, load, cap, note, ended_early)


def _quiet_stand_in_log() -> _StandInLog:
    """Listen to the ``privrepro`` logger for the datasets read in stand-in mode."""
    stand_ins = _StandInLog()
    logger = logging.getLogger("privrepro")
    logger.addHandler(stand_ins)
    if logger.level in (logging.NOTSET,) or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    return stand_ins


def _prediction_text(
    row: dict[str, Any], runs: int, units: int, n_caches: int, probe: int, probed: float
) -> str:
    lower = bool(row["lower_bound"])
    return (
        f"CPU: per cost class ({row['cost_classes']}), the mean predicted time of its unit(s) "
        f"run ({runs} in all) × its units ({units} in all), each part other units compute too "
        f"(a cache of features, pixels or ip base models, a tuning study, an ensemble's "
        f"members) counted once per key ({n_caches}; once over all figures where figures share "
        "it); each unit: capped wall time with every "
        "top-level loop's measured time replaced by total × s/item"
        + (
            f"; items probed on {probe} samples and scaled linearly (up to ×{probed:.0f})"
            if probed > 1
            else ""
        )
        + f". GPU: the same loops with each torch operator at the {row['gpu_model']} (FLOPs by "
        "torch.utils.flop_counter, bytes of its inputs and outputs), the rest (loading, Python, "
        "numpy) as measured here: a prediction from operation counts, not a measurement"
        + (
            ". A lower bound: "
            + (
                "a unit hit the timeout"
                if row["status"] == "timeout"
                else "a unit ended early or a loop was left mid-item"
            )
            if lower
            else ""
        )
    )


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
        by_part = run.cap.predict_parts(run.wall_s)
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
    row["parts"] = json.dumps(_parts_of(totals))
    precisions = sorted({run.cap.precision for _, run in runs})
    row["precision"] = ", ".join(precisions)
    row["gpu_model"] = "; ".join(DEVICES[settings.gpu_model].describe(p) for p in precisions)
    ended_early = any(run.ended_early for _, run in runs)
    row["lower_bound"] = (
        row["status"] == "timeout" or ended_early or any(r.interrupted for r in records)
    )
    probed = max((r.scale for r in records), default=1.0)
    row["loops"] = _describe(records)
    row["prediction"] = _prediction_text(
        row, len(runs), len(classes), n_caches, settings.probe_samples, probed
    )


def _parts_of(
    totals: Mapping[str, tuple[dict[str, float], dict[str, float]]],
) -> dict[str, list[float]]:
    """The figure's cost per part name, ``[CPU s, GPU s, TFLOP]``: its unshared parts and its
    shared ones (each key once), as :func:`figure_total` gave them."""
    out: dict[str, list[float]] = {}
    scale = {"cpu": 1.0, "gpu": 1.0, "flops": 1e-12}
    for j, kind in enumerate(("cpu", "gpu", "flops")):
        body, shared = totals[kind]
        for name, value in body.items():
            out.setdefault(name, [0.0, 0.0, 0.0])[j] += value * scale[kind]
        for label, value in shared.items():
            name = label.split(" | ", 1)[0]
            out.setdefault(name, [0.0, 0.0, 0.0])[j] += value * scale[kind]
    return out


def rehearse_figure(experiment: str, settings: RehearsalSettings) -> dict[str, Any]:
    """Rehearse ``experiment`` (``cl/fig5_cosine``) and return its ``results/rehearsal.csv`` row."""
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
        device = resolve_device(settings.device)
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
    try:
        for i in units_to_run(classes, settings.units):
            runs.append((i, _rehearse_unit(plan, i, settings, device, timer=old is not None)))
    finally:
        if old is not None:
            signal.signal(signal.SIGALRM, old)
        logging.getLogger("privrepro").removeHandler(stand_ins)
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
