"""Checks made before any compute: root keys, output paths, and the memory a unit will need
(the host's, :func:`check_memory`, and the device's, :func:`check_device_memory`).

Each failure is a :class:`~privrepro.config.ConfigError` naming the key, the value and what is
allowed, so the command line reports it in one line (:func:`error_line`) with exit status 2 and
nothing is computed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

from privrepro.config.validation import ConfigError
from privrepro.data.provenance import DataChangedError
from privrepro.data.registry import DamagedDataError, MissingDataError

PROFILES = ("smoke", "paper", "tiny")
_BOOLEANS = ("force", "progress", "plot")
_OUTPUT_PATHS = ("experiments_dir", "results_dir", "plots_dir", "cache_dir")

#: The largest seed and worker number: a signed 64-bit integer, what numpy and torch seed from.
MAX_SEED = 2**63 - 1
MAX_WORKER = 2**16 - 1

#: The most parallel jobs a multirun may start on one machine (Hydra's joblib ``n_jobs``).
MAX_JOBS = 1024

#: What the plan holds per byte of a unit's JSON: the unit and its identity as Python dicts, the
#: identity's hash and data source (measured with tracemalloc: 2.2 on cl Fig. 3 PEFT, whose units
#: share their settings groups; 8.2 for small dicts of floats that share nothing; rounded up).
PLAN_BYTES_PER_UNIT_BYTE = 10

# Leave this share of the available memory to everything else the process holds (torch, the
# interpreter, the rows of other units): a unit predicted above it is refused.
MEMORY_HEADROOM = 0.8


def validate_root(cfg: DictConfig) -> None:
    """The root keys: profile, seed, strict booleans, threads, ``max_hours``, device, and the
    output paths' form."""
    profile = cfg.get("profile", {}).get("name")
    if profile not in PROFILES:
        raise ConfigError("profile.name", profile, f"must be one of {list(PROFILES)}")
    for key, most in (("seed", MAX_SEED), ("worker", MAX_WORKER)):
        value = cfg.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
            raise ConfigError(key, value, f"must be an integer in [0, {most}]")
    for key in _BOOLEANS:
        value = cfg.get(key, False)
        if not isinstance(value, bool):
            raise ConfigError(key, value, "must be true or false")
    from privrepro.runner.time_budget import check_max_hours
    from privrepro.threads import check_threads

    check_threads(cfg.get("threads", "auto"), "threads")
    check_max_hours(cfg.get("max_hours"))
    for key in ("paper", "name", "recipe"):
        if not cfg.get("figure", {}).get(key):
            raise ConfigError(f"figure.{key}", None, "must be set by the experiment config")
    paths = cfg.get("paths") or {}
    for key in (*_OUTPUT_PATHS, "data_dir"):
        value = paths.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"paths.{key}", value, "must be a non-empty path")


def check_writable(key: str, path: str | Path) -> None:
    """``path`` is a folder this process can create files in, or can be created as one: a folder
    is made and removed at once in its nearest existing ancestor (permission bits do not tell).
    """
    p = Path(path).expanduser()
    probe = p
    try:
        while not probe.exists() and not probe.is_symlink():
            if probe.parent == probe:
                break
            probe = probe.parent
    except OSError as exc:
        raise ConfigError(key, str(path), f"must be a writable folder; {exc.strerror}") from exc
    if probe.exists() and not probe.is_dir():
        where = "is a file" if probe == p else f"lies under the file {probe}"
        raise ConfigError(key, str(path), f"must be a folder; it {where}")
    if not os.access(probe, os.W_OK | os.X_OK):
        what = "is not writable" if probe == p else f"cannot be created: {probe} is not writable"
        raise ConfigError(key, str(path), f"must be a writable folder; it {what}")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".privrepro-probe-", dir=probe))
    except OSError as exc:
        what = "is not writable" if probe == p else f"cannot be created in {probe}"
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            key, str(path), f"must be a writable folder; it {what} ({reason})"
        ) from exc


