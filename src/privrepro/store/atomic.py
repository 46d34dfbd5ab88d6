"""Atomic file writes: a reader sees the old file or the new one, never a partial one.

Each write goes to a temporary file ``.tmp-<name>-<random>`` in the destination's folder, is
flushed and fsynced, then renamed over the destination (``os.replace`` is atomic on POSIX within
one file system). A process killed mid-write leaves at most such a temporary, which no reader
looks at and whose name says which file it was for (:func:`leftover_temporaries`). Files get the
ordinary permissions of a new file (``0666`` less the umask), not ``mkstemp``'s private ``0600``.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

__all__ = [
    "TMP_PREFIX",
    "atomic_write_bytes",
    "atomic_write_table",
    "atomic_write_text",
    "file_mode",
    "folder_mode",
    "fsync_dir",
    "leftover_temporaries",
]

TMP_PREFIX = ".tmp-"


def _umask() -> int:
    """The process umask (read without changing it where ``/proc`` allows)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode of a new regular file: ``0666`` less the umask."""
    return 0o666 & ~_umask()


def folder_mode() -> int:
    """The mode of a new folder: ``0777`` less the umask."""
    return 0o777 & ~_umask()


def fsync_dir(path: Path) -> None:
    """Flush a directory entry (after a rename) so it survives a crash."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, creating parent folders.

    Raises:
        OSError: naming ``path`` (``filename``) whatever failed (a full disk, a read-only or
            special file system); the temporary is removed and ``path`` is left as it was.
    """
    path = Path(path)
    with _naming(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{path.name}-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fchmod(fh.fileno(), file_mode())
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    fsync_dir(path.parent)
    return path


@contextlib.contextmanager
def _naming(path: Path) -> Iterator[None]:
    """Re-raise an ``OSError`` that names no file as one naming ``path``."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def parquet_bytes(df: pd.DataFrame) -> bytes:
    """``df`` as Parquet bytes (no index)."""
    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()


def atomic_write_table(df: pd.DataFrame, csv_path: str | Path, parquet: bool = True) -> Path:
    """Write a table as CSV (and Parquet beside it, same stem), each atomically."""
    csv_path = Path(csv_path)
    atomic_write_text(csv_path, df.to_csv(index=False))
    if parquet:
        atomic_write_bytes(csv_path.with_suffix(".parquet"), parquet_bytes(df))
    return csv_path


def leftover_temporaries(
    folder: Path, names: tuple[str, ...] | None = None, older_than_s: float = 0.0
) -> list[Path]:
    """Temporaries of :func:`atomic_write_bytes` in ``folder`` a killed writer left behind.

    ``names``: only those written for these destination file names (the caller holds the lock
    under which they are written, so none is live); ``older_than_s``: only those older than this
    (an atomic write takes well under a second, so an old temporary has no live writer).
    """
    if not folder.is_dir():
        return []
    out = []
    now = time.time()
    for entry in folder.glob(f"{TMP_PREFIX}*"):
        if not entry.is_file():
            continue
        rest = entry.name[len(TMP_PREFIX) :]
        if names is not None and not any(rest.startswith(f"{n}-") for n in names):
            continue
        try:
            if now - entry.stat().st_mtime < older_than_s:
                continue
        except FileNotFoundError:
            continue
        out.append(entry)
    return out
