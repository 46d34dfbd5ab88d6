"""Bounded reads: every file the store, the results and the caches read is a regular file of
bounded size, and every JSON document they parse nests to a bounded depth.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

__all__ = [
    "CACHE_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "META_BYTES",
    "PLOT_BYTES",
    "TABLE_BYTES",
    "UNIT_JSON_BYTES",
    "JSONTooDeep",
    "UnsafeFile",
    "file_kind",
    "json_depth",
    "parse_json",
    "read_bytes",
    "read_json",
    "regular_file",
]

#: The deepest nesting of arrays and objects a JSON document may have. A unit's identity nests a
#: handful of levels (``unit`` → a parameter → a list); sixty-four leaves ample room.
MAX_JSON_DEPTH = 64
#: The largest results table (Parquet or its CSV export, or a summary) read into memory.
TABLE_BYTES = 2 << 30
#: The largest ``meta.json`` (it lists every unit of a figure with its parameters).
META_BYTES = 256 << 20
#: The largest ``config.json``, ``env.json``, run record or job selection of the store.
UNIT_JSON_BYTES = 16 << 20
#: The largest JSON record of a cache or a stand-in marker (a marker lists every file's MD5).
CACHE_JSON_BYTES = 64 << 20
#: The largest plot image the report embeds in its page (a figure's PNG is well under 1 MiB).
PLOT_BYTES = 64 << 20


class UnsafeFile(OSError):
    """A file a reader refuses before reading it; ``str()`` is one line naming the path."""

    def __init__(self, path: str | Path, what: str) -> None:
        super().__init__(errno.EINVAL, what, str(path))
        self.what = what

    def __str__(self) -> str:
        return f"{self.filename}: {self.what}"


class JSONTooDeep(ValueError):
    """A JSON document nesting deeper than the reader allows."""


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words ("a named pipe", "a device", …)."""
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _inside(path: Path, tree: Path) -> bool:
    try:
        path.relative_to(tree)
    except ValueError:
        return False
    return True


def _target(path: Path, tree: str | Path | None) -> Path:
    """``path``, or where its symbolic link points when that lies inside ``tree`` (default: the
    folder ``path`` lies in). Raises :class:`UnsafeFile` for a link that leaves it."""
    st = os.lstat(path)  # FileNotFoundError: absent, as the callers expect
    if not stat.S_ISLNK(st.st_mode):
        return path
    real = Path(os.path.realpath(path))
    base = Path(os.path.realpath(tree if tree is not None else path.parent))
    if not _inside(real, base):
        raise UnsafeFile(path, f"a symbolic link out of {base} (to {real}), not read")
    return real


def _check(path: Path, st: os.stat_result, max_bytes: int | None) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(path, f"{file_kind(st.st_mode)}, not a regular file; not read")
    if max_bytes is not None and st.st_size > max_bytes:
        raise UnsafeFile(
            path, f"{st.st_size} bytes, more than the {max_bytes} such a file may hold; not read"
        )


def regular_file(
    path: str | Path, max_bytes: int | None = None, tree: str | Path | None = None
) -> os.stat_result:
    """The status of ``path`` when it is a regular file (of at most ``max_bytes``), reached
    directly or through a symbolic link inside ``tree`` (default: its own folder).

    Raises:
        FileNotFoundError: when it is absent.
        UnsafeFile: otherwise, when it is not such a file.
    """
    path = Path(path)
    target = _target(path, tree)
    st = os.stat(target, follow_symlinks=False)
    _check(path, st, max_bytes)
    return st


def read_bytes(path: str | Path, max_bytes: int, tree: str | Path | None = None) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes`` (see :func:`regular_file`),
    checked on the open descriptor: a pipe is never waited on, a device never read.

    Raises:
        FileNotFoundError: when it is absent.
        UnsafeFile: when it is not a regular file, is too large, or grows past ``max_bytes``.
    """
    path = Path(path)
    target = _target(path, tree)
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        _check(path, os.fstat(fd), max_bytes)
        chunks = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        if exc.filename is None and not isinstance(exc, UnsafeFile):
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise UnsafeFile(path, f"grew past the {max_bytes} bytes such a file may hold; not read")
    return data


_STEP: Any = None


def json_depth(data: bytes | str) -> int:
    """How deep the arrays and objects of a JSON text nest (brackets inside strings not
    counted; a text that is not JSON gets the depth of its unbalanced brackets).

    Linear and vectorised: escaped backslashes and quotes are dropped, every remaining quote
    opens or closes a string, and the bracket steps outside strings are summed up.
    """
    import numpy as np

    global _STEP
    if _STEP is None:
        step = np.zeros(256, dtype=np.int8)
        step[[ord("["), ord("{")]] = 1
        step[[ord("]"), ord("}")]] = -1
        _STEP = step
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    codes = np.frombuffer(raw, dtype=np.uint8)
    marks = codes[np.flatnonzero(_STEP[codes] | (codes == ord('"')))]  # quotes and brackets
    if marks.size == 0:
        return 0
    outside = np.cumsum(marks == ord('"'), dtype=np.int64) % 2 == 0
    steps = np.where(outside, _STEP[marks], 0)
    return max(0, int(np.cumsum(steps, dtype=np.int64).max()))


def parse_json(data: bytes | str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(data)`` once its nesting is known to be at most ``max_depth``.

    Raises:
        JSONTooDeep: (a ``ValueError``) for a deeper document.
        ValueError: for text that is not JSON (``json.JSONDecodeError``, ``UnicodeDecodeError``).
    """
    depth = json_depth(data)
    if depth > max_depth:
        raise JSONTooDeep(f"nests {depth} levels deep, more than the {max_depth} allowed")
    try:
        return json.loads(data)
    except RecursionError as exc:  # unreachable after the count; kept as the last guard
        raise JSONTooDeep(f"nests too deep to parse ({exc})") from None


def read_json(
    path: str | Path,
    max_bytes: int = UNIT_JSON_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    tree: str | Path | None = None,
) -> Any:
    """:func:`parse_json` of :func:`read_bytes`.

    Raises:
        FileNotFoundError, UnsafeFile: as :func:`read_bytes`.
        ValueError: when it is not JSON, or nests deeper than ``max_depth``.
    """
    return parse_json(read_bytes(path, max_bytes, tree), max_depth)