def check_output_paths(cfg: DictConfig, plot: bool) -> None:
    """Every output folder of the run is writable (the plots folder only when plotting)."""
    for key in _OUTPUT_PATHS:
        if key == "plots_dir" and not plot:
            continue
        check_writable(f"paths.{key}", str(cfg.paths[key]))


#: The integer keys of the SLURM launcher (``conf/hydra/launcher/slurm.yaml``, submitit) and
#: their ranges: a job of at most a year, at most 1,024 CPUs or GPUs and 64 TiB of memory a node.
LAUNCHER_INTS = {
    "timeout_min": (1, 525_600),
    "cpus_per_task": (1, 1024),
    "gpus_per_node": (0, 1024),
    "tasks_per_node": (1, 1024),
    "mem_gb": (1, 65_536),
    "nodes": (1, 10_000),
    "array_parallelism": (1, 100_000),
}


def check_launcher(launcher: Any, cpus: int | None = None) -> None:
    """The launcher's counts, before any job starts: the SLURM launcher's integers
    (:data:`LAUNCHER_INTS`), and the job count of Hydra's joblib launcher (``n_jobs``): an
    integer in ``[1, MAX_JOBS]``, or a negative one counted back from the CPUs as joblib does
    (``-1``: every CPU), down to ``-cpus`` (``0`` and below have no meaning)."""
    for key, (lo, hi) in LAUNCHER_INTS.items():
        got = (launcher or {}).get(key)
        if got is None:
            continue
        if isinstance(got, bool) or not isinstance(got, int) or not lo <= got <= hi:
            raise ConfigError(f"hydra.launcher.{key}", got, f"must be an integer in [{lo}, {hi}]")
    value = (launcher or {}).get("n_jobs")
    if value is None:
        return
    if cpus is None:
        from privrepro.threads import available_cpus

        cpus = available_cpus().cpus
    ok = isinstance(value, int) and not isinstance(value, bool)
    if not ok or not (1 <= value <= MAX_JOBS or -cpus <= value <= -1):
        raise ConfigError(
            "hydra.launcher.n_jobs",
            value,
            f"must be an integer in [1, {MAX_JOBS}], or in [-{cpus}, -1] (counted back from "
            f"the {cpus} CPUs here: -1 is every CPU)",
        )


def check_unit_list(units: Sequence[Mapping[str, Any]], available: int | None = None) -> None:
    """The whole unit list, priced before its identities are made: at most
    :data:`~privrepro.figures.api.MAX_UNITS` units (a grid counts its units before making them;
    this catches a figure that joins several grids), and the plan of them all
    (:data:`PLAN_BYTES_PER_UNIT_BYTE` per byte of the largest unit's JSON) within the memory
    available here."""
    from privrepro.figures.api import MAX_UNITS

    if len(units) > MAX_UNITS:
        raise ConfigError(
            "params", f"{len(units)} run units", f"a figure may have at most {MAX_UNITS}"
        )
    if not units:
        return
    largest = max(len(json.dumps(u, default=str)) for u in units)
    need = len(units) * largest * PLAN_BYTES_PER_UNIT_BYTE
    available = available_memory() if available is None else available
    if available is not None and need > available * MEMORY_HEADROOM:
        raise ConfigError(
            "params",
            f"{len(units)} run units",
            f"their plan would need about {_gib(need)} ({len(units)} × {largest} B of config "
            f"× {PLAN_BYTES_PER_UNIT_BYTE}); must fit in {_gib(available * MEMORY_HEADROOM)} "
            f"({MEMORY_HEADROOM:.0%} of the {_gib(available)} available here)",
        )


def _cgroup_free() -> int | None:
    """Memory left under this process's cgroup (v2) limit, when it has one."""
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit == "max":
            return None
        used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
        return max(int(limit) - used, 0)
    except (OSError, ValueError):
        return None


