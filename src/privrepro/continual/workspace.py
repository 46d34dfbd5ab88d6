"""Where cl runs read data and keep caches, the device they compute on, how their loops run.

A :class:`Workspace` is made once (in a notebook, or by the harness from a unit's context) and
passed to every run: :func:`~privrepro.continual.run_cosine_benchmark`,
:func:`~privrepro.continual.run_peft` and the loaders they call.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from privrepro.loops import PLAIN, Loops
from privrepro.metrics import MetricLogger

__all__ = ["Workspace"]


@dataclass(frozen=True)
class Workspace:
    """Where runs read and write, and on what they compute.

    Attributes:
        data_dir: the data root of the real datasets (torchvision / UCI layouts; see
            ``docs/cl.md``); synthetic stand-ins need none.
        cache_dir: backbone features and FiLM pixel caches (``<cache_dir>/cl/...``), reused by
            every later run.
        device: ``"cpu"`` or ``"cuda"``: feature extraction, DP-SGD, evaluation.
        loops: runs the long loops (tasks, feature batches, DP-SGD steps, trials;
            :mod:`privrepro.loops`): plain iteration by default,
            :class:`privrepro.progress.ProgressLoops` for bars with an ETA.
        studies: the folder of the tuning studies' journal files (default
            ``<cache_dir>/../_studies``, beside the harness's run store).
        metrics: ``log(name, value, step)`` for per-step metrics (DP-SGD loss and ε spent as
            ``dpsgd/task<t>/…``, tuning trials as ``tuning/…``; :mod:`privrepro.metrics`), or
            ``None``.
    """

    data_dir: str | Path = "data"
    cache_dir: str | Path = "experiments/_cache"
    device: str = "cpu"
    loops: Loops = PLAIN
    studies: str | Path | None = None
    metrics: MetricLogger | None = None

    @property
    def study_dir(self) -> Path:
        """Where tuning studies are kept unless a run names an RDB storage."""
        return (
            Path(self.cache_dir).parent / "_studies" if self.studies is None else Path(self.studies)
        )
