"""How many threads torch and the BLAS libraries use: the CPUs this job may use, and can use now.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from privrepro.config import ConfigError

__all__ = [
    "BUSY_SAMPLE_S",
    "MAX_THREADS",
    "BusyMonitor",
    "CpuBusy",
    "CpuLimit",
    "ThreadPlan",
    "available_cpus",
    "busy_cpus",
    "cgroup_cpu_quota",
    "check_threads",
    "plan_threads",
    "threads_per_item",
    "use_threads",
]

T = TypeVar("T")

#: the most threads a run may ask for (``threads=N``): more than any machine gives one process
MAX_THREADS = 1024
#: seconds :func:`busy_cpus` samples the CPU times over (0.1 s: ten clock ticks per CPU)
BUSY_SAMPLE_S = 0.1


@dataclass(frozen=True)
class CpuLimit:
    """How many CPUs the process may use, and what set the limit (``affinity``,
    ``joblib.cpu_count`` for a quota or ``LOKY_MAX_CPU_COUNT`` it read, ``cgroup v2 cpu.max``,
    ``cgroup v1 cfs quota`` of a nested cgroup, or ``cpu_count``)."""

    cpus: int
    source: str


@dataclass(frozen=True)
class CpuBusy:
    """Work already running: ``busy`` of the ``cpus`` CPUs of the affinity mask were kept busy by
    other processes over the last ``interval_s`` seconds (in CPUs, 0 … ``cpus``)."""

    busy: float
    cpus: int
    interval_s: float

    @property
    def free(self) -> float:
        """The CPUs other work left free (0 … ``cpus``)."""
        return min(float(self.cpus), max(0.0, self.cpus - self.busy))


@dataclass(frozen=True)
class ThreadPlan:
    """The threads one process uses and why: ``cpus`` it may use (``source``), ``workers``
    sharing them, ``OMP_NUM_THREADS`` (``None`` unset), an explicit ``requested`` count, the CPUs
    other work kept busy when it was planned (``busy_cpus`` of ``busy_of``: ``None`` not
    measured) and ``reason``, the rule that decided."""

    threads: int
    cpus: int
    source: str
    workers: int = 1
    omp_num_threads: int | None = None
    requested: int | None = None
    busy_cpus: float | None = None
    busy_of: int | None = None
    reason: str = ""

    def as_record(self) -> dict[str, Any]:
        """What a unit's ``env.json`` records."""
        return asdict(self)

    @property
    def warning(self) -> str | None:
        """One line when an explicit count is more than the CPUs the job may use, else ``None``."""
        if self.requested is None or self.requested <= self.cpus:
            return None
        return (
            f"threads = {self.requested} is more than the {self.cpus} CPUs this job may use "
            f"({self.source}; useful range 1..{self.cpus}): threads will wait on each other; "
            "threads=auto picks from the CPUs and their load"
        )


def _quota_v2(text: str) -> float | None:
    quota, _, period = text.strip().partition(" ")
    if quota == "max" or not period:
        return None
    return int(quota) / int(period)


def _quota_v1(folder: Path) -> float | None:
    quota = int((folder / "cpu.cfs_quota_us").read_text().strip())
    period = int((folder / "cpu.cfs_period_us").read_text().strip())
    return None if quota <= 0 or period <= 0 else quota / period


