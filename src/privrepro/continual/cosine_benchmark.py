"""The DP cosine classifier on a cl benchmark in one call (cl paper, Alg. 1; Secs. 7.1–7.3).

More in ``docs/modules.md``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from privrepro.config import ConfigError
from privrepro.continual.benchmarks import FeatureSpec, load_benchmark, make_scenario
from privrepro.continual.blurry import BLURRY_KINDS, make_blurry_scenario
from privrepro.continual.cosine import CosineClassifier, CosineResult, noise_std, run_cosine
from privrepro.continual.label_spaces import label_spaces_for, prior_const_label_spaces
from privrepro.continual.metrics import (
    accuracy_matrix_rows,
    average_accuracy,
    average_forgetting,
)
from privrepro.continual.scenarios import FIVE_DATASETS, ContinualData, Scenario, five_datasets
from privrepro.continual.workspace import Workspace
from privrepro.seeding import numpy_stream

__all__ = [
    "SETTINGS",
    "CosineBenchmarkRun",
    "FiveDatasetsOrders",
    "all_orders_accuracy",
    "benchmark_scenario",
    "load_features",
    "run_cosine_benchmark",
    "run_five_datasets_orders",
]

#: the scenarios of a run: the benchmark's class-incremental split, or a blurry split (Sec. 7.2)
SETTINGS = ("split", *BLURRY_KINDS)


def benchmark_scenario(
    benchmark: str,
    data: ContinualData,
    rng: np.random.Generator | None,
    *,
    setting: str = "split",
    nb_tasks: int = 5,
    disjoint_pct: float = 50.0,
    blurry_pct: float = 10.0,
    order: Sequence[int] | None = None,
) -> Scenario:
    """The scenario of one run.

    ``setting="split"``: the benchmark's class-incremental split (Split-CIFAR-100 10 × 10,
    Split-ImageNet-R 10 × 20, class order drawn from ``rng``; 5-Datasets one task per member, in
    ``order``). ``"not-blurry"``, ``"i-blurry"``, ``"si-blurry"``: ``nb_tasks`` tasks with
    N = ``disjoint_pct`` and M = ``blurry_pct`` (:func:`~.blurry.make_blurry_scenario`).
    """
    if setting == "split":
        return make_scenario(benchmark, data, rng, order)
    if setting not in BLURRY_KINDS:
        raise ConfigError("setting", setting, f"must be one of {list(SETTINGS)}")
    if rng is None:
        raise ConfigError("rng", rng, "a blurry split needs a numpy Generator")
    return make_blurry_scenario(
        setting,
        data.train_y,
        data.test_y,
        data.num_classes,
        nb_tasks,
        rng,
        disjoint_pct,
        blurry_pct,
    )


@dataclass(frozen=True)
class CosineBenchmarkRun(CosineResult):
    """One cosine run: ``acc[t, i]`` and the final accuracy (:class:`~.cosine.CosineResult`),
    with what it ran on.

    Attributes:
        benchmark, epsilon, delta: the benchmark and the per-task (ε, δ) (``epsilon=None``:
            non-DP, σ = 0).
        scenario: the tasks (train / test index sets per task).
        features: the provenance of the features (source, backbone, weights, cache files).
    """

    benchmark: str
    epsilon: float | None
    delta: float
    scenario: Scenario
    features: dict[str, Any]

    @property
    def average_accuracy(self) -> NDArray[np.float64]:
        """AA_t for t = 1..T (cl App. E); with ``evaluate="final"`` only AA_T is defined."""
        return average_accuracy(self.acc)

    @property
    def final_aa(self) -> float:
        """AA_T, the final average accuracy (a fraction)."""
        return float(self.average_accuracy[-1])

    def average_forgetting(self, since: str = "paper") -> NDArray[np.float64]:
        """AF_t for t = 1..T (cl App. E; ``since`` see :func:`~.metrics.forgetting`)."""
        return average_forgetting(self.acc, since)

    @property
    def task_sizes(self) -> list[int]:
        """Training samples per task."""
        return [len(t) for t in self.scenario.train_tasks]

    def matrix_rows(self, since: str = "paper", scale: float = 1.0) -> list[dict[str, Any]]:
        """One row per (task t, evaluated task i): ``acc``, ``aa``, ``af`` (× ``scale``)."""
        return accuracy_matrix_rows(self.acc, since, scale)


def load_features(
    benchmark: str, features: FeatureSpec | None = None, workspace: Workspace | None = None
) -> tuple[ContinualData, dict[str, Any]]:
    """The benchmark's features (:func:`~.benchmarks.load_benchmark`) in a workspace: to load
    them once and pass them to several :func:`run_cosine_benchmark` calls."""
    ws = workspace or Workspace()
    spec = features or FeatureSpec()
    return load_benchmark(benchmark, spec, ws.data_dir, ws.cache_dir, ws.device, ws.loops)


def _stream(rng: np.random.Generator | None, seed: int, benchmark: str, name: str) -> Any:
    return rng if rng is not None else numpy_stream(seed, "cl-cosine", benchmark, name)


def run_cosine_benchmark(
    benchmark: str,
    epsilon: float | None,
    delta: float = 1e-5,
    *,
    features: FeatureSpec | ContinualData | None = None,
    scenario: Scenario | None = None,
    setting: str = "split",
    nb_tasks: int = 5,
    disjoint_pct: float = 50.0,
    blurry_pct: float = 10.0,
    order: Sequence[int] | None = None,
    label_policy: str = "prior_const",
    dummy_factor: int = 1,
    dummy_reference: str = "base",
    evaluate: str = "every_task",
    dummy_sampling: str = "exact",
    seed: int = 0,
    scenario_rng: np.random.Generator | None = None,
    noise_rng: np.random.Generator | None = None,
    workspace: Workspace | None = None,
) -> CosineBenchmarkRun:
    """The DP cosine classifier (Alg. 1) on ``benchmark`` at the per-task (ε, δ), in one call.

    Args:
        benchmark: ``"cifar100"``, ``"imagenet-r"`` or ``"5-datasets"``.
        epsilon, delta: the per-task budget; tasks are disjoint, so the whole stream is
            (ε, δ)-DP by parallel composition (cl Thm. D.1). ``epsilon=None``: non-DP.
        features, scenario: a :class:`~.benchmarks.FeatureSpec` (default: synthetic stand-ins)
            or features already loaded; a scenario already built, else
            :func:`benchmark_scenario` of the remaining arguments.
        label_policy, dummy_factor, dummy_reference: the released label spaces
            (:func:`~.label_spaces.label_spaces_for`; Sec. 7.1).
        evaluate, dummy_sampling: see :func:`~.cosine.run_cosine`.
        seed: names the class-order and noise streams unless ``scenario_rng`` / ``noise_rng``
            are given.
        workspace: data, feature cache, device and loops (:class:`~.workspace.Workspace`).
    """
    sigma = noise_std(epsilon, delta)  # checks ε and δ before anything is loaded
    if isinstance(features, ContinualData):
        data, meta = features, {"feature_source": "given", "name": features.name}
    else:
        data, meta = load_features(benchmark, features, workspace)
    if scenario is None:
        scenario = benchmark_scenario(
            benchmark,
            data,
            _stream(scenario_rng, seed, benchmark, "scenario"),
            setting=setting,
            nb_tasks=nb_tasks,
            disjoint_pct=disjoint_pct,
            blurry_pct=blurry_pct,
            order=order,
        )
    spaces = label_spaces_for(label_policy, scenario, dummy_factor, dummy_reference)
    res = run_cosine(
        data.train_x,
        data.train_y,
        data.test_x,
        data.test_y,
        scenario,
        spaces,
        sigma,
        _stream(noise_rng, seed, benchmark, "noise"),
        evaluate=evaluate,
        dummy_sampling=dummy_sampling,
    )
    return CosineBenchmarkRun(
        res.acc,
        res.final_accuracy,
        res.sigma,
        res.labels_released,
        benchmark,
        epsilon,
        delta,
        scenario,
        meta,
    )


def all_orders_accuracy(
    x: np.ndarray,
    y: np.ndarray,
    xte: np.ndarray,
    yte: np.ndarray,
    member_train: list[np.ndarray],
    member_test: list[np.ndarray],
    num_classes: int,
    sigma: float,
    rng: np.random.Generator,
    orders: list[tuple[int, ...]],
) -> dict[tuple[int, ...], np.ndarray]:
    """acc[t, i] (i indexing tasks in each order) for every order, from one noise sequence.

    For the cosine classifier a "model" is the sequence of noise draws z_1..z_T (one per task
    position, Alg. 1). Under S_prior^const the state after t tasks of order π is
    Σ_{j≤t} D_{π_j} + Σ_{j≤t} z_j: it depends only on the *set* of members seen and on t, so
    every order is evaluated from the 2^T − 1 distinct states (31 for 5-Datasets instead of 120
    runs), exactly: each order sees the same law of noise as an independent run, and the
    orders of one model share noise, as the paper's permutations of one trained model do.
    """
    T = len(member_train)
    dim = x.shape[1]
    z = sigma * rng.standard_normal((T, num_classes, dim)) if sigma > 0 else None
    space = prior_const_label_spaces(num_classes, 1)[0]
    member_sums = []
    for m in range(T):  # data part of each member's contribution (σ = 0)
        c = CosineClassifier(num_classes, dim)
        c.update(x[member_train[m]], y[member_train[m]], space, 0.0, rng)
        member_sums.append(c.sums)
    member_acc: dict[frozenset[int], np.ndarray] = {}
    for t in range(1, T + 1):
        noise_t = z[:t].sum(axis=0) if z is not None else np.zeros((num_classes, dim))
        for subset in itertools.combinations(range(T), t):
            clf = CosineClassifier(num_classes, dim)
            clf.sums = np.sum([member_sums[m] for m in subset], axis=0) + noise_t
            clf.released[:] = True
            correct = clf.predict(xte) == yte
            member_acc[frozenset(subset)] = np.array(
                [correct[member_test[m]].mean() for m in range(T)]
            )
    out = {}
    for order in orders:
        acc = np.empty((T, T))
        for t in range(T):
            per_member = member_acc[frozenset(order[: t + 1])]
            acc[t] = per_member[list(order)]
        out[order] = acc
    return out


@dataclass(frozen=True)
class FiveDatasetsOrders:
    """The cosine classifier on 5-Datasets under many task orders (one noise sequence).

    Attributes:
        acc: ``acc[order][t, i]``, tasks indexed in each order's own sequence.
        sigma: the per-task noise std; features: the features' provenance.
    """

    acc: dict[tuple[int, ...], np.ndarray]
    sigma: float
    features: dict[str, Any]

    def rows(self, since: str = "paper", scale: float = 1.0) -> list[dict[str, Any]]:
        """One row per (order, task t): ``order_index``, ``order`` (member names), ``task``,
        ``aa`` and ``af`` after task t (× ``scale``)."""
        rows = []
        for k, (order, acc) in enumerate(self.acc.items()):
            aa = average_accuracy(acc)
            af = average_forgetting(acc, since)
            name = "-".join(FIVE_DATASETS[m] for m in order)
            for t in range(acc.shape[0]):
                rows.append(
                    {
                        "order_index": k,
                        "order": name,
                        "task": t + 1,
                        "aa": scale * aa[t],
                        "af": scale * af[t],
                    }
                )
        return rows


def run_five_datasets_orders(
    epsilon: float | None,
    delta: float = 1e-5,
    *,
    features: FeatureSpec | None = None,
    max_orders: int = 120,
    seed: int = 0,
    noise_rng: np.random.Generator | None = None,
    workspace: Workspace | None = None,
) -> FiveDatasetsOrders:
    """The first ``max_orders`` of the 5! task orders of 5-Datasets, evaluated from one noise
    sequence at the per-task (ε, δ) under S_prior^const (cl Table A7; :func:`all_orders_accuracy`).
    """
    if not 1 <= max_orders <= 120:
        raise ConfigError("max_orders", max_orders, "must lie in [1, 120]")
    sigma = noise_std(epsilon, delta)
    data, meta = load_features("5-datasets", features, workspace)
    sc = five_datasets(data)  # members in the canonical order: task m = member m
    orders = list(itertools.permutations(range(len(FIVE_DATASETS))))[:max_orders]
    accs = all_orders_accuracy(
        data.train_x,
        data.train_y,
        data.test_x,
        data.test_y,
        list(sc.train_tasks),
        list(sc.test_tasks),
        data.num_classes,
        sigma,
        _stream(noise_rng, seed, "5-datasets", "noise"),
        orders,
    )
    return FiveDatasetsOrders(accs, sigma, meta)
