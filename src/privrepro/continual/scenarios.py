"""Class-incremental scenarios as partitions of a dataset into tasks, built with continuum.

cl paper (Tobaben et al.), Sec. 7 and App. F: Split-CIFAR-100 (10 tasks × 10 classes),
Split-ImageNet-R (10 × 20), 5-Datasets (MNIST, SVHN, notMNIST, FashionMNIST, CIFAR-10; one task
each). "All experiments are in the class-incremental learning setting where no task labels are
available"; the class order of Split-CIFAR-100 is permuted per seed.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privrepro.config import ConfigError
from privrepro.seeding import python_random_kept

__all__ = [
    "FIVE_DATASETS",
    "ContinualData",
    "Scenario",
    "class_incremental",
    "five_datasets",
    "five_datasets_order",
    "from_task_ids",
    "permuted_class_order",
    "sample_task_orders",
    "split_cifar100",
    "split_imagenet_r",
    "train_test_split_indices",
]

IntArray = NDArray[np.int64]

#: 5-Datasets members in the order of the cl paper, App. F.5; each contributes 10 classes, the
#: global label of class c of member m is 10·m + c.
FIVE_DATASETS: tuple[str, ...] = ("mnist", "svhn", "notmnist", "fashionmnist", "cifar10")


@dataclass(frozen=True)
class ContinualData:
    """Train and test arrays of one benchmark with global integer labels 0..num_classes−1.

    ``train_x``/``test_x`` are whatever the consumer needs: images (uint8 arrays or file paths)
    for feature extraction, or cached features ``(n, K)`` for the cosine classifier.
    """

    name: str
    train_x: np.ndarray
    train_y: IntArray
    test_x: np.ndarray
    test_y: IntArray
    num_classes: int

    def __post_init__(self) -> None:
        for split in ("train", "test"):
            x, y = getattr(self, f"{split}_x"), getattr(self, f"{split}_y")
            if len(x) != len(y):
                raise ValueError(f"{self.name}: {split}_x has {len(x)} rows, {split}_y {len(y)}")
            if len(y) and (y.min() < 0 or y.max() >= self.num_classes):
                raise ValueError(f"{self.name}: {split}_y outside [0, {self.num_classes})")


@dataclass(frozen=True)
class Scenario:
    """A continual scenario: train and test index sets per task, and each task's classes.

    Attributes:
        name: e.g. ``"split-cifar100"``, ``"i-blurry-50-10"``.
        num_classes: size of the base label set (100 for CIFAR-100, 50 for 5-Datasets).
        train_tasks: per task, indices into the train arrays; disjoint, their union is every
            training sample (a partition, so parallel composition applies: cl paper, Thm. D.1).
        test_tasks: per task, indices into the test arrays (test samples of the task's classes).
        task_classes: per task, the classes it introduces (its home classes), the public schedule
            that the exact prior label set S_prior of cl Sec. 7.1 uses; disjoint across tasks.
        class_order: the class permutation the scenario was built from.
    """

    name: str
    num_classes: int
    train_tasks: tuple[IntArray, ...]
    test_tasks: tuple[IntArray, ...]
    task_classes: tuple[IntArray, ...]
    class_order: IntArray

    @property
    def nb_tasks(self) -> int:
        return len(self.train_tasks)

    def data_classes(self, train_y: ArrayLike, t: int) -> IntArray:
        """O_t^data = {y : (x, y) ∈ D_t}: the labels present in task t's training data."""
        y = np.asarray(train_y)
        return np.unique(y[self.train_tasks[t]]).astype(np.int64)

    def test_task_of(self, n_test: int) -> IntArray:
        """The task id of every test sample (−1 for a test sample of no task)."""
        out = np.full(n_test, -1, dtype=np.int64)
        for t, idx in enumerate(self.test_tasks):
            out[idx] = t
        return out

    def reordered(self, order: Sequence[int]) -> Scenario:
        """The same tasks in another order (``order[j]`` is the old index of new task j)."""
        order = [int(o) for o in order]
        if sorted(order) != list(range(self.nb_tasks)):
            raise ConfigError("order", order, f"must be a permutation of range({self.nb_tasks})")
        classes = [self.task_classes[o] for o in order]
        return Scenario(
            self.name,
            self.num_classes,
            tuple(self.train_tasks[o] for o in order),
            tuple(self.test_tasks[o] for o in order),
            tuple(classes),
            np.concatenate(classes).astype(np.int64) if classes else self.class_order,
        )


def permuted_class_order(num_classes: int, rng: np.random.Generator | None) -> IntArray:
    """The class order of one seed: a uniform permutation, or the identity when ``rng`` is None."""
    if rng is None:
        return np.arange(num_classes, dtype=np.int64)
    return rng.permutation(num_classes).astype(np.int64)


def _import_continuum() -> None:
    """Import continuum with Python's global random state given back (continuum imports
    scikit-learn, which imports rich, which draws from it)."""
    with python_random_kept():
        import continuum.datasets  # noqa: F401


def _continuum_tasks(y: np.ndarray, class_order: IntArray, increments: list[int]) -> IntArray:
    """Task id of every sample from continuum's ClassIncremental on the index vector.

    Classes of the order that have no sample here (a test set without some class, a task whose
    classes are all absent) are skipped for continuum, which requires every ordered class to
    be present; their tasks are simply empty.
    """
    _import_continuum()
    from continuum.datasets import InMemoryDataset
    from continuum.scenarios import ClassIncremental
    from continuum.tasks import TaskType

    yy = np.asarray(y, dtype=np.int64)
    bounds = np.cumsum([0, *increments])
    block_of = np.empty(len(class_order), dtype=np.int64)  # task of each class
    for t in range(len(increments)):
        block_of[class_order[bounds[t] : bounds[t + 1]]] = t
    task_of = np.full(len(yy), -1, dtype=np.int64)
    present = np.isin(class_order, yy)
    # continuum needs every class of its order present in the data: give it the present ones
    order_p = class_order[present]
    tasks_p = np.unique(block_of[order_p])
    incs_p = [int((block_of[order_p] == t).sum()) for t in tasks_p]
    if len(order_p) == 0:
        return task_of
    # continuum relabels classes to their rank in the order, so pass ranks as labels
    rank = np.full(len(class_order), -1, dtype=np.int64)
    rank[order_p] = np.arange(len(order_p))
    idx = np.arange(len(yy), dtype=np.int64)
    ds = InMemoryDataset(idx, rank[yy], data_type=TaskType.TENSOR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc = ClassIncremental(ds, increment=incs_p, class_order=list(range(len(order_p))))
    for j in range(len(sc)):
        x_t, _, _ = sc[j].get_raw_samples()
        task_of[np.asarray(x_t, dtype=np.int64)] = tasks_p[j]
    return task_of


def class_incremental(
    name: str,
    train_y: ArrayLike,
    test_y: ArrayLike,
    num_classes: int,
    increments: Sequence[int],
    class_order: ArrayLike | None = None,
) -> Scenario:
    """Class-incremental split: task t holds the next ``increments[t]`` classes of ``class_order``.

    Raises:
        ConfigError: if the increments do not add up to the number of classes, or the class order
            is not a permutation of ``range(num_classes)``.
    """
    ytr = np.asarray(train_y, dtype=np.int64)
    yte = np.asarray(test_y, dtype=np.int64)
    order = (
        np.arange(num_classes, dtype=np.int64)
        if class_order is None
        else np.asarray(class_order, dtype=np.int64)
    )
    if sorted(order.tolist()) != list(range(num_classes)):
        raise ConfigError(
            "class_order", order.tolist(), f"must be a permutation of range({num_classes})"
        )
    incs = [int(i) for i in increments]
    if any(i < 1 for i in incs) or sum(incs) != num_classes:
        raise ConfigError(
            "increments", incs, f"must be >= 1 and sum to num_classes = {num_classes}"
        )
    bounds = np.cumsum([0, *incs])
    task_classes = tuple(np.sort(order[bounds[t] : bounds[t + 1]]) for t in range(len(incs)))
    if len(ytr) and (ytr.min() < 0 or ytr.max() >= num_classes):
        raise ValueError(f"train_y: labels outside [0, {num_classes})")
    tr_task = _continuum_tasks(ytr, order, incs)
    te_task = _continuum_tasks(yte, order, incs)
    return Scenario(
        name,
        num_classes,
        tuple(np.flatnonzero(tr_task == t).astype(np.int64) for t in range(len(incs))),
        tuple(np.flatnonzero(te_task == t).astype(np.int64) for t in range(len(incs))),
        task_classes,
        order,
    )


def from_task_ids(
    name: str,
    train_task_of: ArrayLike,
    train_y: ArrayLike,
    test_y: ArrayLike,
    num_classes: int,
    task_classes: Sequence[ArrayLike],
) -> Scenario:
    """A scenario given the task of every training sample (blurry splits), via continuum's
    ContinualScenario; test task i = test samples of ``task_classes[i]`` (the home classes)."""
    _import_continuum()
    from continuum.datasets import InMemoryDataset
    from continuum.scenarios import ContinualScenario
    from continuum.tasks import TaskType

    task_of = np.asarray(train_task_of, dtype=np.int64)
    ytr = np.asarray(train_y, dtype=np.int64)
    idx = np.arange(len(ytr), dtype=np.int64)
    sc = ContinualScenario(InMemoryDataset(idx, ytr, task_of, data_type=TaskType.TENSOR))
    train_tasks = tuple(
        np.sort(np.asarray(sc[t].get_raw_samples()[0], dtype=np.int64)) for t in range(len(sc))
    )
    home = np.full(num_classes, -1, dtype=np.int64)
    classes = tuple(np.sort(np.asarray(c, dtype=np.int64)) for c in task_classes)
    for t, c in enumerate(classes):
        home[c] = t
    yte = np.asarray(test_y, dtype=np.int64)
    test_home = home[yte]
    test_tasks = tuple(np.flatnonzero(test_home == t).astype(np.int64) for t in range(len(classes)))
    return Scenario(
        name,
        num_classes,
        train_tasks,
        test_tasks,
        classes,
        np.concatenate(classes).astype(np.int64),
    )


def _even_split(
    name: str, data: ContinualData, rng: np.random.Generator | None, nb_tasks: int
) -> Scenario:
    if data.num_classes % nb_tasks:
        raise ConfigError("nb_tasks", nb_tasks, f"must divide num_classes = {data.num_classes}")
    inc = [data.num_classes // nb_tasks] * nb_tasks
    order = permuted_class_order(data.num_classes, rng)
    return class_incremental(name, data.train_y, data.test_y, data.num_classes, inc, order)


def split_cifar100(
    data: ContinualData, rng: np.random.Generator | None, nb_tasks: int = 10
) -> Scenario:
    """Split-CIFAR-100: ``nb_tasks`` tasks of 100/nb_tasks classes, class order permuted by ``rng``
    (cl paper, Sec. 7: 10 tasks × 10 classes, "randomly permuted" per seed)."""
    return _even_split("split-cifar100", data, rng, nb_tasks)


def split_imagenet_r(
    data: ContinualData, rng: np.random.Generator | None, nb_tasks: int = 10
) -> Scenario:
    """Split-ImageNet-R: 10 tasks × 20 of its 200 classes, class order permuted by ``rng``
    (cl paper, Sec. 7; the 80/20 train/test split is :func:`train_test_split_indices`)."""
    return _even_split("split-imagenet-r", data, rng, nb_tasks)


def five_datasets_order(order: Sequence[int] | None, classes_per_dataset: int = 10) -> IntArray:
    """The class order that puts 5-Datasets member ``order[j]`` in task j."""
    members = list(range(len(FIVE_DATASETS))) if order is None else [int(o) for o in order]
    if sorted(members) != list(range(len(FIVE_DATASETS))):
        raise ConfigError("order", members, "must be a permutation of range(5)")
    return np.concatenate(
        [np.arange(m * classes_per_dataset, (m + 1) * classes_per_dataset) for m in members]
    ).astype(np.int64)


def sample_task_orders(k: int, rng: np.random.Generator, nb_tasks: int = 5) -> list[list[int]]:
    """``k`` distinct orders of ``nb_tasks`` tasks drawn uniformly without replacement, listed in
    lexicographic order; all ``nb_tasks!`` orders when ``k`` is at least that many (e.g. the
    5-Datasets orders an order-dependent method is trained on, cl App. F.5)."""
    perms = [list(p) for p in itertools.permutations(range(nb_tasks))]
    if k >= len(perms):
        return perms
    if k < 1:
        raise ConfigError("k", k, f"must lie in [1, {len(perms)}]")
    return [perms[i] for i in sorted(rng.choice(len(perms), size=k, replace=False))]


def five_datasets(data: ContinualData, order: Sequence[int] | None = None) -> Scenario:
    """5-Datasets: one task per member dataset (10 classes each), members in ``order``
    (cl paper, App. F.5: "all permutations of the tasks")."""
    k = data.num_classes // len(FIVE_DATASETS)
    if k * len(FIVE_DATASETS) != data.num_classes:
        raise ConfigError("num_classes", data.num_classes, "must be 5 × classes per member")
    return class_incremental(
        "5-datasets",
        data.train_y,
        data.test_y,
        data.num_classes,
        [k] * len(FIVE_DATASETS),
        five_datasets_order(order, k),
    )


def train_test_split_indices(
    y: ArrayLike, test_fraction: float, rng: np.random.Generator
) -> tuple[IntArray, IntArray]:
    """A random split of ``range(len(y))`` into train and test (ImageNet-R's "random 80/20"),
    stratified per class so every class keeps ≈``test_fraction`` of its samples for testing."""
    if not 0.0 < test_fraction < 1.0:
        raise ConfigError("test_fraction", test_fraction, "must lie in (0, 1)")
    yy = np.asarray(y, dtype=np.int64)
    train, test = [], []
    for c in np.unique(yy):
        idx = rng.permutation(np.flatnonzero(yy == c))
        n_test = round(test_fraction * len(idx))
        test.append(idx[:n_test])
        train.append(idx[n_test:])
    return (
        np.sort(np.concatenate(train)).astype(np.int64),
        np.sort(np.concatenate(test)).astype(np.int64),
    )
