"""Baselines of the cl paper (App. A, Algs. A1 and A2).

* **Naive** (lower bound, Alg. A1): one model trained with DP-SGD on task 1, then further trained
  on each following task; the checkpoint after task t predicts ``argmax_k f_t(x)_k``. Which
  parameters Naive trains is not stated (assumed: the same as the ensemble's members, FiLM or
  head). Each task is its own DP-SGD run on its own data, so the stream is still (ε, δ)-DP by
  parallel composition (adaptive, but over disjoint data).
* **Non-CL** (upper bound, Alg. A2): one DP-SGD run on ``∪_t D_t`` — "while this is DP it is
  not CL"; its guarantee is that of a single run: ``train_member(..., composition="single")``
  (:func:`privrepro.continual.peft.members.train_member`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import torch
from numpy.typing import ArrayLike
from torch import nn

from privrepro.config import ConfigError
from privrepro.continual.peft.members import Member, train_member
from privrepro.loops import PLAIN, Loops
from privrepro.metrics import MetricLogger, prefixed
from privrepro.training.dpsgd import DPSGDHyper
from privrepro.training.rows import Rows

__all__ = ["iter_naive"]


def iter_naive(
    kind: str,
    tasks: Sequence[tuple[Rows, ArrayLike]],
    label_ids: ArrayLike,
    hps: Sequence[DPSGDHyper],
    *,
    generator: torch.Generator,
    backbone: nn.Module | None = None,
    physical_batch: int = 256,
    loops: Loops = PLAIN,
    log_metric: MetricLogger | None = None,
    precision: str = "fp32",
    engine: str = "auto",
) -> Iterator[Member]:
    """Naive fine-tuning (Alg. A1): yields the checkpoint after each task (one model, one label
    space ``label_ids`` for the whole stream, e.g. S_prior^const); ``log_metric`` gets each
    task's DP-SGD metrics as ``task<t>/<name>``."""
    if len(tasks) != len(hps):
        raise ConfigError("len(hps)", len(hps), f"must equal len(tasks) = {len(tasks)}")
    ids = np.unique(np.asarray(label_ids, dtype=np.int64))
    model: nn.Module | None = None
    for t, ((x, y), hp) in enumerate(zip(tasks, hps, strict=True)):
        member = train_member(
            kind,
            x,
            y,
            ids,
            hp,
            generator=generator,
            backbone=backbone,
            init=model,
            physical_batch=physical_batch,
            loops=loops,
            log_metric=prefixed(log_metric, f"task{t}/"),
            precision=precision,
            engine=engine,
        )
        model = member.model
        yield member
