"""privrepro.continual — the cl paper (Tobaben et al., "Differential Privacy in Continual
Learning: Which Labels to Update?") as a library.

Entry points (re-exported here; see ``docs/cl.md`` and ``docs/cl-peft.md``):

* :func:`run_cosine_benchmark` — the DP cosine classifier (Alg. 1) on a benchmark in one call:
  features, scenario, label spaces, σ, ``acc[t, i]``, AA_t / AF_t.
* :func:`run_five_datasets_orders` — the cosine classifier on 5-Datasets under every task order.
* :func:`run_peft` — one PEFT Ensemble / Naive / Non-CL run with DP-SGD and Optuna tuning,
  as tidy rows (:class:`PeftRun` and the settings groups :class:`FeatureSettings`,
  :class:`FilmSettings`, :class:`TrainSettings`, :class:`TuningSettings`).
* :func:`median_min_max`, :func:`final_metrics` — the paper's summaries over repeats.
* :class:`Workspace` — data root, caches, device and progress bars, made once, passed to runs.

Building blocks: :mod:`.benchmarks` (:func:`load_benchmark`, :class:`FeatureSpec`,
:func:`make_scenario`), :mod:`.scenarios` (class-incremental splits through continuum),
:mod:`.blurry` (i-Blurry / Si-Blurry), :mod:`.label_spaces` (S_data, S_prior, S_prior^const,
dummy labels, remapping, S_learned), :mod:`.cosine` (the classifier), :mod:`.features`
(frozen-backbone features and their cache), :mod:`.sources` (ImageNet-R, notMNIST, SVHN,
FashionMNIST images), :mod:`.synthetic_features` (stand-in features), :mod:`.metrics` (AA_t, AF_t),
:mod:`.peft` (members, data, tuning, runs), :mod:`.ensemble` (prediction rules),
:mod:`.baselines` (Naive, Non-CL).

Bad parameters raise :class:`privrepro.config.ConfigError` (key, value, allowed range) before
any compute. The exports load lazily: importing the cosine classifier does not import torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.continual.benchmarks import FeatureSpec, load_benchmark, make_scenario
    from privrepro.continual.cosine import CosineClassifier, noise_std, run_cosine
    from privrepro.continual.cosine_benchmark import (
        CosineBenchmarkRun,
        FiveDatasetsOrders,
        benchmark_scenario,
        load_features,
        run_cosine_benchmark,
        run_five_datasets_orders,
    )
    from privrepro.continual.label_spaces import label_spaces_for
    from privrepro.continual.metrics import average_accuracy, average_forgetting
    from privrepro.continual.peft import (
        FeatureSettings,
        FilmSettings,
        PeftOutput,
        PeftRun,
        TrainSettings,
        TuningSettings,
        ensemble_all_orders,
        run_peft,
    )
    from privrepro.continual.repeat_summaries import final_metrics, median_min_max
    from privrepro.continual.scenarios import ContinualData, Scenario
    from privrepro.continual.workspace import Workspace

_EXPORTS = {
    "privrepro.continual.benchmarks": ("FeatureSpec", "load_benchmark", "make_scenario"),
    "privrepro.continual.cosine": ("CosineClassifier", "noise_std", "run_cosine"),
    "privrepro.continual.cosine_benchmark": (
        "CosineBenchmarkRun",
        "FiveDatasetsOrders",
        "benchmark_scenario",
        "load_features",
        "run_cosine_benchmark",
        "run_five_datasets_orders",
    ),
    "privrepro.continual.label_spaces": ("label_spaces_for",),
    "privrepro.continual.metrics": ("average_accuracy", "average_forgetting"),
    "privrepro.continual.peft": (
        "FeatureSettings",
        "FilmSettings",
        "PeftOutput",
        "PeftRun",
        "TrainSettings",
        "TuningSettings",
        "ensemble_all_orders",
        "run_peft",
    ),
    "privrepro.continual.scenarios": ("ContinualData", "Scenario"),
    "privrepro.continual.repeat_summaries": ("final_metrics", "median_min_max"),
    "privrepro.continual.workspace": ("Workspace",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "ContinualData",
    "CosineBenchmarkRun",
    "CosineClassifier",
    "FeatureSettings",
    "FeatureSpec",
    "FilmSettings",
    "FiveDatasetsOrders",
    "PeftOutput",
    "PeftRun",
    "Scenario",
    "TrainSettings",
    "TuningSettings",
    "Workspace",
    "average_accuracy",
    "average_forgetting",
    "benchmark_scenario",
    "ensemble_all_orders",
    "final_metrics",
    "label_spaces_for",
    "load_benchmark",
    "load_features",
    "make_scenario",
    "median_min_max",
    "noise_std",
    "run_cosine",
    "run_cosine_benchmark",
    "run_five_datasets_orders",
    "run_peft",
]