def cgroup_cpu_quota(
    proc_cgroup: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")
) -> tuple[float, str] | None:
    """The tightest CPU quota (in CPUs) on the process's cgroup and its parents, and its kind;
    ``None`` without one (or without cgroups)."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    found: list[tuple[float, str]] = []
    for line in lines:
        hier, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hier == "0" and controllers == "":  # cgroup v2 (unified)
            folders = [root, root / "unified"]
            kind, reader = "cgroup v2 cpu.max", lambda f: _quota_v2((f / "cpu.max").read_text())
        elif "cpu" in controllers.split(","):
            folders = [root / controllers, root / "cpu"]
            kind, reader = "cgroup v1 cfs quota", _quota_v1
        else:
            continue
        for base in folders:
            if not base.is_dir():
                continue
            node = base / path.lstrip("/")
            for folder in [node, *node.parents]:
                if not folder.is_relative_to(base):
                    break
                try:
                    q = reader(folder)
                except (OSError, ValueError):
                    continue
                if q is not None:
                    found.append((q, kind))
            break
    return min(found) if found else None


def _affinity() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def available_cpus(
    proc_cgroup: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")
) -> CpuLimit:
    """The CPUs this process may use: ``joblib.cpu_count()`` (affinity, the quota at the cgroup
    root, ``LOKY_MAX_CPU_COUNT``), lowered by a quota of the process's own cgroup or a parent."""
    import joblib

    affinity = _affinity()
    cpus = int(joblib.cpu_count(only_physical_cores=False))
    if affinity is None:
        source = "cpu_count" if cpus >= (os.cpu_count() or 1) else "joblib.cpu_count"
    else:
        source = "affinity" if cpus >= affinity else "joblib.cpu_count"
    quota = cgroup_cpu_quota(proc_cgroup, root)
    if quota is not None and math.ceil(quota[0]) < cpus:
        cpus, source = max(1, math.ceil(quota[0])), quota[1]
    return CpuLimit(max(1, cpus), source)


def _cpu_seconds(cpus: set[int] | None) -> tuple[float, float]:
    """(busy, total) CPU seconds since boot over ``cpus`` (all when ``None``), psutil's way:
    guest time is inside user time, and idle includes I/O wait."""
    import psutil

    busy = total = 0.0
    for i, t in enumerate(psutil.cpu_times(percpu=True)):
        if cpus is not None and i not in cpus:
            continue
        fields = t._asdict()
        all_s = sum(fields.values()) - fields.get("guest", 0.0) - fields.get("guest_nice", 0.0)
        idle = fields.get("idle", 0.0) + fields.get("iowait", 0.0)
        busy += all_s - idle
        total += all_s
    return busy, total


class BusyMonitor:
    """Other processes' use of the CPUs of the affinity mask between two readings: the busy CPU
    time of those CPUs (``psutil.cpu_times``; steal counts as busy) less this process's own
    (``psutil.Process().cpu_times``: every thread of it, spinning ones included), per second of
    the interval. One reading when made; :meth:`sample` reads again and starts the next interval.
    """

    def __init__(self) -> None:
        import psutil

        self._mask = set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        self.cpus = len(self._mask) if self._mask is not None else (os.cpu_count() or 1)
        self._me = psutil.Process()
        self._last = self._read()

    def _read(self) -> tuple[float, float, float]:
        busy, _ = _cpu_seconds(self._mask)
        own = self._me.cpu_times()
        return busy, own.user + own.system, time.monotonic()

    def sample(self) -> CpuBusy | None:
        """Other work's busy CPUs since the previous reading (``None`` over an interval too short
        to tell: under 50 ms, five clock ticks)."""
        now = self._read()
        (b0, m0, t0), (b1, m1, t1) = self._last, now
        if t1 - t0 < 0.05:
            return None
        self._last = now
        busy = max(0.0, min(float(self.cpus), (b1 - b0 - (m1 - m0)) / (t1 - t0)))
        return CpuBusy(round(busy, 2), self.cpus, round(t1 - t0, 3))


def busy_cpus(interval_s: float = BUSY_SAMPLE_S) -> CpuBusy | None:
    """How many CPUs of this process's affinity mask other processes keep busy now: a
    :class:`BusyMonitor` over ``interval_s`` seconds of sleep. ``None`` where the CPU times
    cannot be read."""
    try:
        monitor = BusyMonitor()
        time.sleep(interval_s)
        return monitor.sample()
    except (ImportError, OSError, AttributeError, RuntimeError):
        return None


def check_threads(value: Any, key: str = "threads") -> int | None:
    """``None`` for ``"auto"`` (or ``None``), else an integer in 1..:data:`MAX_THREADS`; anything
    else is a one-line :class:`ConfigError` naming ``key``."""
    if value is None or value == "auto":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_THREADS:
        raise ConfigError(key, value, f"must be 'auto' or an integer in 1..{MAX_THREADS}")
    return value


