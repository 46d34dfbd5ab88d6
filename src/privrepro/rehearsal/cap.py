"""The rehearsal's compute cap: every long loop runs a few items, and the rest is predicted.

A rehearsal runs the paper profile's own code path. The one place it differs is the loops it
passes to a unit (``UnitContext.loops``, :mod:`privrepro.loops`: every long loop of the library
goes through them: feature batches, epochs, optimiser steps, tasks, trials, draws): a
:class:`RehearsalCap` is such loops; each loop yields its first ``items`` items and stops, and the
cap records how long they took, how many the loop would have run, and what it skipped.

Loops nest (steps inside epochs inside tasks). A loop's predicted full time is

    total × (own seconds per item + predicted seconds of its inner loops per item),

where the *own* time is the measured time minus the time spent in its (capped) inner loops; the
prediction of an outer loop therefore uses its inner loops' predicted full cost, not their capped
time. The unit's prediction is its measured wall time with each top-level loop's measured time
replaced by its prediction (the time outside loops — loading, preprocessing, evaluation that is
not a loop — counts once, as measured).

**The first item is the warm-up.** A loop's first item pays what the others do not: the first
read of a file, allocations, lazy imports, on a GPU the CUDA context and cuBLAS handles (22 s for
an SLL training batch's first item on an H200, a fraction of a second for the next). Where a
loop ran two items or more and its total is known, the first counts once, as measured, and the
other items' rate predicts the other ``total − 1`` (:attr:`LoopRecord.first`); where only one
ran, it is all there is and predicts every item.

**Smaller first items.** Where one item is too slow to finish within the rehearsal's timeout on
this machine (a ViT-B/16 feature batch, a DP-SGD step through the backbone, an SLL training
batch) and its cost is affine in its size, the loop body asks
:meth:`privrepro.loops.Loops.item_size` how many of the item's samples to run (``probe_samples``,
then 4 × that, then that again: :meth:`RehearsalCap.item_size`; a probed loop allowed two items
runs three, so that the items after the warm-up ran at two sizes); the loop's record fits
``a + b·samples`` to its probed items after the first and predicts full ones
(:class:`ProbePoint`; an item left midway counts unscaled, a lower bound). What a cut loop did not compute is a zero placeholder of the full shape
(:meth:`privrepro.loops.Loops.full_rows`), so the stages after it run at full size. Loops with no
progress bar are capped too (the pac Ex. 4 optimiser steps inside one chunk of trainings).

**A device prediction from operation counts.** While a cap is active (:meth:`RehearsalCap.active`),
every torch operator is counted (:class:`privrepro.rehearsal.device_model.OperationCount`):
its FLOPs by ``torch.utils.flop_counter``'s formulas, the bytes of its inputs and outputs, and
the CPU seconds spent in it, attributed to the innermost open loop. A loop's predicted time on
the target GPU is then, per item, the larger of the time outside torch operators as measured
here (Python, decoding, numpy: the host, which overlaps the device's queue) and the operators
at the GPU's roofline (:data:`privrepro.rehearsal.device_model.H100`), scaled and nested like
the CPU prediction.

**CPU time, not wall time.** Every time a prediction uses (items, torch operators, the time
outside loops) is read from the cap's :attr:`RehearsalCap.clock`, by default the calling
thread's CPU time (:func:`time.thread_time`): on a shared machine a process that gets a tenth of
a core takes ten times the wall time for the same work, and a loop's host time (the larger part
of a GPU prediction whenever it exceeds the operators' roofline) would grow with the load. The
rehearsal keeps wall time where wall time is meant: the capped run's wall time
(``capped_wall_s``) and the unit timeout.

**Parts of the work.** Each loop belongs to one part (:data:`PARTS`, :func:`loop_part`):
``features`` (a top-level loop that builds a shared cache: backbone features, FiLM pixel arrays,
ip base models), ``tuning`` (an Optuna study's trials and all they run), ``evaluation`` (test-set
predictions outside a study) and ``training`` (the rest, and the time outside loops). A loop's
own time goes to its part and its inner loops' to theirs, so the parts of a unit add up to its
prediction (:meth:`RehearsalCap.predict_parts`); a cost model can then count a part that other
units share (a study, an ensemble's members, a cache) once per key.

Truncating a loop can leave what it builds incomplete (a feature array of a few batches): the
code after it may then fail on shapes. The rehearsal counts such a failure, after at least one
loop was capped, as the end of what could be measured (``ended_by``), not as a failure of the
figure; an error before any cap is a real error.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from privrepro.loops import Loops
from privrepro.rehearsal.device_model import H100, DeviceModel, OperationCount
from privrepro.rehearsal.loop_record import (
    PARTS,
    FirstItem,
    LoopRecord,
    ProbePoint,
    is_cache_loop,
    loop_part,
)

__all__ = ["RehearsalCap"]


@dataclass
class RehearsalCap(Loops):
    """A compute cap: the loops (:class:`privrepro.loops.Loops`) a rehearsal passes to a unit.

    Attributes:
        items: how many items each loop runs (per entry into the loop).
        per_desc: a different count for loops whose label contains the key (e.g. ``{"epochs": 1}``).
        probe_samples: samples a probed item runs (0: items run whole; :meth:`item_size`).
        precision: the arithmetic the unit computes in (``fp32``, ``tf32``, ``bf16``:
            :func:`privrepro.training.precision.unit_precision`): its matmuls are priced on
            the target GPU's tensor cores in ``tf32`` and ``bf16``
            (:class:`privrepro.rehearsal.device_model.OperationCount`).
        gpu: the device model its operators are priced on (:data:`~.device_model.DEVICES`).
        clock: the clock every measured time is read from (items, operators, the counting's
            overhead). The default, :func:`time.thread_time`, is the calling thread's CPU time:
            it does not advance while the thread waits for a core that other processes hold,
            so a loop's host time (Python between torch operators) is what the work costs, not
            what the machine's load made it take. It is every CPU second of the unit when the
            unit computes on this thread alone (one torch intra-op thread and one BLAS thread:
            :attr:`~privrepro.rehearsal.settings.RehearsalSettings.threads`); on a GPU, whose
            kernels run apart from the thread, the rehearsal passes :func:`time.perf_counter`.
        records: every loop entered, in order of entry.
    """

    items: int = 2
    per_desc: dict[str, int] = field(default_factory=dict)
    probe_samples: int = 0
    precision: str = "fp32"
    gpu: DeviceModel = H100
    clock: Callable[[], float] = time.thread_time
    records: list[LoopRecord] = field(default_factory=list)
    outside: LoopRecord = field(default_factory=lambda: LoopRecord("(outside loops)", -1, None))
    _stack: list[LoopRecord] = field(default_factory=list, repr=False)

    @property
    def truncates(self) -> bool:
        """A cap ends loops early: outputs of a cut loop are placeholders."""
        return True

    @contextlib.contextmanager
    def active(self, count_operations: bool = True) -> Iterator[RehearsalCap]:
        """With ``count_operations``, count every torch operator run inside the ``with`` block
        (see the module); the loops it caps are those it is passed to."""
        if count_operations:
            with OperationCount(self.current, self.gpu, precision=self.precision, clock=self.clock):
                yield self
        else:
            yield self

    def current(self) -> LoopRecord:
        """The innermost open loop, or :attr:`outside` when none is open."""
        return self._stack[-1] if self._stack else self.outside

    def limit(self, desc: str) -> int:
        """How many items the loop labelled ``desc`` may run."""
        for key, n in self.per_desc.items():
            if key in desc:
                return n
        return self.items

    def item_size(self, samples: int, host_per_sample: bool = False) -> int:
        """How many of the current item's ``samples`` to run: all of them unless
        ``probe_samples`` is set, then that many (4 × that on odd items); the open loop's full
        items are predicted from them: ``a + b·samples`` fitted over the probed items, or scaled
        by ``samples / run`` when one size ran (items whose cost is affine in their size: a batch
        of images through a network, a batch of a training step). ``host_per_sample``: the
        item's work outside torch operators grows with its samples too (decoding images); by
        default it is a fixed cost per item (see :attr:`LoopRecord.host_per_sample`)."""
        if self.probe_samples <= 0 or not self._stack:
            return samples
        rec = self._stack[-1]
        rec.host_per_sample = rec.host_per_sample or host_per_sample
        # items alternate between probe_samples and 4 × that: two sizes fit a fixed cost per item
        run = min(samples, self.probe_samples * (4 if rec.done % 2 else 1))
        rec.full_samples += samples
        rec.run_samples += run
        return run

    def __call__(self, items: Iterable[Any], desc: str, total: int | None = None) -> Iterator[Any]:
        """The loop ``desc`` as capped (:meth:`loop`)."""
        return self.loop(items, desc, total)

    def loop(self, iterable: Iterable[Any], desc: str, total: int | None = None) -> Iterator[Any]:
        """Yield the first items of ``iterable`` allowed by the cap, timing them."""
        if total is None or total < 0:
            try:
                total = len(iterable)  # type: ignore[arg-type]
            except TypeError:
                total = None
        parent = self._stack[-1] if self._stack else None
        depth = len(self._stack)
        part = loop_part(desc, depth, parent.part if parent is not None else None)
        clock = self.clock
        rec = LoopRecord(desc, depth, total, started=clock(), part=part)
        self.records.append(rec)
        self._stack.append(rec)
        limit = self.limit(desc)
        start = clock()
        try:
            it = iter(iterable)
            while rec.done < limit:
                t0 = clock()
                try:
                    item = next(it)
                except StopIteration:
                    break
                before = _snapshot(rec)
                # time inside the consumer's body counts until the next item is asked for
                yield item
                rec.done += 1
                if rec.done == 1:
                    rec.first_item_s = clock() - t0
                _add_point(rec, before, clock() - t0)
                if rec.done == 1:
                    rec.first = _first_item(rec, clock() - start)
                if rec.points and limit >= 2:
                    limit = max(limit, 3)  # after the warm-up, two items of two sizes
        except GeneratorExit:
            rec.interrupted = rec.done < limit
            raise
        finally:
            rec.measured_s = clock() - start
            self._stack.pop()
            if parent is not None:
                parent.inner_measured_s += rec.measured_s
                parent.inner_predicted_s += rec.predicted_s
                parent.inner_predicted_device_s += rec.predicted_device_s
                parent.inner_predicted_flops += rec.predicted_flops
                for p, values in rec.predicted_parts().items():
                    sums = parent.inner_parts.setdefault(p, [0.0, 0.0, 0.0])
                    for j, value in enumerate(values):
                        sums[j] += value

    def drop_open_loops(self) -> None:
        """Forget the loops still open (a unit stopped from outside, in the middle of them):
        their time so far then counts as time outside loops, once and unscaled (a lower bound),
        and their closed inner loops only through it."""
        open_ids = {id(r) for r in self._stack}
        self.records[:] = [r for r in self.records if id(r) not in open_ids]

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
        outside = unit_wall_s - sum(r.measured_s for r in top) - self.outside.overhead_s
        return outside + sum(r.predicted_s for r in top)

    def predict_device(self, unit_wall_s: float) -> float:
        """The unit's predicted full time on the target GPU: the time outside loops as measured
        here, less its torch operators' CPU time plus their roofline time, plus each top-level
        loop's :attr:`LoopRecord.predicted_device_s`."""
        top = self.top_level()
        measured = sum(r.measured_s for r in top) + self.outside.op_s + self.outside.overhead_s
        outside = max(0.0, unit_wall_s - measured)
        return outside + self.outside.device_s + sum(r.predicted_device_s for r in top)

    def predict_flops(self) -> float:
        """The unit's predicted full count of FLOPs (outside loops once, loops predicted)."""
        return self.outside.flops + sum(r.predicted_flops for r in self.top_level())

    def predict_parts(self, unit_wall_s: float) -> dict[str, tuple[float, float, float]]:
        """The unit's predicted (seconds, GPU seconds, FLOPs) per part (:data:`PARTS`): each
        top-level loop's :meth:`LoopRecord.predicted_parts`, and the time outside loops
        (reading, building models) in ``training``; they add up to :meth:`predict`,
        :meth:`predict_device` and :meth:`predict_flops`."""
        top = self.top_level()
        sums: dict[str, list[float]] = {p: [0.0, 0.0, 0.0] for p in PARTS}
        for r in top:
            for p, values in r.predicted_parts().items():
                for j, value in enumerate(values):
                    sums.setdefault(p, [0.0, 0.0, 0.0])[j] += value
        outside = (
            self.predict(unit_wall_s) - sum(r.predicted_s for r in top),
            self.predict_device(unit_wall_s) - sum(r.predicted_device_s for r in top),
            self.predict_flops() - sum(r.predicted_flops for r in top),
        )
        for j, value in enumerate(outside):
            sums["training"][j] += value
        return {p: (s, d, f) for p, (s, d, f) in sums.items()}

    def cached_flops(self) -> float:
        """:meth:`cached_s` in FLOPs."""
        return sum(r.predicted_flops for r in self.top_level() if is_cache_loop(r.desc))

    def cached_device_s(self) -> float:
        """:meth:`cached_s` on the target GPU."""
        return sum(r.predicted_device_s for r in self.top_level() if is_cache_loop(r.desc))

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


