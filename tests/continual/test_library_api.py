"""The cl library's entry points: the one-call cosine run is the paper's pipeline step by step,
the helpers the figures use compute what they claim, bad parameters raise ConfigError, and the
package's exports load lazily."""

from __future__ import annotations

import subprocess
import sys

import matplotlib
import numpy as np
import pandas as pd
import pytest

from privrepro.config import ConfigError, validate
from privrepro.continual import (
    ContinualData,
    FeatureSpec,
    benchmark_scenario,
    load_benchmark,
    make_scenario,
    run_cosine_benchmark,
)
from privrepro.continual.benchmarks import FeatureSource
from privrepro.continual.blurry import blurry_split, task_composition
from privrepro.continual.cosine import noise_std, run_cosine
from privrepro.continual.label_spaces import (
    class_drop_curve,
    class_drop_summary,
    label_config,
    label_config_name,
    label_spaces_for,
)
from privrepro.continual.plots import category_markers
from privrepro.continual.scenarios import sample_task_orders
from privrepro.continual.synthetic_features import synthetic_benchmark
from privrepro.continual.workspace import Workspace
from privrepro.dp.group import largest_group_dropped

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def small() -> ContinualData:
    return synthetic_benchmark(
        "cifar", np.random.default_rng(0), dim=16, train_per_class=20, test_per_class=5
    )


@pytest.mark.parametrize(("policy", "factor"), [("prior", 1), ("prior_const", 100)])
def test_one_call_equals_the_five_steps(small: ContinualData, policy: str, factor: int) -> None:
    """The pipeline by hand — scenario, label spaces, σ, Alg. 1 — with the same streams gives
    the same accuracy matrix, bit for bit."""
    sc = make_scenario("cifar100", small, np.random.default_rng(1))
    spaces = label_spaces_for(policy, sc, factor)
    ref = run_cosine(
        small.train_x,
        small.train_y,
        small.test_x,
        small.test_y,
        sc,
        spaces,
        noise_std(1.0, 1e-5),
        np.random.default_rng(2),
    )
    run = run_cosine_benchmark(
        "cifar100",
        1.0,
        features=small,
        label_policy=policy,
        dummy_factor=factor,
        scenario_rng=np.random.default_rng(1),
        noise_rng=np.random.default_rng(2),
    )
    np.testing.assert_array_equal(run.acc, ref.acc)
    assert run.labels_released == spaces[-1].size and run.sigma == ref.sigma
    assert run.task_sizes == [len(t) for t in sc.train_tasks]


def test_one_call_loads_and_seeds(small: ContinualData) -> None:
    spec = FeatureSpec(synthetic_dim=16)
    a = run_cosine_benchmark("imagenet-r", 8.0, features=spec, seed=3, evaluate="final")
    b = run_cosine_benchmark("imagenet-r", 8.0, features=spec, seed=3, evaluate="final")
    c = run_cosine_benchmark("imagenet-r", 8.0, features=spec, seed=4, evaluate="final")
    assert a.final_accuracy == b.final_accuracy != c.final_accuracy  # seed names the streams
    assert a.features["feature_source"] == "synthetic" and a.scenario.nb_tasks == 10
    data, _ = load_benchmark("imagenet-r", spec)
    assert sum(a.task_sizes) == len(data.train_y)  # the split is a partition


def test_blurry_setting_and_bad_parameters(small: ContinualData) -> None:
    sc = benchmark_scenario("cifar100", small, np.random.default_rng(0), setting="si-blurry")
    assert sc.nb_tasks == 5 and sum(len(t) for t in sc.train_tasks) == len(small.train_y)
    for kwargs, key in (
        ({"setting": "half-blurry"}, "setting"),
        ({"label_policy": "posterior"}, "label policy"),
        ({"evaluate": "sometimes"}, "evaluate"),
        ({"delta": 1.5}, "delta"),
    ):
        with pytest.raises(ConfigError) as err:
            run_cosine_benchmark("cifar100", 1.0, features=small, **kwargs)
        assert err.value.key == key
    with pytest.raises(ConfigError, match="benchmark"):
        run_cosine_benchmark("mnist", 1.0)


def test_feature_source_declares_its_ranges() -> None:
    validate(FeatureSource(), "features")
    with pytest.raises(ConfigError, match=r"features\.batch_size = 0"):
        validate(FeatureSource(batch_size=0), "features")
    with pytest.raises(ConfigError, match=r"features\.source"):
        validate(FeatureSpec(source="imagenet-weights"), "features")


