"""The DP cosine classifier (cl Alg. 1; note §7.5, §7.10)."""

from __future__ import annotations

import numpy as np
import pytest

from privrepro.continual.blurry import make_blurry_scenario
from privrepro.continual.cosine import CosineClassifier, noise_std, normalize_rows, run_cosine
from privrepro.continual.label_spaces import LabelSpace, label_spaces_for
from privrepro.continual.scenarios import ContinualData, split_cifar100
from privrepro.continual.synthetic_features import synthetic_benchmark


@pytest.fixture(scope="module")
def small() -> ContinualData:
    # CIFAR-shaped label set (100 classes) with 30 train / 10 test samples per class, K = 32
    return synthetic_benchmark(
        "cifar", np.random.default_rng(0), dim=32, train_per_class=30, test_per_class=10
    )


def test_noise_std_check_values() -> None:
    # note §7.5 (analytic Gaussian, verified there with dp_accounting PLD)
    assert noise_std(1.0, 1e-5) == pytest.approx(3.7306, abs=1e-3)
    assert noise_std(8.0, 1e-5) == pytest.approx(0.6002, abs=1e-3)
    assert noise_std(None, 1e-5) == 0.0
    with pytest.raises(ValueError, match="epsilon"):
        noise_std(-1.0, 1e-5)


def test_summands_have_unit_norm() -> None:
    x = np.random.default_rng(0).normal(size=(50, 16)) * 7
    assert np.linalg.norm(normalize_rows(x), axis=1) == pytest.approx(np.ones(50), abs=1e-6)


def test_zero_noise_invariant_to_blur_and_order(small: ContinualData) -> None:
    """σ = 0: final sums, predictions and accuracy identical across Not/i/Si-Blurry and task
    orders (note §7.10b: the paper's 79.02 ± 0.00 in every blurry setting)."""
    d = small
    accs, preds = [], []
    for kind in ("not-blurry", "i-blurry", "si-blurry"):
        for seed in (0, 1):
            sc = make_blurry_scenario(
                kind, d.train_y, d.test_y, 100, 5, np.random.default_rng(seed)
            )
            clf = CosineClassifier(100, d.train_x.shape[1])
            for t, space in enumerate(label_spaces_for("prior_const", sc)):
                idx = sc.train_tasks[t]
                clf.update(d.train_x[idx], d.train_y[idx], space, 0.0, np.random.default_rng(0))
            preds.append(clf.predict(d.test_x))
            r = run_cosine(
                d.train_x,
                d.train_y,
                d.test_x,
                d.test_y,
                sc,
                label_spaces_for("prior_const", sc),
                0.0,
                np.random.default_rng(seed),
            )
            accs.append(r.final_accuracy)
    assert len(set(accs)) == 1  # exactly equal, not merely close
    for p in preds[1:]:
        assert np.array_equal(p, preds[0])


def test_noise_variance_prior_const_vs_prior(small: ContinualData) -> None:
    """Under S_prior^const an unseen class collects T draws (variance Tσ²), under the exact
    S_prior one (σ²) (note §7.10c). χ² check: the sample variance of n = 10·K coordinates has
    relative sd sqrt(2/n) ≈ 0.08 for K = 32; tolerance 4 sd."""
    d = small
    sigma, T = 2.0, 10
    sc = split_cifar100(d, np.random.default_rng(0))
    last = sc.task_classes[-1]  # no data before the last task
    for policy, draws in (("prior_const", T - 1), ("prior", 0)):
        clf = CosineClassifier(100, d.train_x.shape[1])
        spaces = label_spaces_for(policy, sc)
        for t in range(T - 1):
            idx = sc.train_tasks[t]
            clf.update(d.train_x[idx], d.train_y[idx], spaces[t], sigma, np.random.default_rng(t))
        assert np.all(clf.draws[last] == draws)
        if draws:
            v = clf.sums[last].ravel()
            n = v.size
            assert np.var(v) / (draws * sigma**2) == pytest.approx(1.0, abs=4 * np.sqrt(2 / n))
    # after all T tasks: the noise part of every class sum (sum minus the σ = 0 sum) has
    # per-coordinate variance σ² under S_prior and Tσ² under S_prior^const (n = 100·K = 3,200
    # coordinates: relative sd of the sample variance sqrt(2/n) = 0.025, tolerance 4 sd)
    clean = CosineClassifier(100, d.train_x.shape[1])
    for t, space in enumerate(label_spaces_for("prior", sc)):
        idx = sc.train_tasks[t]
        clean.update(d.train_x[idx], d.train_y[idx], space, 0.0, np.random.default_rng(t))
    for policy, draws in (("prior", 1), ("prior_const", T)):
        clf = CosineClassifier(100, d.train_x.shape[1])
        for t, space in enumerate(label_spaces_for(policy, sc)):
            idx = sc.train_tasks[t]
            clf.update(d.train_x[idx], d.train_y[idx], space, sigma, np.random.default_rng(t))
        assert np.all(clf.draws == draws)
        noise = (clf.sums - clean.sums).ravel()
        rel = np.var(noise) / (draws * sigma**2)
        assert rel == pytest.approx(1.0, abs=4 * np.sqrt(2 / noise.size))


