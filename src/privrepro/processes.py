"""Whether a process is still the one that was recorded: the owner checks of the run store's
build folders and of the tuning studies' running trials."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["process_alive", "process_start"]


def process_start(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot (Linux), else ``None``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


def process_alive(pid: int, start: int | None) -> bool:
    """Whether ``pid`` is the same live process (its start time matches, where known)."""
    if pid <= 0:
        return False
    if Path("/proc").is_dir() and Path("/proc/self").exists():
        now_start = process_start(pid)
        if now_start is None:
            return False
        return start is None or now_start == start
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
