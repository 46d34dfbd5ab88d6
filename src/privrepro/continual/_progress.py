"""Progress bars of the cl library's long loops (feature extraction, tasks of a run)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["Progress", "progress_bar"]

#: ``progress(iterable, desc=..., total=...)`` wraps a long loop, e.g. ``UnitContext.progress``
Progress = Callable[..., Iterable[Any]]


def progress_bar(iterable: Iterable[Any], desc: str, total: int | None = None) -> Iterator[Any]:
    """A tqdm bar on a terminal or in a notebook; silent when the output is not a terminal."""
    from tqdm.auto import tqdm

    yield from tqdm(iterable, desc=desc, total=total, disable=None, leave=False)
