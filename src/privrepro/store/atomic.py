"""Atomic file writes: a reader sees the old file or the new one, never a partial one.

Each write goes to a temporary file in the destination's folder, is flushed and fsynced, then
renamed over the destination (``os.replace`` is atomic on POSIX within one file system). A process
killed mid-write leaves at most a ``.tmp-*`` file that no reader looks at.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd

__all__ = ["atomic_write_bytes", "atomic_write_table", "atomic_write_text", "fsync_dir"]


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
    """Write ``data`` to ``path`` atomically, creating parent folders."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_table(df: pd.DataFrame, csv_path: str | Path, parquet: bool = True) -> Path:
    """Write a table as CSV (and Parquet beside it, same stem), each atomically."""
    csv_path = Path(csv_path)
    atomic_write_text(csv_path, df.to_csv(index=False))
    if parquet:
        import io

        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        atomic_write_bytes(csv_path.with_suffix(".parquet"), buf.getvalue())
    return csv_path
