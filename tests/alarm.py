"""A time bound for tests of reads that could block: a regression fails the test (a
``TimeoutError``) instead of hanging the suite. ``SIGALRM``, so the main thread of a POSIX
process only (pytest-xdist's workers run each test there)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

__all__ = ["bounded"]


@contextlib.contextmanager
def bounded(seconds: int = 20) -> Iterator[None]:
    """Raise ``TimeoutError`` in the block if it has not ended after ``seconds``."""

    def _timeout(*_: Any) -> None:
        raise TimeoutError(f"blocked for {seconds} s")

    old = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
