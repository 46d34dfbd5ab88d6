"""The table lock: one exclusive ``flock`` per figure, held while its table is derived.

The lock file is ``.table.lock`` in the figure's store folder. A lock file this process may not
write (another user's) is locked through a read-only descriptor, which ``flock`` allows, so both
users still exclude each other. One it cannot open at all (unreadable, a folder, a pipe, a
symbolic link) is moved aside to ``.corrupt-table.lock-<time>`` with one warning line, and a new
one is made.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from privrepro.store.seal import os_reason

__all__ = ["CORRUPT_PREFIX", "LOCK_NAME", "table_lock"]

log = logging.getLogger("privrepro.store")

LOCK_NAME = ".table.lock"
CORRUPT_PREFIX = ".corrupt-"


@contextlib.contextmanager
def table_lock(folder: Path) -> Iterator[None]:
    """Hold the table lock of the figure whose store folder is ``folder`` (made if absent).

    A lock file that cannot be used is moved aside and made anew (the module's docstring).
    """
    folder.mkdir(parents=True, exist_ok=True)
    fd = _open_lock(folder)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _open_lock(folder: Path) -> int:
    path = folder / LOCK_NAME
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    for _ in range(5):
        try:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | flags, 0o666)
            except PermissionError:
                fd = os.open(path, os.O_RDONLY | flags)
        except FileNotFoundError:
            continue  # removed between the two opens
        except OSError as exc:
            _lock_aside(folder, path, os_reason(exc))
            continue
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
        os.close(fd)
        _lock_aside(folder, path, f"{path.name} is not a regular file")
    raise OSError(errno.EACCES, "cannot open the table lock", str(path))


def _lock_aside(folder: Path, path: Path, reason: str) -> None:
    aside = folder / f"{CORRUPT_PREFIX}{path.name.lstrip('.')}-{time.time_ns()}"
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return
    log.warning(
        "the table lock %s cannot be used (%s): moved aside to %s", path, reason, aside.name
    )