def test_predictions_restricted_to_released(small: ContinualData) -> None:
    d = small
    sc = split_cifar100(d, np.random.default_rng(2))
    spaces = label_spaces_for("prior", sc)
    clf = CosineClassifier(100, d.train_x.shape[1])
    released: set[int] = set()
    for t in range(3):
        clf.update(
            d.train_x[sc.train_tasks[t]],
            d.train_y[sc.train_tasks[t]],
            spaces[t],
            1.0,
            np.random.default_rng(t),
        )
        released |= set(spaces[t].classes.tolist())
        assert set(np.unique(clf.predict(d.test_x)).tolist()) <= released
    assert clf.memory_floats == 30 * d.train_x.shape[1]  # K · |∪ O_t| (note §7.10e)


def test_labels_outside_space_raise(small: ContinualData) -> None:
    clf = CosineClassifier(100, small.train_x.shape[1])
    with pytest.raises(ValueError, match="remap or drop"):
        clf.update(
            small.train_x[:5],
            np.array([0, 1, 2, 3, 99]),
            LabelSpace(np.arange(4)),
            0.0,
            np.random.default_rng(0),
        )


def test_dummy_sampling_exact_vs_marginal(small: ContinualData) -> None:
    """The marginal law of the best dummy score matches drawing every dummy: accuracies of the
    two agree within sampling error (2,000 dummies, 1,000 test samples, 5 repeats each)."""
    d = small
    sc = split_cifar100(d, np.random.default_rng(0))
    spaces = label_spaces_for("prior_const", sc, dummy_factor=20)
    res = {}
    for mode in ("exact", "marginal"):
        res[mode] = [
            run_cosine(
                d.train_x,
                d.train_y,
                d.test_x,
                d.test_y,
                sc,
                spaces,
                0.6,
                np.random.default_rng(r),
                evaluate="final",
                dummy_sampling=mode,
            ).final_accuracy
            for r in range(5)
        ]
    # per run, accuracy of 1,000 test samples has binomial sd ≤ 0.016; the mean of 5, 0.007
    assert abs(np.mean(res["exact"]) - np.mean(res["marginal"])) < 0.035
    no_dummy = run_cosine(
        d.train_x,
        d.train_y,
        d.test_x,
        d.test_y,
        sc,
        label_spaces_for("prior_const", sc),
        0.6,
        np.random.default_rng(0),
        evaluate="final",
    ).final_accuracy
    assert np.mean(res["exact"]) < no_dummy + 0.03  # dummies never help


def test_accuracy_matrix_shape(small: ContinualData) -> None:
    d = small
    sc = split_cifar100(d, np.random.default_rng(0))
    r = run_cosine(
        d.train_x,
        d.train_y,
        d.test_x,
        d.test_y,
        sc,
        label_spaces_for("prior", sc),
        0.0,
        np.random.default_rng(0),
    )
    assert r.acc.shape == (10, 10) and not np.isnan(r.acc).any()
    # exact prior, no noise: a class never seen is never predicted → acc on future tasks is 0
    assert np.all(r.acc[np.triu_indices(10, 1)] == 0.0)