def _omp_num_threads() -> int | None:
    raw = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    try:
        n = int(raw)
    except ValueError:
        return None
    return n if n >= 1 else None


def plan_threads(
    requested: Any = "auto",
    workers: int = 1,
    limit: CpuLimit | None = None,
    busy: CpuBusy | bool | None = True,
) -> ThreadPlan:
    """The threads of one process: ``requested`` when it is a number, else the CPUs it may use
    divided among ``workers`` (at least one each), capped at ``OMP_NUM_THREADS`` when set and at
    the CPUs other work leaves free, divided the same way and rounded to the nearest (one thread
    per worker when they are busy).

    ``limit``: the CPUs the process may use (default :func:`available_cpus`); ``busy``: a
    :class:`CpuBusy`, ``True`` to measure it now (:func:`busy_cpus`, 0.1 s, only when "auto"
    could give more than one thread), or ``False``/``None``. The plan's ``reason`` names the rule.
    """
    explicit = check_threads(requested)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError("workers", workers, "must be an integer >= 1")
    lim = limit or available_cpus()
    omp = _omp_num_threads()
    if explicit is not None:
        return ThreadPlan(
            explicit, lim.cpus, lim.source, workers, omp, explicit, reason="requested"
        )
    n = max(1, lim.cpus // workers)
    reason = f"{lim.cpus} CPUs ({lim.source})" + (f" / {workers} workers" if workers > 1 else "")
    if omp is not None and omp < n:
        n, reason = omp, f"OMP_NUM_THREADS={omp}"
    # one thread needs no sample (OMP_NUM_THREADS=1, one CPU, as many workers as CPUs)
    seen = (busy_cpus() if n > 1 else None) if busy is True else (busy or None)
    if seen is not None:
        free = max(1, math.floor(seen.free / workers + 0.5))
        if free < n:
            n = free
            reason = (
                f"{seen.busy:g} of {seen.cpus} CPUs busy with other work: "
                f"{seen.free:g} free" + (f" / {workers} workers" if workers > 1 else "")
            )
    return ThreadPlan(
        n,
        lim.cpus,
        lim.source,
        workers,
        omp,
        None,
        None if seen is None else seen.busy,
        None if seen is None else seen.cpus,
        reason,
    )


@contextlib.contextmanager
def use_threads(n: int) -> Iterator[None]:
    """torch's intra-op threads and the BLAS libraries' (threadpoolctl) set to ``n`` for the
    block; the previous counts are given back."""
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        with threadpool_limits(limits=n, user_api="blas"):
            yield
    finally:
        torch.set_num_threads(before)


def threads_per_item(items: Iterable[T], plan: ThreadPlan) -> Iterator[tuple[T, ThreadPlan]]:
    """``items``, each with the thread plan it runs under, torch's and the BLAS threads set to it
    while the consumer handles the item; the previous counts are given back at the end (or on
    an error).

    Under ``threads=auto`` (``plan.requested`` is ``None``) the plan is made again before each
    item after the first, from the CPUs other work kept busy while the previous items ran (a
    :class:`BusyMonitor` reading; an interval under 50 ms, such as a unit the store already
    holds, waits for the next): work that starts or stops during a figure changes the threads of
    its next unit. An explicit count stays as it is.
    """
    monitor: BusyMonitor | None = None
    if plan.requested is None:
        with contextlib.suppress(ImportError, OSError, AttributeError, RuntimeError):
            monitor = BusyMonitor()
    current = plan
    with contextlib.ExitStack() as stack:
        stack.enter_context(use_threads(current.threads))
        for i, item in enumerate(items):
            seen = monitor.sample() if monitor is not None and i > 0 else None
            if seen is not None:
                limit = CpuLimit(plan.cpus, plan.source)
                current = plan_threads("auto", plan.workers, limit, seen)
                if current.threads != torch_threads_now():
                    stack.close()
                    stack.enter_context(use_threads(current.threads))
            yield item, current


def torch_threads_now() -> int:
    """torch's intra-op thread count."""
    import torch

    return int(torch.get_num_threads())
