"""Build folders: where a unit is computed before it is published, and who owns each.

**Built privately, published in one step.** A unit is computed in ``.tmp-<unit_id>-<random>/``
and renamed into place once sealed, so a worker killed at any instant (SIGKILL included) leaves
no partial unit.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from privrepro.bounded_read import read_json
from privrepro.processes import process_alive, process_start

__all__ = [
    "BUILD_PREFIX",
    "HEARTBEAT",
    "OWNER",
    "TRASH_PREFIX",
    "Heartbeat",
    "owner_gone",
    "owner_record",
    "remove_path",
    "sweep_abandoned",
    "sweep_build_folders",
]

log = logging.getLogger("privrepro.store")

OWNER = ".owner.json"  # inside a build folder only
HEARTBEAT = ".heartbeat"
BUILD_PREFIX = ".tmp-"
TRASH_PREFIX = ".trash-"


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def owner_record() -> dict[str, Any]:
    """Who builds a unit: host, boot id, pid and the process's start time."""
    return {
        "host": platform.node(),
        "boot_id": _boot_id(),
        "pid": os.getpid(),
        "process_start": process_start(os.getpid()),
        "started": time.time(),
    }


def owner_gone(entry: Path, stale_after_s: float, now: float | None = None) -> bool:
    """Whether the owner of the build folder ``entry`` (its ``.owner.json``,
    :func:`owner_record`) is provably gone: on this host and boot, its process no longer exists
    (or its pid now belongs to a younger process); elsewhere, its heartbeat (``.heartbeat``, else
    the time it started) is older than ``stale_after_s``. A folder with no readable owner record
    is gone once its own modification time is older than ``stale_after_s``."""
    now = time.time() if now is None else now
    try:
        owner = read_json(entry / OWNER, 1 << 16)
    except (OSError, ValueError):
        owner = None
    if not isinstance(owner, dict):
        try:
            return now - entry.stat().st_mtime > stale_after_s
        except FileNotFoundError:
            return False
    same_machine = owner.get("host") == platform.node() and owner.get("boot_id") == _boot_id()
    if same_machine and owner.get("boot_id"):
        try:
            pid = int(owner.get("pid", -1))
        except (TypeError, ValueError):
            pid = -1
        return not process_alive(pid, owner.get("process_start"))
    try:
        beat = (entry / HEARTBEAT).stat().st_mtime
    except FileNotFoundError:
        try:
            beat = float(owner.get("started", 0.0))
        except (TypeError, ValueError):
            beat = 0.0
    return now - beat > stale_after_s


def sweep_build_folders(folder: Path, stale_after_s: float) -> list[Path]:
    """Remove the ``.tmp-*`` build folders in ``folder`` whose owner is gone
    (:func:`owner_gone`), and ``.tmp-*`` files older than ``stale_after_s`` (a killed atomic
    write's temporary); return what went. A live writer's folder is never removed."""
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    now = time.time()
    for entry in sorted(folder.glob(f"{BUILD_PREFIX}*")):
        try:
            if entry.is_dir() and not entry.is_symlink():
                gone = owner_gone(entry, stale_after_s, now)
            else:
                gone = now - entry.lstat().st_mtime > stale_after_s
        except OSError:
            continue
        if gone:
            remove_path(entry)
            removed.append(entry)
            log.info("removed abandoned %s", entry)
    return removed


class Heartbeat:
    """Touch ``path`` every ``period`` seconds from a daemon thread until stopped."""

    def __init__(self, path: Path, period: float) -> None:
        self.path, self.period = path, period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="privrepro-heartbeat", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            try:
                os.utime(self.path)
            except OSError:
                return  # the folder is gone (published, or removed): nothing left to mark

    def __enter__(self) -> Heartbeat:
        self.path.touch()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def sweep_abandoned(folder: Path, stale_after_s: float) -> list[Path]:
    """Remove the build folders in a figure's ``folder`` whose owner is gone
    (:func:`owner_gone`), ``.tmp-*`` files older than ``stale_after_s`` and leftover trash;
    return what went."""
    if not folder.is_dir():
        return []
    removed = []
    now = time.time()
    for entry in sorted(folder.iterdir()):
        name = entry.name
        if name.startswith(TRASH_PREFIX):
            remove_path(entry)
            removed.append(entry)
        elif name.startswith(BUILD_PREFIX):
            if entry.is_dir() and not entry.is_symlink():
                if owner_gone(entry, stale_after_s, now):
                    remove_path(entry)
                    removed.append(entry)
            else:
                try:
                    old = now - entry.lstat().st_mtime > stale_after_s
                except FileNotFoundError:
                    continue
                if old:
                    entry.unlink(missing_ok=True)
                    removed.append(entry)
    for entry in removed:
        log.info("removed abandoned %s", entry)
    return removed


def remove_path(path: Path) -> None:
    """Remove a folder (or file) that no reader looks at; missing parts are fine."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
