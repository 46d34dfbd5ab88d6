"""Loops passed in: how a long loop of the library runs its items, given by the caller.

A long loop (epochs, optimiser steps, feature batches, tasks, trials, noise draws) takes a
:class:`Loops` argument, as randomness (a generator) and metrics (a logger) are taken, and
iterates ``loops(items, "label", total)``. :data:`PLAIN` (the default everywhere) returns the
items unchanged: plain iteration, nothing shown, nothing cut. A caller may pass another (more in
``docs/modules.md``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

import numpy as np

__all__ = ["PLAIN", "Loops"]

T = TypeVar("T")


class Loops:
    """Plain iteration (the base of every kind of loop control; :data:`PLAIN` is one)."""

    @property
    def truncates(self) -> bool:
        """Whether a loop may end before its last item (its outputs are then placeholders)."""
        return False

    def __call__(self, items: Iterable[T], desc: str, total: int | None = None) -> Iterable[T]:
        """The items of the loop labelled ``desc`` to run; ``total``: how many the full loop
        holds (default: ``len(items)`` where defined). Here: ``items`` itself."""
        return items

    def item_size(self, samples: int, host_per_sample: bool = False) -> int:
        """How many of the current item's ``samples`` to run: here all of them."""
        return samples

    def labelled(self, prefix: str) -> Loops:
        """These loops with every label read ``<prefix> <desc>``."""
        return _Labelled(self, prefix)

    def full_rows(self, rows: Any, n: int) -> Any:
        """``rows`` (an array or tensor whose first axis is items) completed with zero rows to
        ``n`` when loops truncate and a loop made fewer; unchanged otherwise."""
        if not self.truncates or len(rows) >= n:
            return rows
        missing = (n - len(rows), *tuple(rows.shape[1:]))
        if isinstance(rows, np.ndarray):
            return np.concatenate([rows, np.zeros(missing, rows.dtype)])
        import torch

        return torch.cat([rows, rows.new_zeros(missing)])

    def full_list(self, items: list[Any], n: int) -> list[Any]:
        """``items`` completed to ``n`` entries by repeating its last one when loops truncate
        and a loop made fewer; unchanged otherwise (or when empty)."""
        if not self.truncates or not items or len(items) >= n:
            return items
        return items + [items[-1]] * (n - len(items))


class _Labelled(Loops):
    """``inner`` with each loop's label prefixed (see :meth:`Loops.labelled`)."""

    def __init__(self, inner: Loops, prefix: str) -> None:
        self.inner, self.prefix = inner, prefix

    @property
    def truncates(self) -> bool:
        return self.inner.truncates

    def __call__(self, items: Iterable[T], desc: str, total: int | None = None) -> Iterable[T]:
        return self.inner(items, f"{self.prefix} {desc}", total)

    def item_size(self, samples: int, host_per_sample: bool = False) -> int:
        return self.inner.item_size(samples, host_per_sample)


#: plain iteration: the default of every function that takes ``loops``
PLAIN = Loops()
