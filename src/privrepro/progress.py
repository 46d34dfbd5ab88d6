"""Progress of long loops: a bar on a terminal, a line at a steady interval everywhere else.

One rule for every loop of the project (units, trials, epochs, Monte-Carlo trainings, audit
draws), shown only when asked for (``progress=true``, the default) and never under ``CI`` (more in
``docs/modules.md``).
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TextIO, TypeVar

from privrepro.loops import Loops

__all__ = [
    "LineProgress",
    "ProgressLoops",
    "in_ci",
    "in_notebook",
    "progress_bar",
    "progress_disabled",
    "progress_interval",
]

#: seconds between two progress lines of one loop off a terminal (``PRIVREPRO_PROGRESS_INTERVAL``)
DEFAULT_INTERVAL_S = 30.0
log = logging.getLogger("privrepro.progress")
_OPEN: list[LineProgress] = []  # the loops now running, outermost first (their lines name them)


def in_ci() -> bool:
    """``CI`` is set to a true value (CI systems set ``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def progress_disabled(enabled: bool | None = None) -> bool | None:
    """tqdm's ``disable`` argument: ``True`` when switched off or under CI, else ``None`` (tqdm
    then shows the bar only on a terminal)."""
    if enabled is False or in_ci():
        return True
    return None


def progress_interval() -> float:
    """Seconds between progress lines off a terminal: ``PRIVREPRO_PROGRESS_INTERVAL`` (>= 0),
    else 30."""
    raw = os.environ.get("PRIVREPRO_PROGRESS_INTERVAL", "").strip()
    try:
        value = float(raw) if raw else DEFAULT_INTERVAL_S
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if math.isfinite(value) and value >= 0 else DEFAULT_INTERVAL_S


def in_notebook() -> bool:
    """This process is a Jupyter kernel (IPython already imported, with a kernel app)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _has_widgets() -> bool:
    import importlib.util

    return importlib.util.find_spec("ipywidgets") is not None


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    s = round(seconds)
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class LineProgress:
    """A loop's progress as lines at a steady interval (the off-terminal half of
    :func:`progress_bar`); supports what the project uses of tqdm: iteration, ``update``, ``n``,
    ``total`` and use as a context manager."""

    def __init__(
        self,
        iterable: Iterable[Any] | None,
        *,
        desc: str,
        total: float | None,
        unit: str = "it",
        interval: float | None = None,
        file: TextIO | None = None,
    ) -> None:
        if total is None and iterable is not None:
            try:
                total = len(iterable)  # type: ignore[arg-type]
            except TypeError:
                total = None
        self.iterable = iterable
        self.desc, self.total, self.unit = desc, total, unit
        self.interval = progress_interval() if interval is None else interval
        self.file = file
        self.n = 0
        self.start = time.monotonic()
        self.last_line = self.start
        self.lines = 0
        self.closed = False
        _OPEN.append(self)

    def _where(self) -> str:
        names = [p.desc for p in _OPEN[: _OPEN.index(self) + 1]] if self in _OPEN else [self.desc]
        return " › ".join(names)

    def line(self, done: bool = False) -> str:
        """What, how far, rate and ETA: ``desc: n/total (p%) · r it/s · elapsed · ETA``."""
        elapsed = time.monotonic() - self.start
        rate = self.n / elapsed if elapsed > 0 else math.nan
        units = "" if self.unit == "it" else f" {self.unit.removesuffix('s')}s"
        far = f"{self.n}/{int(self.total)}{units}" if self.total else f"{self.n}{units}"
        if self.total:
            far += f" ({100.0 * self.n / self.total:.0f}%)"
        if math.isfinite(rate) and rate >= 1:
            speed = f"{rate:.3g} {self.unit}/s"
        elif math.isfinite(rate) and rate > 0:
            speed = f"{1 / rate:.3g} s/{self.unit}"
        else:
            speed = f"? {self.unit}/s"
        text = f"progress: {self._where()}: {far} · {speed} · {_duration(elapsed)} elapsed"
        if done:
            return text + " · done"
        if self.total and rate > 0:
            text += f" · ETA {_duration((self.total - self.n) / rate)}"
        return text

    def _emit(self, done: bool = False) -> None:
        text = self.line(done)
        stream = self.file if self.file is not None else sys.stderr
        print(text, file=stream, flush=True)
        log.info(text.removeprefix("progress: "))
        self.lines += 1
        self.last_line = time.monotonic()

    def update(self, n: float = 1) -> None:
        self.n += int(n)
        finished = bool(self.total) and self.n >= (self.total or 0)  # close() says "done"
        if not finished and time.monotonic() - self.last_line >= self.interval:
            self._emit()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.lines or time.monotonic() - self.last_line >= self.interval:
            self._emit(done=True)
        if self in _OPEN:
            _OPEN.remove(self)

    def __iter__(self) -> Iterator[Any]:
        try:
            for item in () if self.iterable is None else self.iterable:
                yield item
                self.update()
        finally:
            self.close()

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:
        return False


def progress_bar(
    iterable: Iterable[Any] | None = None,
    *,
    desc: str,
    total: float | None = None,
    enabled: bool | None = None,
    unit: str = "it",
    **kwargs: Any,
) -> Any:
    """A ``tqdm`` bar with an ETA on a terminal or in a notebook, :class:`LineProgress` lines
    elsewhere (both follow :func:`progress_disabled`); a bar leaves no line behind when done, so
    nested bars (units › trials › epochs) stay readable."""
    stream = kwargs.get("file") or sys.stderr
    if progress_disabled(enabled) is None and not in_notebook() and not _is_terminal(stream):
        return LineProgress(iterable, desc=desc, total=total, unit=unit, file=kwargs.get("file"))
    bar: Any
    if in_notebook() and _has_widgets():
        from tqdm.notebook import tqdm as bar
    else:  # a terminal, or a notebook without ipywidgets: tqdm's text bar
        from tqdm.std import tqdm as bar

    kwargs.setdefault("leave", False)
    kwargs.setdefault("dynamic_ncols", True)
    return bar(
        iterable, desc=desc, total=total, unit=unit, disable=progress_disabled(enabled), **kwargs
    )


T = TypeVar("T")


class ProgressLoops(Loops):
    """Loops shown as progress bars (:func:`progress_bar`; ``enabled=False`` hides them): what
    the runner passes to a unit's loops (:mod:`privrepro.loops`)."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = enabled

    def __call__(self, items: Iterable[T], desc: str, total: int | None = None) -> Iterable[T]:
        if total is None:
            try:
                total = len(items)  # type: ignore[arg-type]
            except TypeError:
                total = None
        yield from progress_bar(items, desc=desc, total=total, enabled=self.enabled)
