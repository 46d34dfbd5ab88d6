"""One capped loop's record: the items it ran, its probes and warm-up, and its predicted full cost.

:class:`LoopRecord` is what :class:`~privrepro.rehearsal.cap.RehearsalCap` keeps per loop: the
probed items (:class:`ProbePoint`; ``a + b·samples`` fitted where they ran at two sizes), the
first item counted once as the warm-up (:class:`FirstItem`), and the loop's part of the unit's
work (:data:`PARTS`, :func:`loop_part`); the method is in the module docstring of
:mod:`privrepro.rehearsal.cap` and in ``docs/rehearsal.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "CACHE_LOOPS",
    "EVALUATION_LOOPS",
    "PARTS",
    "FirstItem",
    "LoopRecord",
    "ProbePoint",
    "is_cache_loop",
    "loop_part",
]

#: labels of loops that build a cache shared by later units and figures: cl's backbone features
#: (``<cache_dir>/cl/features``), FiLM pixel arrays (``<cache_dir>/cl/images``; labels ending so),
#: ip's base-model trainings (``<cache_dir>/ip/base-<key>``; labels starting so) and ip's tuned
#: ResNet family (``<cache_dir>/ip/tune-<key>``; labels starting so)
CACHE_LOOPS = ("features", " pixels", "base model ", "tuned models ")


def is_cache_loop(desc: str) -> bool:
    """Whether the loop labelled ``desc`` builds a shared cache (see :data:`CACHE_LOOPS`)."""
    return (
        desc == "features"
        or desc.endswith(" pixels")
        or desc.startswith("base model ")
        or desc.startswith("tuned models ")
    )


#: the parts of a unit's work a cost model prices apart (see the module)
PARTS = ("features", "tuning", "training", "evaluation")

#: labels of loops that predict on held-out data (a member's test logits, a classifier's)
EVALUATION_LOOPS = ("member logit batches", "predict batches")


def loop_part(desc: str, depth: int, parent: str | None) -> str:
    """The part (:data:`PARTS`) of the loop labelled ``desc`` at ``depth`` inside a loop of part
    ``parent`` (``None``: top level). Everything inside a cache build or a study belongs to it
    (a trial's validation predictions are tuning); a top-level cache loop is ``features``; a loop
    whose label names trials is ``tuning``; predictions (:data:`EVALUATION_LOOPS`) are
    ``evaluation``; the rest takes its parent's part, ``training`` at the top."""
    if parent in ("features", "tuning"):
        return parent
    if depth == 0 and is_cache_loop(desc):
        return "features"
    if "trial" in desc:
        return "tuning"
    if desc in EVALUATION_LOOPS:
        return "evaluation"
    return parent or "training"


@dataclass(frozen=True)
class ProbePoint:
    """One probed item: samples run and in the full item, and what its own body measured."""

    run: int
    full: int
    own_s: float
    op_s: float
    device_s: float
    flops: float

    def value(self, kind: str) -> float:
        """``own`` (s), ``host`` (own outside torch operators, s), ``device`` (s) or ``flops``."""
        if kind == "host":
            return max(0.0, self.own_s - self.op_s)
        return {"own": self.own_s, "device": self.device_s, "flops": self.flops}[kind]


def _fit(points: list[ProbePoint], kind: str) -> tuple[float, float] | None:
    """``a, b`` of ``a + b·samples`` fitted by least squares to points that ran at two sizes or
    more (``a, b ≥ 0``: a decreasing time is a fixed cost, a negative fixed cost a rate through
    zero); ``None`` for one size."""
    xs = [float(p.run) for p in points]
    ys = [p.value(kind) for p in points]
    if len(set(xs)) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    a = my - b * mx
    if b < 0:
        a, b = my, 0.0
    elif a < 0:
        a, b = 0.0, sum(ys) / sum(xs)
    return a, b


def _at_full_size(points: list[ProbePoint], kind: str) -> float:
    """The points' quantity at their full sizes: ``a + b·samples`` (:func:`_fit`) where the
    points ran at two sizes or more (a fixed cost per item, such as an SLL layer's
    parametrisation, is then not scaled), else scaled linearly."""
    fit = _fit(points, kind)
    if fit is None:
        return sum(p.value(kind) * p.full / p.run for p in points)
    a, b = fit
    return sum(a + b * p.full for p in points)


def _slope(points: list[ProbePoint], kind: str) -> float:
    """The points' cost per sample: ``b`` of :func:`_fit`, or their mean rate at one size."""
    fit = _fit(points, kind)
    if fit is not None:
        return fit[1]
    return sum(p.value(kind) for p in points) / max(1, sum(p.run for p in points))


@dataclass(frozen=True)
class FirstItem:
    """A loop's first item, its warm-up (the first read of a file, allocations, lazy imports; on
    a GPU the CUDA context and cuBLAS handles), from the loop's entry to the item's end.

    Attributes:
        own_s, op_s, device_s, flops: its own body's time (inner loops and counting excluded),
            time inside torch operators, operators at the GPU's roofline, FLOPs.
        inner: its inner loops' predicted full (seconds, GPU seconds, FLOPs).
        inner_parts: the same per part (:data:`PARTS`).
        point: its probe, when :meth:`RehearsalCap.item_size` cut it.
    """

    own_s: float
    op_s: float
    device_s: float
    flops: float
    inner: tuple[float, float, float]
    inner_parts: dict[str, tuple[float, float, float]]
    point: ProbePoint | None = None

    def value(self, kind: str) -> float:
        """As :meth:`ProbePoint.value`."""
        if kind == "host":
            return max(0.0, self.own_s - self.op_s)
        return {"own": self.own_s, "device": self.device_s, "flops": self.flops}[kind]


@dataclass
class LoopRecord:
    """One capped loop: what ran, what it would have run, and its predicted full time.

    Attributes:
        desc: the loop's progress-bar label (``features``, ``epochs``, ``tasks``, ...).
        depth: how many capped loops enclose it (0: top level of the unit).
        total: the number of items the full run iterates (``None``: unknown, no prediction).
        done: the items it ran.
        measured_s: time of the items it ran on the cap's clock (:attr:`RehearsalCap.clock`:
            the thread's CPU time on a CPU), inner loops included, capped.
        inner_measured_s: of which, time inside inner capped loops.
        inner_predicted_s: the inner loops' predicted full time.
        first_item_s: the time of its first item (warm-up, compilation, first read).
        started: the cap's clock (:attr:`RehearsalCap.clock`) when the loop was entered.
        interrupted: the loop was left in the middle of an item (an error, a timeout): the
            unfinished item counts as one, so its rate is a lower bound.
        full_samples, run_samples: samples its items hold in the full run and samples they ran
            (:meth:`RehearsalCap.item_size`); their ratio is :attr:`scale`.
        op_s, flops, nbytes, device_s, ops: the torch operators run in its own body (inner
            loops excluded): CPU seconds inside them, FLOPs, bytes read and written, their time
            at the target GPU's roofline, their count.
        overhead_s: time spent counting them (left out of every prediction).
        inner_predicted_device_s: the inner loops' predicted full time on the target GPU.
        inner_predicted_flops: the inner loops' predicted full FLOPs.
        points: its probed items (see :meth:`RehearsalCap.item_size`), fitted to predict a full item.
        host_per_sample: its items do host work per sample (decoding images): the time outside
            torch operators is fitted like the rest; otherwise (the default) it is Python's
            fixed cost per item, counted as measured, unscaled. Fitting it would extrapolate
            a few tens of milliseconds of noise between a 4- and a 16-sample probe to seconds
            per 500-sample item.
        part: the part of the work its own body is (:func:`loop_part`).
        inner_parts: its inner loops' predicted full (seconds, GPU seconds, FLOPs) per part.
        first: its first item (:class:`FirstItem`), recorded by :meth:`RehearsalCap.loop`.
            Where it and at least one more item ran and the total is known, the first item is
            the loop's warm-up and counts once, as measured (a probed one with its missing
            samples at the other items' rate), and the other items' rate predicts the other
            ``total − 1``: ``first + (others / (n − 1)) × (total − 1)``. Without it (one item
            ran, or a record built by hand) every item counts alike: ``(all / n) × total``.
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
    full_samples: int = 0
    run_samples: int = 0
    op_s: float = 0.0
    flops: float = 0.0
    nbytes: float = 0.0
    device_s: float = 0.0
    ops: int = 0
    overhead_s: float = 0.0
    inner_predicted_device_s: float = 0.0
    inner_predicted_flops: float = 0.0
    points: list[ProbePoint] = field(default_factory=list)
    host_per_sample: bool = False
    part: str = "training"
    inner_parts: dict[str, list[float]] = field(default_factory=dict)
    first: FirstItem | None = None

    @property
    def skipped(self) -> int:
        """Items the cap did not run (0 when the total is unknown)."""
        return max(0, (self.total or self.done) - self.done)

    @property
    def scale(self) -> float:
        """How many times the items it ran a full item is (1: items ran whole; see
        :meth:`RehearsalCap.item_size`)."""
        if self.run_samples <= 0:
            return 1.0
        return max(1.0, self.full_samples / self.run_samples)

    @property
    def _n(self) -> int:
        return self.done + (1 if self.interrupted else 0)

    @property
    def own_s(self) -> float:
        """Measured time in its own body (inner loops excluded), as run (not scaled)."""
        return max(0.0, self.measured_s - self.inner_measured_s - self.overhead_s)

    def _own_value(self, kind: str) -> float:
        return {
            "own": self.own_s,
            "host": max(0.0, self.own_s - self.op_s),
            "device": self.device_s,
            "flops": self.flops,
        }[kind]

    def at_full_size(self, kind: str) -> float:
        """Its own body's ``kind`` (see :meth:`ProbePoint.value`) over the items it ran, at
        their full size: probed items fitted (:func:`_at_full_size`); the rest (an item left
        midway, probed or not) as measured, unscaled, so that an unfinished item stays a lower
        bound."""
        total = self._own_value(kind)
        if not self.points or (kind == "host" and not self.host_per_sample):
            return total  # no probe, or Python's fixed cost per item: as measured
        rest = max(0.0, total - sum(p.value(kind) for p in self.points))
        return _at_full_size(self.points, kind) + rest

    @property
    def own_device_s(self) -> float:
        """Its own body's time on the target GPU at full size: the operators at the GPU's
        roofline or the time outside torch operators as measured here (Python, the host's
        share), whichever is larger — a CUDA stream runs the kernels while the host goes on
        queueing the next ones, so the two overlap rather than add (unless the loop measured
        them on the device itself)."""
        return max(self.at_full_size("host"), self.at_full_size("device"))

    def _full(self, own: float, inner: float) -> float:
        n = self._n
        if self.total is None or n == 0:
            return own + inner
        return (own + inner) / n * self.total

    @property
    def warmed_up(self) -> bool:
        """Whether the first item counts once and the others give the rate (see :attr:`first`)."""
        return self.first is not None and self.total is not None and self._n >= 2

    def _split_own(self, kind: str) -> tuple[float, float]:
        """Its own body's ``kind`` at full size, split into (the first item, the other items).
        The others are fitted as :meth:`at_full_size` fits all of them (their probes; the rest
        as measured, unscaled); the first item counts as measured, a probed one with the
        samples it did not run at the others' cost per sample (:func:`_slope`), so its warm-up
        is counted once and not scaled."""
        first = self.first
        assert first is not None
        head = first.value(kind)
        others = max(0.0, self._own_value(kind) - head)
        if not self.points or (kind == "host" and not self.host_per_sample):
            return head, others
        rest = self.points[1:] if first.point is not None else list(self.points)
        if rest:
            measured = sum(p.value(kind) for p in rest)
            others = _at_full_size(rest, kind) + max(0.0, others - measured)
        if first.point is not None:
            if rest:
                head += _slope(rest, kind) * (first.point.full - first.point.run)
            else:  # only the first item was cut: scaled as before
                head += _at_full_size([first.point], kind) - first.point.value(kind)
        return head, others

    def _warm_parts(self) -> dict[str, tuple[list[float], list[float]]]:
        """Per part, (the first item's, the other items') (seconds, GPU seconds, FLOPs) at full
        size, own body and inner loops' predictions (see :attr:`first`)."""
        first = self.first
        assert first is not None
        own = {kind: self._split_own(kind) for kind in ("own", "host", "device", "flops")}
        head_own = [own["own"][0], max(own["host"][0], own["device"][0]), own["flops"][0]]
        rest_own = [own["own"][1], max(own["host"][1], own["device"][1]), own["flops"][1]]
        out: dict[str, tuple[list[float], list[float]]] = {}
        for p in {*self.inner_parts, *first.inner_parts, self.part}:
            head = list(first.inner_parts.get(p, (0.0, 0.0, 0.0)))
            total = self.inner_parts.get(p, [0.0, 0.0, 0.0])
            rest = [t - h for t, h in zip(total, head, strict=True)]
            if p == self.part:
                head = [h + o for h, o in zip(head, head_own, strict=True)]
                rest = [r + o for r, o in zip(rest, rest_own, strict=True)]
            out[p] = (head, rest)
        return out

    def _warm_full(self, head: float, rest: float) -> float:
        assert self.total is not None
        return head + rest / (self._n - 1) * (self.total - 1)

    def _warm_total(self, j: int) -> float:
        return sum(self._warm_full(h[j], r[j]) for h, r in self._warm_parts().values())

    @property
    def seconds_per_item(self) -> float:
        """Predicted full seconds per item: own time (at full size) plus inner loops'
        predicted time; after a warm-up (:attr:`warmed_up`), the other items' rate."""
        n = self._n
        if n == 0:
            return 0.0
        if self.warmed_up:
            return sum(r[0] for _, r in self._warm_parts().values()) / (n - 1)
        return (self.at_full_size("own") + self.inner_predicted_s) / n

    @property
    def predicted_s(self) -> float:
        """The loop's predicted full time (its measured time when the total is unknown)."""
        if self.warmed_up:
            return self._warm_total(0)
        return self._full(self.at_full_size("own"), self.inner_predicted_s)

    @property
    def predicted_device_s(self) -> float:
        """The loop's predicted full time on the target GPU (see the module)."""
        if self.warmed_up:
            return self._warm_total(1)
        return self._full(self.own_device_s, self.inner_predicted_device_s)

    @property
    def predicted_flops(self) -> float:
        """The loop's predicted full count of FLOPs."""
        if self.warmed_up:
            return self._warm_total(2)
        return self._full(self.at_full_size("flops"), self.inner_predicted_flops)

    def predicted_parts(self) -> dict[str, tuple[float, float, float]]:
        """:attr:`predicted_s`, :attr:`predicted_device_s` and :attr:`predicted_flops` split by
        part: its own body's in :attr:`part`, its inner loops' in theirs (they add up)."""
        if self.warmed_up:
            return {
                p: (
                    self._warm_full(h[0], r[0]),
                    self._warm_full(h[1], r[1]),
                    self._warm_full(h[2], r[2]),
                )
                for p, (h, r) in self._warm_parts().items()
            }
        own = (self.at_full_size("own"), self.own_device_s, self.at_full_size("flops"))
        sums = {p: list(v) for p, v in self.inner_parts.items()}
        mine = sums.setdefault(self.part, [0.0, 0.0, 0.0])
        for j, value in enumerate(own):
            mine[j] += value
        return {
            p: (self._full(s, 0.0), self._full(d, 0.0), self._full(f, 0.0))
            for p, (s, d, f) in sums.items()
        }