def available_memory() -> int | None:
    """Bytes of host memory available to a new allocation (``None`` when unknown)."""
    avail: int | None = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                avail = int(line.split()[1]) * 1024
                break
    except (OSError, ValueError, IndexError):
        avail = None
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            avail = None
    cg = _cgroup_free()
    if cg is not None:
        avail = cg if avail is None else min(avail, cg)
    return avail


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def check_memory(recipe: Any, params: Any, available: int | None = None) -> None:
    """Refuse a run whose largest unit is predicted not to fit in the memory available."""
    estimate = recipe.estimate_memory(params)
    if estimate is None:
        return
    available = available_memory() if available is None else available
    if available is None:
        return
    budget = int(available * MEMORY_HEADROOM)
    if estimate.bytes > budget:
        how = f" ({estimate.detail})" if estimate.detail else ""
        raise ConfigError(
            estimate.key,
            estimate.value,
            f"a unit would need about {_gib(estimate.bytes)}{how}; must fit in "
            f"{_gib(budget)} ({MEMORY_HEADROOM:.0%} of the {_gib(available)} available here)",
        )


# Leave this share of a GPU's memory to the CUDA context's growth and the caching allocator's
# fragmentation beyond what an estimate counts: a unit predicted above it is refused.
DEVICE_HEADROOM = 0.9


def device_capacity(device: str) -> int | None:
    """Bytes of memory of ``device``: a CUDA device's total, the host's available memory for
    ``cpu`` (``None`` when unknown)."""
    if device.startswith("cuda"):
        import torch

        return int(torch.cuda.get_device_properties(torch.device(device)).total_memory)
    return available_memory()


def peak_device_memory(recipe: Any, units: Sequence[Mapping[str, Any]]) -> tuple[int, Any] | None:
    """The unit of ``units`` with the largest predicted device memory and its estimate
    (``(index, MemoryEstimate)``), from the recipe's ``estimate_device_memory``; ``None`` when the
    recipe predicts none. Shapes only: no data, no device (a rehearsal's peak per figure)."""
    best: tuple[int, Any] | None = None
    for i, unit in enumerate(units):
        est = recipe.estimate_device_memory(unit)
        if est is not None and (best is None or est.bytes > best[1].bytes):
            best = (i, est)
    return best


def check_device_memory(
    recipe: Any,
    units: Sequence[Mapping[str, Any]],
    device: str,
    capacity: int | None = None,
) -> None:
    """Refuse, in one line, a run whose largest unit is predicted not to fit in the memory of
    ``device`` (``capacity`` bytes; default :func:`device_capacity`): what, how much, and the
    settings under which it would fit (clipping method, precision, chunk size)."""
    peak = peak_device_memory(recipe, units)
    if peak is None:
        return
    capacity = device_capacity(device) if capacity is None else capacity
    if capacity is None:
        return
    headroom = DEVICE_HEADROOM if device.startswith("cuda") else MEMORY_HEADROOM
    budget = int(capacity * headroom)
    i, est = peak
    if est.bytes <= budget:
        return
    est = recipe.estimate_device_memory(units[i], budget)
    raise ConfigError(
        est.key,
        est.value,
        f"unit {i} would need about {_gib(est.bytes)} of {device} memory, more than "
        f"{_gib(budget)} ({headroom:.0%} of {_gib(capacity)}): {est.detail}",
    )


def error_line(exc: BaseException) -> str | None:
    """The one line a configuration, data or I/O error is reported in (else ``None``).

    An I/O error is reported only when it names its file (every write of the store, the results
    and the plots does); one that names none is a bug, and keeps its traceback.
    """
    from privrepro.config.secrets import redact

    line = _error_line(exc)
    return None if line is None else redact(line)  # a storage URL's password is never shown


def _error_line(exc: BaseException) -> str | None:
    if isinstance(exc, ConfigError):
        return f"configuration error: {exc}"
    if isinstance(exc, DataChangedError):
        return f"data changed: {exc}"
    if isinstance(exc, DamagedDataError):
        return f"damaged data: {exc}"
    if isinstance(exc, MissingDataError):
        return f"missing data: {exc}"
    if isinstance(exc, OSError) and exc.filename:
        return f"I/O error: {exc.strerror or type(exc).__name__}: {exc.filename}"
    return None
