"""Class-incremental splits (note §7.8): tasks, classes, sizes, seeded class orders."""

from __future__ import annotations

import numpy as np
import pytest

from privrepro.continual.scenarios import (
    ContinualData,
    class_incremental,
    five_datasets,
    split_cifar100,
    split_imagenet_r,
    train_test_split_indices,
)


def _data(ytr: np.ndarray, yte: np.ndarray, c: int) -> ContinualData:
    return ContinualData("labels", np.zeros((len(ytr), 1)), ytr, np.zeros((len(yte), 1)), yte, c)


def _check_partition(sc, n_train: int, n_test: int) -> None:
    for tasks, n in ((sc.train_tasks, n_train), (sc.test_tasks, n_test)):
        allidx = np.concatenate(tasks)
        assert len(allidx) == n and len(np.unique(allidx)) == n  # each index exactly once


def test_split_cifar100_tasks(cifar_labels) -> None:
    ytr, yte = cifar_labels
    sc = split_cifar100(_data(ytr, yte, 100), np.random.default_rng(0))
    assert sc.nb_tasks == 10
    _check_partition(sc, 50_000, 10_000)
    seen: set[int] = set()
    for t in range(10):
        classes = sc.data_classes(ytr, t)
        assert len(classes) == 10 and np.array_equal(classes, sc.task_classes[t])
        assert not seen & set(classes.tolist())  # classes disjoint across tasks
        seen |= set(classes.tolist())
        # CIFAR-100: 500 train / 100 test images per class → 5,000 / 1,000 per task (note §7.8)
        assert len(sc.train_tasks[t]) == 5_000 and len(sc.test_tasks[t]) == 1_000
        assert set(np.unique(yte[sc.test_tasks[t]])) == set(classes.tolist())
    assert seen == set(range(100))


def test_class_order_is_seeded(cifar_labels) -> None:
    ytr, yte = cifar_labels
    d = _data(ytr, yte, 100)
    a = split_cifar100(d, np.random.default_rng(0)).class_order
    b = split_cifar100(d, np.random.default_rng(0)).class_order
    c = split_cifar100(d, np.random.default_rng(1)).class_order
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_split_imagenet_r_imbalanced() -> None:
    rng = np.random.default_rng(5)
    y = np.repeat(np.arange(200), rng.integers(20, 300, size=200))
    tr, te = train_test_split_indices(y, 0.2, rng)
    assert len(np.intersect1d(tr, te)) == 0 and len(tr) + len(te) == len(y)
    # stratified 80/20: each class keeps round(0.2·n_c) test samples
    counts = np.bincount(y, minlength=200)
    assert np.array_equal(np.bincount(y[te], minlength=200), np.round(0.2 * counts))
    sc = split_imagenet_r(_data(y[tr], y[te], 200), rng)
    assert sc.nb_tasks == 10 and all(len(c) == 20 for c in sc.task_classes)
    _check_partition(sc, len(tr), len(te))


def test_five_datasets_orders() -> None:
    y = np.repeat(np.arange(50), 7)
    d = _data(y, y, 50)
    sc = five_datasets(d, [4, 0, 1, 2, 3])
    assert sc.nb_tasks == 5
    # task 0 is CIFAR-10, the 5th member: global labels 40..49
    assert np.array_equal(sc.task_classes[0], np.arange(40, 50))
    assert np.array_equal(sc.task_classes[1], np.arange(0, 10))
    base = five_datasets(d)
    re = base.reordered([4, 0, 1, 2, 3])
    for t in range(5):
        assert np.array_equal(re.train_tasks[t], sc.train_tasks[t])


def test_bad_increments_raise() -> None:
    y = np.arange(10)
    with pytest.raises(ValueError, match="increments"):
        class_incremental("x", y, y, 10, [3, 3, 3])
    with pytest.raises(ValueError, match="class_order"):
        class_incremental("x", y, y, 10, [5, 5], class_order=[0] * 10)
