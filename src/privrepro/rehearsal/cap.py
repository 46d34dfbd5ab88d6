"""The rehearsal's compute cap: every long loop runs a few items, and the rest is predicted.

A rehearsal runs the paper profile's own code path. The one place it differs is
:meth:`privrepro.figures.api.UnitContext.progress`, which every long loop of a unit already goes
through (feature batches, epochs, optimiser steps, tasks, trials, draws): when the context holds
a :class:`RehearsalCap`, each loop yields its first ``items`` items and stops, and the cap records
how long they took, how many the loop would have run, and what it skipped.

Loops nest (steps inside epochs inside tasks). A loop's predicted full time is

    total × (own seconds per item + predicted seconds of its inner loops per item),

where the *own* time is the measured time minus the time spent in its (capped) inner loops; the
prediction of an outer loop therefore uses its inner loops' predicted full cost, not their capped
time. The unit's prediction is its measured wall time with each top-level loop's measured time
replaced by its prediction (the time outside loops — loading, preprocessing, evaluation that is
not a loop — counts once, as measured).

Truncating a loop can leave what it builds incomplete (a feature array of a few batches): the
code after it may then fail on shapes. The rehearsal counts such a failure, after at least one
loop was capped, as the end of what could be measured (``ended_by``), not as a failure of the
figure; an error before any cap is a real error.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CACHE_LOOPS", "LoopRecord", "RehearsalCap", "is_cache_loop"]


#: labels of loops that build a cache shared by later units and figures: cl's backbone features
#: (``<cache_dir>/cl/features``) and FiLM pixel arrays (``<cache_dir>/cl/images``)
CACHE_LOOPS = ("features", " pixels")


def is_cache_loop(desc: str) -> bool:
    """Whether the loop labelled ``desc`` builds a shared cache (see :data:`CACHE_LOOPS`)."""
    return desc == "features" or desc.endswith(" pixels")


@dataclass
class LoopRecord:
    """One capped loop: what ran, what it would have run, and its predicted full time.

    Attributes:
        desc: the loop's progress-bar label (``features``, ``epochs``, ``tasks``, ...).
        depth: how many capped loops enclose it (0: top level of the unit).
        total: the number of items the full run iterates (``None``: unknown, no prediction).
        done: the items it ran.
        measured_s: wall time of the items it ran (inner loops included, capped).
        inner_measured_s: of which, time inside inner capped loops.
        inner_predicted_s: the inner loops' predicted full time.
        first_item_s: the wall time of its first item (warm-up, compilation, first read).
        started: ``time.perf_counter()`` when the loop was entered.
        interrupted: the loop was left in the middle of an item (an error, a timeout): the
            unfinished item counts as one, so its rate is a lower bound.
    """

    desc: str
    depth: int
    total: int | None
    done: int = 0
    measured_s: float = 0.0
    inner_measured_s: float = 0.0
    inner_predicted_s: float = 0.0
    first_item_s: float = 0.0
    started: float = 0.0
    interrupted: bool = False

    @property
    def skipped(self) -> int:
        """Items the cap did not run (0 when the total is unknown)."""
        return max(0, (self.total or self.done) - self.done)

    @property
    def seconds_per_item(self) -> float:
        """Predicted full seconds per item: own time plus inner loops' predicted time."""
        n = self.done + (1 if self.interrupted else 0)
        if n == 0:
            return 0.0
        own = max(0.0, self.measured_s - self.inner_measured_s)
        return (own + self.inner_predicted_s) / n

    @property
    def predicted_s(self) -> float:
        """The loop's predicted full time (its measured time when the total is unknown)."""
        if self.total is None or self.done + self.interrupted == 0:
            return self.measured_s - self.inner_measured_s + self.inner_predicted_s
        return self.seconds_per_item * self.total


@dataclass
class RehearsalCap:
    """A compute cap that loops consult through ``UnitContext.progress``.

    Attributes:
        items: how many items each loop runs (per entry into the loop).
        per_desc: a different count for loops whose label contains the key (e.g. ``{"epochs": 1}``).
        records: every loop entered, in order of entry.
    """

    items: int = 2
    per_desc: dict[str, int] = field(default_factory=dict)
    records: list[LoopRecord] = field(default_factory=list)
    _stack: list[LoopRecord] = field(default_factory=list, repr=False)

    def limit(self, desc: str) -> int:
        """How many items the loop labelled ``desc`` may run."""
        for key, n in self.per_desc.items():
            if key in desc:
                return n
        return self.items

    def wrap(self, iterable: Iterable[Any], desc: str, total: int | None = None) -> Iterator[Any]:
        """Yield the first items of ``iterable`` allowed by the cap, timing them."""
        if total is None or total < 0:
            try:
                total = len(iterable)  # type: ignore[arg-type]
            except TypeError:
                total = None
        rec = LoopRecord(desc, len(self._stack), total, started=time.perf_counter())
        self.records.append(rec)
        parent = self._stack[-1] if self._stack else None
        self._stack.append(rec)
        limit = self.limit(desc)
        start = time.perf_counter()
        try:
            it = iter(iterable)
            while rec.done < limit:
                t0 = time.perf_counter()
                try:
                    item = next(it)
                except StopIteration:
                    break
                # time inside the consumer's body counts until the next item is asked for
                yield item
                rec.done += 1
                if rec.done == 1:
                    rec.first_item_s = time.perf_counter() - t0
        except GeneratorExit:
            rec.interrupted = rec.done < limit
            raise
        finally:
            rec.measured_s = time.perf_counter() - start
            self._stack.pop()
            if parent is not None:
                parent.inner_measured_s += rec.measured_s
                parent.inner_predicted_s += rec.predicted_s

    @property
    def capped(self) -> bool:
        """Whether any loop stopped before its end."""
        return any(r.skipped > 0 for r in self.records)

    def top_level(self) -> list[LoopRecord]:
        """The loops not inside another capped loop."""
        return [r for r in self.records if r.depth == 0]

    def predict(self, unit_wall_s: float) -> float:
        """The unit's predicted full wall time, from its capped wall time (see the module)."""
        top = self.top_level()
        return unit_wall_s - sum(r.measured_s for r in top) + sum(r.predicted_s for r in top)

    def cached_s(self) -> float:
        """Predicted time of the top-level loops that build a cache every later unit and figure
        reads (labels in :data:`CACHE_LOOPS`): the full run pays it once, not once per unit."""
        return sum(r.predicted_s for r in self.top_level() if is_cache_loop(r.desc))

    def counts(self) -> dict[str, tuple[int, int | None, float]]:
        """Per loop label: (items run, items of the full run, predicted seconds per item).

        Totals add up over entries (a loop entered once per task counts every task's items).
        """
        out: dict[str, tuple[int, int | None, float]] = {}
        for r in self.records:
            done, total, _ = out.get(r.desc, (0, 0, 0.0))
            tot = None if total is None or r.total is None else total + r.total
            out[r.desc] = (done + r.done, tot, r.seconds_per_item)
        return out
