"""Progress reporting for the longer loops of the boosting experiments, injected by the caller
(the runner passes its progress bar; a notebook passes ``tqdm`` or nothing)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeAlias, TypeVar

__all__ = ["Progress", "each"]

T = TypeVar("T")

Progress: TypeAlias = Callable[[Iterable[Any], str], Iterable[Any]]
"""``progress(items, description)``: the items, wrapped in a progress bar."""


def each(items: Iterable[T], progress: Progress | None, description: str) -> Iterable[T]:
    """``items`` through ``progress`` when one is given."""
    return items if progress is None else progress(items, description)