def test_workspace_keeps_studies_beside_the_store() -> None:
    assert str(Workspace(cache_dir="runs/_cache").study_dir) == "runs/_studies"
    assert str(Workspace(studies="s").study_dir) == "s"


def test_table_a3_label_configurations() -> None:
    assert label_config("prior") == ("prior", 1)
    assert label_config("const") == label_config("prior_const") == ("prior_const", 1)
    assert label_config("x1000") == ("prior_const", 1000)
    assert [label_config_name(c) for c in ("prior", "const", "x10")] == [
        "S_prior",
        "S_prior^const",
        "+10×",
    ]
    for bad in ("x", "x0", "posterior"):
        with pytest.raises(ConfigError, match="label config"):
            label_config(bad)


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-7), (1.0, 1e-5), (0.5, 1e-7), (8.0, 1e-5)])
def test_class_drop_summary_against_closed_form(eps: float, delta: float) -> None:
    """The largest class dropped w.p. ≥ 0.99 read off the curve equals the closed-form root of
    dp.group (cl Fig. 2 caption: 12 at ε = 1, δ = 1e-7), and the first k whose bound is 0 is
    the first with δ_k ≥ 1 (summed term by term)."""
    curve = class_drop_curve(eps, delta, 200)
    rows = {r["metric"]: r["value"] for r in class_drop_summary(curve, 0.99)}
    assert rows["largest_k_dropped_99"] == largest_group_dropped(eps, delta, 0.99)
    with np.errstate(over="ignore"):  # e^{iε} overflows far beyond δ_k = 1: inf sums stay ≥ 1
        partial = np.cumsum([np.exp(i * eps) * delta for i in range(200)])
    first = int(np.argmax(partial >= 1.0)) + 1 if (partial >= 1.0).any() else None
    zero = rows["smallest_k_bound_zero"]
    assert (np.isnan(zero) and first is None) or zero == first


def test_task_composition_adds_up(cifar_labels) -> None:
    y = cifar_labels[0]
    split = blurry_split("i-blurry", y, 100, 5, np.random.default_rng(0))
    rows = pd.DataFrame(task_composition(split, y))
    parts = rows[["disjoint_samples", "blurry_home_samples", "blurred_in_samples"]].sum(axis=1)
    assert (parts == rows["samples"]).all() and rows["samples"].sum() == len(y)
    assert rows["samples"].tolist() == [10_000] * 5  # note §1.4: i-Blurry-50-10, T = 5
    assert rows["disjoint_classes"].tolist() == [10] * 5
    # 2,500 pooled samples, each leaving its home with probability 4/5 (5 sd of tolerance)
    assert abs(int(rows["blurred_in_samples"].sum()) - 2_000) <= 100
    plain = pd.DataFrame(
        task_composition(blurry_split("not-blurry", y, 100, 5, np.random.default_rng(1)), y)
    )
    assert plain["blurred_in_samples"].sum() == 0 and (plain["classes"] == 20).all()


def test_sample_task_orders() -> None:
    orders = sample_task_orders(7, np.random.default_rng(0))
    assert len(orders) == 7 and orders == sorted(orders)
    assert len({tuple(o) for o in orders}) == 7 and all(
        sorted(o) == [0, 1, 2, 3, 4] for o in orders
    )
    assert len(sample_task_orders(500, np.random.default_rng(0))) == 120
    with pytest.raises(ConfigError, match="k = 0"):
        sample_task_orders(0, np.random.default_rng(0))


def test_category_markers_positions() -> None:
    """One marker per (series, category) present, at the category's position in ``order``
    (a missing one leaves its slot empty), series ``offset`` apart."""
    import matplotlib.pyplot as plt

    stats = pd.DataFrame(
        {
            "s": ["a", "a", "b"],
            "k": ["x", "z", "z"],
            "median": [1.0, 2.0, 3.0],
            "min": [0.5, 1.5, 2.5],
            "max": [1.5, 2.5, 3.5],
        }
    )
    fig, ax = plt.subplots()
    category_markers(ax, stats, "k", ["x", "y", "z"], series="s", offset=0.2)
    xs = [list(c.lines[0].get_xdata()) for c in ax.containers]
    assert xs == [pytest.approx([-0.1, 1.9]), pytest.approx([2.1])]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    plt.close(fig)


def test_exports_resolve_lazily() -> None:
    import privrepro.continual as cl

    for name in cl.__all__:
        assert getattr(cl, name) is not None, name
    code = "import sys, privrepro.continual.cosine_benchmark; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # the cosine classifier alone does not import torch
