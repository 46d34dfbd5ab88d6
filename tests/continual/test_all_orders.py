"""5-Datasets all-orders evaluation (cl Table A7) against running Alg. 1 order by order."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from privrepro.continual.cosine import CosineClassifier, run_cosine
from privrepro.continual.cosine_benchmark import all_orders_accuracy
from privrepro.continual.label_spaces import label_spaces_for, prior_const_label_spaces
from privrepro.continual.scenarios import five_datasets
from privrepro.continual.synthetic_features import synthetic_benchmark


def test_all_orders_match_sequential_runs_without_noise() -> None:
    d = synthetic_benchmark(
        "5-datasets", np.random.default_rng(0), dim=16, train_per_class=20, test_per_class=10
    )
    base = five_datasets(d)
    orders = list(itertools.permutations(range(5)))[::17]  # 8 of the 120 orders
    accs = all_orders_accuracy(
        d.train_x,
        d.train_y,
        d.test_x,
        d.test_y,
        list(base.train_tasks),
        list(base.test_tasks),
        50,
        0.0,
        np.random.default_rng(0),
        orders,
    )
    for order in orders:
        sc = five_datasets(d, order)
        ref = run_cosine(
            d.train_x,
            d.train_y,
            d.test_x,
            d.test_y,
            sc,
            label_spaces_for("prior_const", sc),
            0.0,
            np.random.default_rng(0),
        )
        # same sums up to float summation order: identical accuracy matrices (σ = 0)
        assert np.allclose(accs[order], ref.acc, atol=1e-12)


def test_noise_variance_grows_with_position() -> None:
    """Alg. 1 under S_prior^const adds one N(0, σ²I) draw to every class sum at every task, so
    after t tasks a class sum carries t draws: per-coordinate variance tσ² (cl Sec. 6, Alg. 1,
    line 4). 200 classes × 50 dims = 10,000 coordinates: the sample variance's relative standard
    error is sqrt(2/10,000) = 1.4 %, so 7 % is 5 standard errors."""
    num_classes, dim, sigma = 200, 50, 2.0
    clf = CosineClassifier(num_classes, dim)
    space = prior_const_label_spaces(num_classes, 1)[0]
    rng = np.random.default_rng(0)
    no_x, no_y = np.zeros((0, dim)), np.zeros(0, dtype=np.int64)
    variances = []
    for t in range(1, 6):
        clf.update(no_x, no_y, space, sigma, rng)
        variances.append(float(clf.sums.var()))
        assert variances[-1] == pytest.approx(t * sigma**2, rel=0.07)
        assert clf.draws.tolist() == [t] * num_classes
    assert all(b > a for a, b in itertools.pairwise(variances))


def test_noisy_orders_match_sequential_runs() -> None:
    """With noise, the all-orders evaluation is Alg. 1 run task by task on the same noise
    sequence (one draw per class per task, accumulated): identical accuracy matrices, and the
    noisy accuracy after the last task is below the noiseless one for a large σ."""
    d = synthetic_benchmark(
        "5-datasets", np.random.default_rng(1), dim=16, train_per_class=20, test_per_class=10
    )
    base = five_datasets(d)
    args = (
        d.train_x,
        d.train_y,
        d.test_x,
        d.test_y,
        list(base.train_tasks),
        list(base.test_tasks),
        50,
    )
    order = (2, 0, 4, 1, 3)
    noisy = all_orders_accuracy(*args, 30.0, np.random.default_rng(7), [order])[order]
    sc = five_datasets(d, order)
    ref = run_cosine(
        d.train_x,
        d.train_y,
        d.test_x,
        d.test_y,
        sc,
        label_spaces_for("prior_const", sc),
        30.0,
        np.random.default_rng(7),
    )
    np.testing.assert_allclose(noisy, ref.acc, atol=1e-12)
    clean = all_orders_accuracy(*args, 0.0, np.random.default_rng(7), [order])[order]
    assert noisy[-1].mean() < clean[-1].mean()
