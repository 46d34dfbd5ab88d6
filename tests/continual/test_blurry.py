"""Blurry splits (note §1.4 and §7.9): partition and split statistics."""

from __future__ import annotations

import numpy as np

from privrepro.continual.blurry import blurry_scenario, blurry_split, make_blurry_scenario


def _homes(split, c: int) -> np.ndarray:
    home = np.full(c, -1)
    for t in range(split.nb_tasks):
        home[split.home_classes(t)] = t
    return home


def test_i_blurry_cifar_t5(cifar_labels) -> None:
    ytr, _yte = cifar_labels
    sp = blurry_split(
        "i-blurry", ytr, 100, 5, np.random.default_rng(0), disjoint_pct=50, blurry_pct=10
    )
    # partition: every training sample in exactly one task
    assert (sp.task_of >= 0).all() and len(sp.task_of) == 50_000
    # note §1.4: tasks of exactly 10,000 samples; 10 disjoint + 10 home-blurry classes per task
    assert sp.task_sizes().tolist() == [10_000] * 5
    assert all(len(d) == 10 for d in sp.disjoint_classes)
    assert all(len(b) == 10 for b in sp.blurry_classes)
    disjoint = np.concatenate(sp.disjoint_classes)
    for c in disjoint:  # a disjoint class lies in exactly one task
        assert len(np.unique(sp.task_of[ytr == c])) == 1
    home = _homes(sp, 100)
    blurry_mask = ~np.isin(ytr, disjoint)
    outside = int((sp.task_of[blurry_mask] != home[ytr[blurry_mask]]).sum())
    # 2,500 pooled samples (10 % of 25,000) dealt evenly to 5 tasks: a pooled sample leaves its
    # home task with probability 4/5 → 2,000 expected; the count is hypergeometric-like with
    # sd ≤ sqrt(2500·0.8·0.2) = 20, tolerance 5 sd.
    assert abs(outside - 2_000) <= 100
    assert sp.blurred.sum() == 2_500
    # with the pooled samples, a task holds ≈ 60 distinct classes (note: 60)
    n_classes = [len(np.unique(ytr[sp.task_of == t])) for t in range(5)]
    assert all(55 <= n <= 60 for n in n_classes)


def test_i_blurry_cifar_t10(cifar_labels) -> None:
    ytr, _ = cifar_labels
    sp = blurry_split("i-blurry", ytr, 100, 10, np.random.default_rng(1))
    assert sp.task_sizes().tolist() == [5_000] * 10  # note §7.9: 5,000 per task, 5 + 5 classes
    assert all(
        len(d) == 5 and len(b) == 5
        for d, b in zip(sp.disjoint_classes, sp.blurry_classes, strict=False)
    )


def test_si_blurry(cifar_labels) -> None:
    ytr, yte = cifar_labels
    sp = blurry_split("si-blurry", ytr, 100, 5, np.random.default_rng(2))
    assert (sp.task_of >= 0).all()
    sizes = sp.task_sizes()
    assert sizes.sum() == 50_000 and len(set(sizes.tolist())) > 1  # imbalanced (note §7.9)
    assert sum(len(d) for d in sp.disjoint_classes) == 50
    assert sum(len(b) for b in sp.blurry_classes) == 50
    sc = blurry_scenario(sp, ytr, yte, 100)
    assert sorted(np.concatenate(sc.train_tasks).tolist()) == list(range(50_000))
    assert sorted(np.concatenate(sc.test_tasks).tolist()) == list(range(10_000))


def test_not_blurry(cifar_labels) -> None:
    ytr, yte = cifar_labels
    sp = blurry_split("not-blurry", ytr, 100, 5, np.random.default_rng(3))
    for c in range(100):  # every class in exactly one task
        assert len(np.unique(sp.task_of[ytr == c])) == 1
    sc = make_blurry_scenario("not-blurry", ytr, yte, 100, 5, np.random.default_rng(3))
    assert [len(t) for t in sc.train_tasks] == [10_000] * 5
