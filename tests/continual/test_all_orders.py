"""5-Datasets all-orders evaluation (cl Table A7) against running Alg. 1 order by order."""

from __future__ import annotations

import itertools

import numpy as np

from privrepro.continual.cosine import run_cosine
from privrepro.continual.cosine_benchmark import all_orders_accuracy
from privrepro.continual.label_spaces import label_spaces_for
from privrepro.continual.scenarios import five_datasets
from privrepro.continual.synthetic import synthetic_benchmark


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
    """With noise, the state after t tasks carries t draws (S_prior^const): accuracy after the
    last task is below the noiseless one for a large σ, whatever the order."""
    d = synthetic_benchmark(
        "5-datasets", np.random.default_rng(1), dim=16, train_per_class=20, test_per_class=10
    )
    base = five_datasets(d)
    order = [(0, 1, 2, 3, 4)]
    args = (
        d.train_x,
        d.train_y,
        d.test_x,
        d.test_y,
        list(base.train_tasks),
        list(base.test_tasks),
        50,
    )
    clean = all_orders_accuracy(*args, 0.0, np.random.default_rng(0), order)[order[0]]
    noisy = all_orders_accuracy(*args, 30.0, np.random.default_rng(0), order)[order[0]]
    assert noisy[-1].mean() < clean[-1].mean()
