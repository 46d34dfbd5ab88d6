"""Loop budgets: how a long loop of the library asks how much of itself to run.

This module is the whole contract between the library and a tool that measures it (the
rehearsal, ``privrepro.rehearsal``, is one). The library imports this module and nothing of the
tool; the tool installs a budget and reads what the loops reported to it.

**Under no budget (the default), every function here returns its argument unchanged**: what the
library computes never depends on this module. A budget exists only inside
``with budget_scope(budget):`` (a context variable: per thread and per asyncio task).

The contract, for the library's side:

* **A long loop** (epochs, optimiser steps, feature batches, tasks, trials, noise draws) iterates
  ``budgeted(items, "label", total)``. Under a budget it may yield only its first items; the
  budget learns from ``total`` (or ``len(items)``) how many the full loop holds, and times the
  items it lets through (the time spent in the loop's body until the next item is asked for).
  ``UnitContext.progress`` does this for every loop with a progress bar; a loop with no bar
  calls :func:`budgeted` itself. A loop must cope with ending early (no item after the last it
  was given), and its label names what it iterates.
* **An item whose cost is affine in its size** (a batch of images through a network, a batch of
  a training step) asks ``item_size(n)`` how many of its ``n`` samples to run: ``n`` under no
  budget; fewer under a budget, which then predicts the full item from the sizes it ran.
  ``host_per_sample=True`` says the item's work outside torch operators grows with its samples
  too (decoding images), not only its operators.
* **A shortened loop keeps full-shape outputs.** What a loop cut short did not compute is a
  placeholder, so the stages after it run at full size instead of failing on shapes:
  ``full_rows(rows, n)`` completes an array or tensor with zero rows, ``full_list(items, n)`` a
  list by repeating its last item; :func:`budget_active` says whether to fill other kinds of
  output (the tuned models a loop did not tune). Under no budget all three leave outputs as they
  are.
* **Loops that build a cache** that later units or figures reuse are labelled so a cost model can
  count them once per cache (:func:`is_cache_loop`): ``features`` (cl's backbone features),
  ``<...> pixels`` (cl FiLM's pixel arrays), ``base model <...>`` and ``tuned models <...>`` (ip's
  trained and tuned networks). A recipe says which of its units share such a cache and which
  cost alike (``Figure.shared_cache_key``, ``Figure.cost_class``).

For the tool's side, a budget is any object with the two methods of :class:`LoopBudget`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

__all__ = [
    "CACHE_LOOPS",
    "LoopBudget",
    "budget_active",
    "budget_scope",
    "budgeted",
    "full_list",
    "full_rows",
    "is_cache_loop",
    "item_size",
]

T = TypeVar("T")


@runtime_checkable
class LoopBudget(Protocol):
    """What a loop budget does (the rehearsal's ``RehearsalCap`` is one)."""

    def loop(self, items: Iterable[Any], desc: str, total: int | None) -> Iterator[Any]:
        """The items of the loop labelled ``desc`` to run (the first few), timed; ``total``: how
        many the full loop holds (``None``: unknown)."""
        ...

    def item_size(self, samples: int, host_per_sample: bool) -> int:
        """How many of the current item's ``samples`` to run (between 1 and ``samples``)."""
        ...


_BUDGET: ContextVar[LoopBudget | None] = ContextVar("privrepro_loop_budget", default=None)

#: labels of loops that build a cache shared by later units and figures: cl's backbone features
#: (``<cache_dir>/cl/features``), FiLM pixel arrays (``<cache_dir>/cl/images``; labels ending so),
#: ip's base-model trainings (``<cache_dir>/ip/base-<key>``; labels starting so) and ip's tuned
#: ResNet family (``<cache_dir>/ip/tune-<key>``; labels starting so)
CACHE_LOOPS = ("features", " pixels", "base model ", "tuned models ")


def is_cache_loop(desc: str) -> bool:
    """Whether the loop labelled ``desc`` builds a shared cache (see :data:`CACHE_LOOPS`)."""
    return (
        desc == "features"
        or desc.endswith(" pixels")
        or desc.startswith("base model ")
        or desc.startswith("tuned models ")
    )


@contextlib.contextmanager
def budget_scope(budget: LoopBudget | None) -> Iterator[None]:
    """Install ``budget`` for the loops run inside the ``with`` block (``None``: no budget)."""
    token = _BUDGET.set(budget)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def budget_active() -> bool:
    """Whether a loop budget is installed (outputs of shortened loops are then placeholders)."""
    return _BUDGET.get() is not None


def budgeted(items: Iterable[T], desc: str, total: int | None = None) -> Iterable[T]:
    """``items`` itself under no budget; else the items the budget lets the loop ``desc`` run.

    Args:
        items: what the loop iterates.
        desc: the loop's label (``epochs``, ``noise draws``; see :func:`is_cache_loop`).
        total: how many items the full loop holds (default: ``len(items)`` where defined).
    """
    budget = _BUDGET.get()
    if budget is None:
        return items
    if total is None or total < 0:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    return budget.loop(items, desc, total)


def item_size(samples: int, host_per_sample: bool = False) -> int:
    """How many of the current item's ``samples`` to run: all of them under no budget."""
    budget = _BUDGET.get()
    return samples if budget is None else budget.item_size(samples, host_per_sample)


def full_rows(rows: Any, n: int) -> Any:
    """``rows`` (an array or tensor whose first axis is items) completed with zero rows to ``n``
    when a budget is installed and a loop it shortened made fewer; unchanged otherwise."""
    if _BUDGET.get() is None or len(rows) >= n:
        return rows
    missing = (n - len(rows), *tuple(rows.shape[1:]))
    if isinstance(rows, np.ndarray):
        return np.concatenate([rows, np.zeros(missing, rows.dtype)])
    import torch

    return torch.cat([rows, rows.new_zeros(missing)])


def full_list(items: list[Any], n: int) -> list[Any]:
    """``items`` completed to ``n`` entries by repeating its last one when a budget is installed
    and a loop it shortened made fewer (e.g. the predictions after each task of a shortened task
    loop); unchanged otherwise (or when empty)."""
    if _BUDGET.get() is None or not items or len(items) >= n:
        return items
    return items + [items[-1]] * (n - len(items))
