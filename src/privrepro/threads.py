"""How many threads torch and the BLAS libraries use: the CPUs this job may use.

torch starts with one intra-op thread per core of its affinity mask, and OpenBLAS (numpy's)
with one per core of the machine; neither reads a cgroup CPU quota (a container's ``--cpus``, a
Kubernetes limit, a SLURM or systemd allocation), and neither knows that it is one of several
workers of a multirun. More threads than CPUs make small-op loops (DP-SGD steps of a small
model) spin at every barrier for a thread that is not running: 15 times slower per step was
measured on a shared 2-core machine.

:func:`available_cpus` is what the process may use: the smallest of its affinity mask
(``os.sched_getaffinity``), the cgroup v2 ``cpu.max`` quota and the cgroup v1
``cpu.cfs_quota_us / cpu.cfs_period_us`` quota of its cgroup and every parent (rounded up).
:func:`plan_threads` divides it among the parallel workers of a multirun (Hydra's joblib
launcher: ``n_jobs``), at least one thread each, and caps it at ``OMP_NUM_THREADS`` when that is
set (OpenMP's meaning: threads per process); an explicit ``threads`` (the runner's config key)
replaces the division. :func:`use_threads` sets torch's and the BLAS libraries' (threadpoolctl)
thread counts for a block and gives the previous ones back.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from privrepro.config import ConfigError

__all__ = [
    "CpuLimit",
    "ThreadPlan",
    "available_cpus",
    "cgroup_cpu_quota",
    "check_threads",
    "plan_threads",
    "use_threads",
]


@dataclass(frozen=True)
class CpuLimit:
    """How many CPUs the process may use, and what set the limit (``affinity``,
    ``cgroup v2 cpu.max``, ``cgroup v1 cfs quota`` or ``cpu_count``)."""

    cpus: int
    source: str


@dataclass(frozen=True)
class ThreadPlan:
    """The threads one process uses and why: ``cpus`` it may use (``source``), ``workers``
    sharing them, ``OMP_NUM_THREADS`` (``None`` unset) and an explicit ``requested`` count."""

    threads: int
    cpus: int
    source: str
    workers: int = 1
    omp_num_threads: int | None = None
    requested: int | None = None

    def as_record(self) -> dict[str, Any]:
        """What a unit's ``env.json`` records."""
        return asdict(self)


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


def available_cpus(
    proc_cgroup: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")
) -> CpuLimit:
    """The CPUs this process may use: its affinity mask, lowered by a cgroup CPU quota."""
    try:
        cpus, source = len(os.sched_getaffinity(0)), "affinity"
    except (AttributeError, OSError):
        cpus, source = os.cpu_count() or 1, "cpu_count"
    quota = cgroup_cpu_quota(proc_cgroup, root)
    if quota is not None and math.ceil(quota[0]) < cpus:
        cpus, source = max(1, math.ceil(quota[0])), quota[1]
    return CpuLimit(max(1, cpus), source)


def check_threads(value: Any, key: str = "threads") -> int | None:
    """``None`` for ``"auto"`` (or ``None``), else an integer ≥ 1; anything else is a one-line
    :class:`ConfigError` naming ``key``."""
    if value is None or value == "auto":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(key, value, "must be 'auto' or an integer >= 1")
    return value


def _omp_num_threads() -> int | None:
    raw = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    try:
        n = int(raw)
    except ValueError:
        return None
    return n if n >= 1 else None


def plan_threads(
    requested: Any = "auto", workers: int = 1, limit: CpuLimit | None = None
) -> ThreadPlan:
    """The threads of one process: ``requested`` when it is a number, else the CPUs it may use
    divided among ``workers`` (at least one each), capped at ``OMP_NUM_THREADS`` when set."""
    explicit = check_threads(requested)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError("workers", workers, "must be an integer >= 1")
    lim = limit or available_cpus()
    omp = _omp_num_threads()
    if explicit is not None:
        n = explicit
    else:
        n = max(1, lim.cpus // workers)
        if omp is not None:
            n = min(n, omp)
    return ThreadPlan(n, lim.cpus, lim.source, workers, omp, explicit)


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
