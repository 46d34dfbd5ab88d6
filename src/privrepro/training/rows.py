"""Training data as rows: a tensor, or a store that sends rows to the device on demand.

DP-SGD and evaluation touch their data in two ways only: *select* the rows of a run (a task's
samples, the kept labels) and *gather* one batch to compute on. For a tensor both are
``x[index]``. For data too large for the device (FiLM on full-size images,
:class:`privrepro.continual.pixels.HostImages`) selecting copies nothing and gathering moves one
batch; every consumer goes through the functions below (and ``x.device``, which both kinds
have), so both kinds run the same code.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch
from torch import Tensor

__all__ = ["LazyRows", "Rows", "gather_rows", "num_rows", "select_rows"]


@runtime_checkable
class LazyRows(Protocol):
    """Rows that live off the device: ``subset`` selects without copying, ``gather`` returns a
    device tensor."""

    device: torch.device

    def __len__(self) -> int: ...

    def subset(self, index: Any) -> LazyRows: ...

    def gather(self, index: Any = ...) -> Tensor: ...


Rows = Tensor | LazyRows


def num_rows(x: Rows) -> int:
    return int(x.shape[0]) if isinstance(x, Tensor) else len(x)


def select_rows(x: Rows, index: Any) -> Rows:
    """The rows of ``index`` (index tensor/array, boolean mask or slice), of the same kind."""
    if isinstance(x, Tensor):
        if not isinstance(index, (slice, Tensor)):
            index = torch.as_tensor(index, device=x.device)
        return x[index]
    return x.subset(index)


def gather_rows(x: Rows, index: Any = slice(None)) -> Tensor:
    """The rows of ``index`` as a tensor on the device (one batch)."""
    if isinstance(x, Tensor):
        return x[index]
    return x.gather(index)
