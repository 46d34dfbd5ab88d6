"""Whether a process is still the one that was recorded: the owner checks of the run store's
build folders and of the tuning studies' running trials (psutil, on every platform it supports).

A pid alone is not enough: the system reuses pids, so an owner records its process's start time
(:func:`process_start`) and a live process with another start time is another process.
"""

from __future__ import annotations

import os

import psutil

__all__ = ["process_alive", "process_start"]

#: Start times are compared to this many seconds: psutil derives them from the same kernel
#: counters each time (Linux: boot time + start ticks), so one process always reads the same.
_START_SLACK_S = 1e-3
#: A recorded start below this (2001-09-09 as seconds since the epoch) is a count of clock ticks
#: since boot, what owners recorded before start times were read through psutil (Linux).
_TICKS_BELOW = 1e9


def process_start(pid: int) -> float | None:
    """The start time of process ``pid`` (seconds since the epoch), else ``None`` (no such
    process, or one this user may not inspect)."""
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.Error, ValueError, OverflowError):
        return None


def _same_start(proc: psutil.Process, start: float) -> bool:
    created = proc.create_time()
    if 0 <= start < _TICKS_BELOW and hasattr(os, "sysconf"):
        ticks = (created - psutil.boot_time()) * os.sysconf("SC_CLK_TCK")
        return round(ticks) == round(start)
    return abs(created - start) <= _START_SLACK_S


def process_alive(pid: int, start: float | None) -> bool:
    """Whether ``pid`` is the same live process (its start time matches, where known); a zombie
    (exited, not yet reaped) is not alive, and one this user may not inspect is kept alive."""
    if pid <= 0:
        return False
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return start is None or _same_start(proc, float(start))
    except psutil.AccessDenied:
        return True  # it exists; whose it is cannot be told, so it is not swept away
    except (psutil.Error, ValueError, OverflowError):
        return False
