"""The rehearsal's cost model: a figure's predicted cost from the units it ran.

A unit's work is split into parts (:data:`privrepro.rehearsal.loop_record.PARTS`), which the recipe
names and keys (:func:`unit_parts`); the figure's cost is, per cost class, the mean cost of the
units run of that class × its number of units, a shared part counted once per key
(:func:`figure_total`). The loops' rates and counts are summarised per kind (:func:`loop_summary`)
and the prediction said in words (:func:`prediction_text`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from privrepro.figures.cost_model import cost_model_of
from privrepro.rehearsal.loop_record import PARTS, LoopRecord

__all__ = [
    "KINDS",
    "UnitCost",
    "UnitParts",
    "cost_per_part",
    "describe_loops",
    "figure_total",
    "loop_summary",
    "prediction_text",
    "unit_parts",
    "units_to_run",
]

#: loop labels counted as steps, epochs, trials (a label containing the word)
KINDS = {
    "trial": ("trial", "study"),
    "epoch": ("epoch",),
    "task": ("task",),
    "step": ("step", "batch", "feature", "draw", "training", "chunk", "pixel", "point"),
}


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


def describe_loops(records: Sequence[LoopRecord]) -> str:
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
    part of its work (:data:`privrepro.rehearsal.loop_record.PARTS`), with its cost class and its
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


def prediction_text(
    row: dict[str, Any], runs: int, units: int, n_caches: int, probe: int, probed: float
) -> str:
    lower = bool(row["lower_bound"])
    return (
        f"CPU: per cost class ({row['cost_classes']}), the mean predicted time of its unit(s) "
        f"run ({runs} in all) × its units ({units} in all), each part other units compute too "
        f"(a cache of features, pixels or ip base models, a tuning study, an ensemble's "
        f"members) counted once per key ({n_caches}; once over all figures where figures share "
        "it); each unit: its capped time (the thread's CPU time on a CPU) with every "
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


def cost_per_part(
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
