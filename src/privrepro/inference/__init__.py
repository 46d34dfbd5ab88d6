"""privrepro.inference: the ip paper (Tian & Tandon, *Inference Privacy: Properties and Mechanisms*).

Usable from plain Python (no Hydra, no run store); ``docs/ip.md`` shows a session. The entry points:

* guarantees and their rules (Props. 2–4): :class:`IPGuarantee`, :func:`basic_composition`,
  :func:`parallel_composition`, :func:`chaining`;
* calibration (Defs. 3–5): :func:`calibrate` (σ at {(ε, δ), α} for a sensitivity, with the
  exact δ it achieves), :func:`gauss_output_sigma`, :func:`gauss_input_sigma`,
  :func:`lap_output_scale`;
* the mechanisms as seeded samplers: :func:`gauss_output`, :func:`gauss_input`, :func:`lap_output`;
* data, networks and base models: :func:`load_image_data`, :class:`ArchSpec`,
  :class:`BaseModelSpec`, :func:`get_base_model` (trained once or loaded from a checkpoint, then
  cached), :func:`lipschitz_bound` (μ_C of an SLL network);
* accuracy over an (α, ε) grid as tidy rows: :func:`gauss_output_sweep`,
  :func:`gauss_input_sweep`, the paper's series :func:`sll_series`, :func:`resnet_series` and
  :func:`tuned_sweep` over :func:`tuned_family` ("ResNet Tune"), all under one
  :class:`Evaluation` (δ, mode, draws, device).

Bad parameters raise :class:`privrepro.config.ConfigError` (key, value, allowed range).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.inference.accountant import IPGuarantee as IPGuarantee
    from privrepro.inference.accountant import basic_composition as basic_composition
    from privrepro.inference.accountant import chaining as chaining
    from privrepro.inference.accountant import chaining_steps as chaining_steps
    from privrepro.inference.accountant import parallel_composition as parallel_composition
    from privrepro.inference.basemodels import BaseModel as BaseModel
    from privrepro.inference.basemodels import BaseModelSpec as BaseModelSpec
    from privrepro.inference.basemodels import get_base_model as get_base_model
    from privrepro.inference.calibration import MODES as MODES
    from privrepro.inference.calibration import Calibration as Calibration
    from privrepro.inference.calibration import calibrate as calibrate
    from privrepro.inference.calibration import gauss_input_sigma as gauss_input_sigma
    from privrepro.inference.calibration import gauss_output_sigma as gauss_output_sigma
    from privrepro.inference.calibration import lap_output_scale as lap_output_scale
    from privrepro.inference.calibration import lipschitz_for_mode as lipschitz_for_mode
    from privrepro.inference.data import ImageData as ImageData
    from privrepro.inference.data import load_image_data as load_image_data
    from privrepro.inference.evaluate import Evaluation as Evaluation
    from privrepro.inference.evaluate import gauss_input_accuracy as gauss_input_accuracy
    from privrepro.inference.evaluate import gauss_output_accuracy as gauss_output_accuracy
    from privrepro.inference.mechanisms import gauss_input as gauss_input
    from privrepro.inference.mechanisms import gauss_output as gauss_output
    from privrepro.inference.mechanisms import lap_output as lap_output
    from privrepro.inference.networks import ArchSpec as ArchSpec
    from privrepro.inference.networks import NormalizedNet as NormalizedNet
    from privrepro.inference.networks import build_network as build_network
    from privrepro.inference.networks import lipschitz_bound as lipschitz_bound
    from privrepro.inference.noisy_finetuning import TunedModel as TunedModel
    from privrepro.inference.noisy_finetuning import TuneGrid as TuneGrid
    from privrepro.inference.noisy_finetuning import fine_tune_noisy as fine_tune_noisy
    from privrepro.inference.noisy_finetuning import noise_space_of as noise_space_of
    from privrepro.inference.noisy_finetuning import select_tuned as select_tuned
    from privrepro.inference.noisy_finetuning import tuned_family as tuned_family
    from privrepro.inference.sweep import SERIES as SERIES
    from privrepro.inference.sweep import SERIES_LABEL as SERIES_LABEL
    from privrepro.inference.sweep import Point as Point
    from privrepro.inference.sweep import accuracy_rows as accuracy_rows
    from privrepro.inference.sweep import calibrate_points as calibrate_points
    from privrepro.inference.sweep import gauss_input_sweep as gauss_input_sweep
    from privrepro.inference.sweep import gauss_output_sweep as gauss_output_sweep
    from privrepro.inference.sweep import resnet_series as resnet_series
    from privrepro.inference.sweep import sll_series as sll_series
    from privrepro.inference.sweep import tuned_sweep as tuned_sweep
    from privrepro.training.classifier import TrainConfig as TrainConfig

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
