"""Where cl runs read data and keep caches, the device they compute on, their progress bars.

A :class:`Workspace` is made once (in a notebook, or by the harness from a unit's context) and
passed to every run: :func:`~privrepro.continual.run_cosine_benchmark`,
:func:`~privrepro.continual.run_peft` and the loaders they call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privrepro.metrics import MetricLogger

__all__ = ["Progress", "Workspace", "progress_bar", "steps_bar"]

#: ``progress(iterable, desc=..., total=...)`` wraps a long loop, e.g. ``UnitContext.progress``
Progress = Callable[..., Iterable[Any]]


def progress_bar(iterable: Iterable[Any], desc: str, total: int | None = None) -> Iterator[Any]:
    """A tqdm bar with ETA on a terminal or in a notebook; silent when the output is not a
    terminal and under CI (the project's one rule, :mod:`privrepro.progress`)."""
    from privrepro import progress

    yield from progress.progress_bar(iterable, desc=desc, total=total)


def steps_bar(
    progress: Progress | None, desc: str = "dp-sgd steps"
) -> Callable[[Iterable[Any]], Iterable[Any]] | None:
    """``progress`` as the one-argument wrapper a training loop takes (``train_member``'s
    ``progress``): a bar with an ETA over its optimiser steps (``None`` stays ``None``)."""
    if progress is None:
        return None
    return lambda it: progress(it, desc=desc)


@dataclass(frozen=True)
class Workspace:
    """Where runs read and write, and on what they compute.

    Attributes:
        data_dir: the data root of the real datasets (torchvision / UCI layouts; see
            ``docs/cl.md``); synthetic stand-ins need none.
        cache_dir: backbone features and FiLM pixel caches (``<cache_dir>/cl/...``), reused by
            every later run.
        device: ``"cpu"`` or ``"cuda"``: feature extraction, DP-SGD, evaluation.
        progress: wraps long loops (tasks, feature batches); :func:`progress_bar` by default.
        studies: the folder of the tuning studies' journal files (default
            ``<cache_dir>/../_studies``, beside the harness's run store).
        metrics: ``log(name, value, step)`` for per-step metrics (DP-SGD loss and ε spent as
            ``dpsgd/task<t>/…``, tuning trials as ``tuning/…``; :mod:`privrepro.metrics`), or
            ``None``.
    """

    data_dir: str | Path = "data"
    cache_dir: str | Path = "experiments/_cache"
    device: str = "cpu"
    progress: Progress = progress_bar
    studies: str | Path | None = None
    metrics: MetricLogger | None = None

    @property
    def study_dir(self) -> Path:
        """Where tuning studies are kept unless a run names an RDB storage."""
        return (
            Path(self.cache_dir).parent / "_studies" if self.studies is None else Path(self.studies)
        )
