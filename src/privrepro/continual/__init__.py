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
* :class:`Workspace` — data root, caches, device and loops, made once, passed to runs.

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
    from privrepro.continual.benchmarks import FeatureSpec as FeatureSpec
    from privrepro.continual.benchmarks import load_benchmark as load_benchmark
    from privrepro.continual.benchmarks import make_scenario as make_scenario
    from privrepro.continual.cosine import CosineClassifier as CosineClassifier
    from privrepro.continual.cosine import noise_std as noise_std
    from privrepro.continual.cosine import run_cosine as run_cosine
    from privrepro.continual.cosine_benchmark import CosineBenchmarkRun as CosineBenchmarkRun
    from privrepro.continual.cosine_benchmark import FiveDatasetsOrders as FiveDatasetsOrders
    from privrepro.continual.cosine_benchmark import benchmark_scenario as benchmark_scenario
    from privrepro.continual.cosine_benchmark import load_features as load_features
    from privrepro.continual.cosine_benchmark import run_cosine_benchmark as run_cosine_benchmark
    from privrepro.continual.cosine_benchmark import (
        run_five_datasets_orders as run_five_datasets_orders,
    )
    from privrepro.continual.label_spaces import label_spaces_for as label_spaces_for
    from privrepro.continual.metrics import average_accuracy as average_accuracy
    from privrepro.continual.metrics import average_forgetting as average_forgetting
    from privrepro.continual.peft import FeatureSettings as FeatureSettings
    from privrepro.continual.peft import FilmSettings as FilmSettings
    from privrepro.continual.peft import PeftOutput as PeftOutput
    from privrepro.continual.peft import PeftRun as PeftRun
    from privrepro.continual.peft import TrainSettings as TrainSettings
    from privrepro.continual.peft import TuningSettings as TuningSettings
    from privrepro.continual.peft import ensemble_all_orders as ensemble_all_orders
    from privrepro.continual.peft import run_peft as run_peft
    from privrepro.continual.repeat_summaries import final_metrics as final_metrics
    from privrepro.continual.repeat_summaries import median_min_max as median_min_max
    from privrepro.continual.scenarios import ContinualData as ContinualData
    from privrepro.continual.scenarios import Scenario as Scenario
    from privrepro.continual.workspace import Workspace as Workspace

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