def _snapshot(rec: LoopRecord) -> tuple[float, ...]:
    return (
        rec.inner_measured_s,
        rec.overhead_s,
        rec.op_s,
        rec.device_s,
        rec.flops,
        rec.run_samples,
        rec.full_samples,
    )


def _first_item(rec: LoopRecord, elapsed: float) -> FirstItem:
    """The loop's first item: everything it recorded from its entry (``elapsed`` ago) to now."""
    return FirstItem(
        own_s=max(0.0, elapsed - rec.inner_measured_s - rec.overhead_s),
        op_s=rec.op_s,
        device_s=rec.device_s,
        flops=rec.flops,
        inner=(rec.inner_predicted_s, rec.inner_predicted_device_s, rec.inner_predicted_flops),
        inner_parts={p: (v[0], v[1], v[2]) for p, v in rec.inner_parts.items()},
        point=rec.points[0] if rec.points else None,
    )


def _add_point(rec: LoopRecord, before: tuple[float, ...], wall: float) -> None:
    """Record the item just finished as a :class:`ProbePoint` when :meth:`RehearsalCap.item_size` cut it."""
    inner, overhead, op_s, device_s, flops, run, full = (
        now - then for now, then in zip(_snapshot(rec), before, strict=True)
    )
    if run > 0:
        own = max(0.0, wall - inner - overhead)
        rec.points.append(ProbePoint(int(run), int(full), own, op_s, device_s, flops))
