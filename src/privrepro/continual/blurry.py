"""Blurry task splits: i-Blurry (Koh et al., ICLR 2022) and Si-Blurry (Moon et al., ICCV 2023).

Written from the definitions in those papers (cl paper, Sec. 7.2 and Fig. 4 use them on
Split-CIFAR-100) (more in ``docs/modules.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privrepro.config import ConfigError
from privrepro.continual.scenarios import Scenario, class_incremental, from_task_ids

__all__ = [
    "BLURRY_KINDS",
    "BLURRY_NAMES",
    "BlurrySplit",
    "blurry_scenario",
    "blurry_split",
    "make_blurry_scenario",
    "task_composition",
]

IntArray = NDArray[np.int64]

BLURRY_KINDS = ("not-blurry", "i-blurry", "si-blurry")
#: the settings' names in the cl paper (Fig. 4, Table A4)
BLURRY_NAMES = {"not-blurry": "Not Blurry", "i-blurry": "i-Blurry", "si-blurry": "Si-Blurry"}


@dataclass(frozen=True)
class BlurrySplit:
    """The result of a blurry split.

    Attributes:
        task_of: task id of every training sample (a partition of the training set).
        disjoint_classes: per task, the disjoint classes it holds.
        blurry_classes: per task, the blurry classes whose home it is.
        blurred: boolean mask of the training samples moved out of their home pool.
    """

    kind: str
    task_of: IntArray
    disjoint_classes: tuple[IntArray, ...]
    blurry_classes: tuple[IntArray, ...]
    blurred: NDArray[np.bool_]

    @property
    def nb_tasks(self) -> int:
        return len(self.disjoint_classes)

    def home_classes(self, t: int) -> IntArray:
        return np.sort(np.concatenate([self.disjoint_classes[t], self.blurry_classes[t]]))

    def task_sizes(self) -> IntArray:
        return np.bincount(self.task_of, minlength=self.nb_tasks).astype(np.int64)


def _check(num_classes: int, nb_tasks: int, disjoint_pct: float, blurry_pct: float) -> None:
    if nb_tasks < 1:
        raise ConfigError("nb_tasks", nb_tasks, "must be >= 1")
    if not 0 <= disjoint_pct <= 100:
        raise ConfigError("disjoint_pct (N)", disjoint_pct, "must lie in [0, 100]")
    if not 0 <= blurry_pct <= 100:
        raise ConfigError("blurry_pct (M)", blurry_pct, "must lie in [0, 100]")
    if num_classes < nb_tasks:
        raise ConfigError("num_classes", num_classes, f"must be >= nb_tasks = {nb_tasks}")


def _random_sizes(total: int, parts: int, rng: np.random.Generator, min_size: int) -> IntArray:
    """``parts`` sizes ≥ ``min_size`` summing to ``total``, from parts−1 uniform cut points."""
    free = total - parts * min_size
    if free < 0:
        raise ValueError(f"cannot cut {total} items into {parts} parts of at least {min_size}")
    cuts = np.sort(rng.integers(0, free + 1, size=parts - 1))
    return (np.diff(np.concatenate([[0], cuts, [free]])) + min_size).astype(np.int64)


def _task_sizes(total: int, parts: int, rng: np.random.Generator, stochastic: bool) -> IntArray:
    """``total`` items cut into ``parts`` task shares: at T−1 uniform random cut points
    (Si-Blurry) or as evenly as possible (i-Blurry, larger shares first)."""
    if stochastic:
        return _random_sizes(total, parts, rng, 0)
    return np.array([len(a) for a in np.array_split(np.arange(total), parts)])


def _deal(pool: IntArray, sizes: IntArray) -> list[IntArray]:
    bounds = np.cumsum(np.concatenate([[0], sizes]))
    return [pool[bounds[t] : bounds[t + 1]] for t in range(len(sizes))]


def _split(
    kind: str,
    train_y: ArrayLike,
    num_classes: int,
    nb_tasks: int,
    disjoint_pct: float,
    blurry_pct: float,
    rng: np.random.Generator,
) -> BlurrySplit:
    _check(num_classes, nb_tasks, disjoint_pct, blurry_pct)
    y = np.asarray(train_y, dtype=np.int64)
    perm = rng.permutation(num_classes).astype(np.int64)
    n_disjoint = int(num_classes * disjoint_pct // 100)
    n_blurry = num_classes - n_disjoint
    stochastic = kind == "si-blurry"
    # Si-Blurry: class counts per task from T−1 random cut points (a task may get none of one
    # kind, but every task gets at least one class overall: the rare split that leaves a task
    # without classes is re-drawn).
    d_sizes = _task_sizes(n_disjoint, nb_tasks, rng, stochastic)
    b_sizes = _task_sizes(n_blurry, nb_tasks, rng, stochastic)
    while stochastic and ((d_sizes + b_sizes) == 0).any():
        d_sizes = _task_sizes(n_disjoint, nb_tasks, rng, stochastic)
        b_sizes = _task_sizes(n_blurry, nb_tasks, rng, stochastic)
    disjoint = _deal(perm[:n_disjoint], d_sizes)
    blurry = _deal(perm[n_disjoint:], b_sizes)

    task_of = np.full(len(y), -1, dtype=np.int64)
    blurred = np.zeros(len(y), dtype=bool)
    pool: list[IntArray] = []
    for t in range(nb_tasks):
        task_of[np.isin(y, disjoint[t])] = t
        home_idx = rng.permutation(np.flatnonzero(np.isin(y, blurry[t])))
        n_out = round(len(home_idx) * blurry_pct / 100)
        task_of[home_idx[n_out:]] = t
        pool.append(home_idx[:n_out])
    pooled = rng.permutation(np.concatenate(pool)) if pool else np.zeros(0, np.int64)
    blurred[pooled] = True
    sizes = _task_sizes(len(pooled), nb_tasks, rng, stochastic)
    for t, chunk in enumerate(_deal(pooled.astype(np.int64), sizes)):
        task_of[chunk] = t
    unassigned = np.flatnonzero(task_of < 0)
    if len(unassigned):  # only labels outside [0, num_classes) can get here
        raise ValueError(f"train_y: {len(unassigned)} labels outside [0, {num_classes})")
    return BlurrySplit(
        kind,
        task_of,
        tuple(np.sort(d) for d in disjoint),
        tuple(np.sort(b) for b in blurry),
        blurred,
    )


def blurry_split(
    kind: str,
    train_y: ArrayLike,
    num_classes: int,
    nb_tasks: int,
    rng: np.random.Generator,
    disjoint_pct: float = 50,
    blurry_pct: float = 10,
) -> BlurrySplit:
    """The split of Fig. 4's settings by name: ``i-blurry`` (i-Blurry-N-M, Koh et al. 2022: N %
    disjoint classes, M % of blurry samples spread), ``si-blurry`` (Si-Blurry-N-M, Moon et al.
    2023: i-Blurry with random class counts and pooled shares), with N = ``disjoint_pct`` and
    M = ``blurry_pct``; ``not-blurry``: only disjoint classes, split evenly (N = 100, M = 0)."""
    if kind not in BLURRY_KINDS:
        raise ConfigError("kind", kind, f"must be one of {list(BLURRY_KINDS)}")
    if kind == "not-blurry":
        disjoint_pct, blurry_pct = 100, 0
    return _split(kind, train_y, num_classes, nb_tasks, disjoint_pct, blurry_pct, rng)


def task_composition(split: BlurrySplit, train_y: ArrayLike) -> list[dict[str, Any]]:
    """What each task of a split holds (cl Fig. 4, left), one row per task (1-based ``task``).

    Samples: ``samples`` in all, ``disjoint_samples`` of disjoint classes,
    ``blurry_home_samples`` of blurry classes whose home is the task, ``blurred_in_samples``
    dealt in from other tasks' blurry classes; classes: ``classes`` present,
    ``disjoint_classes`` held, ``blurry_home_classes`` at home.
    """
    y = np.asarray(train_y, dtype=np.int64)
    classes = np.concatenate([*split.disjoint_classes, *split.blurry_classes, y])
    home = np.full(int(classes.max(initial=-1)) + 1, -1)
    for t in range(split.nb_tasks):
        home[split.home_classes(t)] = t
    disjoint = np.isin(y, np.concatenate(split.disjoint_classes))
    rows = []
    for t in range(split.nb_tasks):
        in_t = split.task_of == t
        at_home = in_t & (home[y] == t)
        rows.append(
            {
                "task": t + 1,
                "samples": int(in_t.sum()),
                "disjoint_samples": int((in_t & disjoint).sum()),
                "blurry_home_samples": int((at_home & ~disjoint).sum()),
                "blurred_in_samples": int((in_t & (home[y] != t)).sum()),
                "classes": len(np.unique(y[in_t])),
                "disjoint_classes": len(split.disjoint_classes[t]),
                "blurry_home_classes": len(split.blurry_classes[t]),
            }
        )
    return rows


def blurry_scenario(
    split: BlurrySplit, train_y: ArrayLike, test_y: ArrayLike, num_classes: int
) -> Scenario:
    """The :class:`Scenario` of a blurry split; test task t = test samples of t's home classes."""
    return from_task_ids(
        split.kind,
        split.task_of,
        train_y,
        test_y,
        num_classes,
        [split.home_classes(t) for t in range(split.nb_tasks)],
    )


def make_blurry_scenario(
    kind: str,
    train_y: ArrayLike,
    test_y: ArrayLike,
    num_classes: int,
    nb_tasks: int,
    rng: np.random.Generator,
    disjoint_pct: float = 50,
    blurry_pct: float = 10,
) -> Scenario:
    """Fig. 4's three settings by name: ``not-blurry`` (class-incremental with a permuted class
    order), ``i-blurry`` or ``si-blurry`` (N = ``disjoint_pct``, M = ``blurry_pct``)."""
    if kind == "not-blurry":
        order = rng.permutation(num_classes).astype(np.int64)
        inc = [len(a) for a in np.array_split(np.arange(num_classes), nb_tasks)]
        return class_incremental("not-blurry", train_y, test_y, num_classes, inc, order)
    split = blurry_split(kind, train_y, num_classes, nb_tasks, rng, disjoint_pct, blurry_pct)
    return blurry_scenario(split, train_y, test_y, num_classes)
