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
    from privrepro.inference.accountant import (
        IPGuarantee,
        basic_composition,
        chaining,
        chaining_steps,
        parallel_composition,
    )
    from privrepro.inference.basemodels import BaseModel, BaseModelSpec, get_base_model
    from privrepro.inference.calibration import (
        MODES,
        Calibration,
        calibrate,
        gauss_input_sigma,
        gauss_output_sigma,
        lap_output_scale,
        lipschitz_for_mode,
    )
    from privrepro.inference.data import ImageData, load_image_data
    from privrepro.inference.evaluate import Evaluation, gauss_input_accuracy, gauss_output_accuracy
    from privrepro.inference.mechanisms import gauss_input, gauss_output, lap_output
    from privrepro.inference.networks import ArchSpec, NormalizedNet, build_network, lipschitz_bound
    from privrepro.inference.noisy_finetuning import (
        TunedModel,
        TuneGrid,
        fine_tune_noisy,
        noise_space_of,
        select_tuned,
        tuned_family,
    )
    from privrepro.inference.sweep import (
        SERIES,
        SERIES_LABEL,
        Point,
        accuracy_rows,
        calibrate_points,
        gauss_input_sweep,
        gauss_output_sweep,
        resnet_series,
        sll_series,
        tuned_sweep,
    )
    from privrepro.training.classifier import TrainConfig

_EXPORTS = {
    "privrepro.inference.accountant": (
        "IPGuarantee",
        "basic_composition",
        "chaining",
        "chaining_steps",
        "parallel_composition",
    ),
    "privrepro.inference.basemodels": ("BaseModel", "BaseModelSpec", "get_base_model"),
    "privrepro.inference.calibration": (
        "MODES",
        "Calibration",
        "calibrate",
        "gauss_input_sigma",
        "gauss_output_sigma",
        "lap_output_scale",
        "lipschitz_for_mode",
    ),
    "privrepro.inference.data": ("ImageData", "load_image_data"),
    "privrepro.inference.evaluate": ("Evaluation", "gauss_input_accuracy", "gauss_output_accuracy"),
    "privrepro.inference.mechanisms": ("gauss_input", "gauss_output", "lap_output"),
    "privrepro.inference.networks": (
        "ArchSpec",
        "NormalizedNet",
        "build_network",
        "lipschitz_bound",
    ),
    "privrepro.inference.noisy_finetuning": (
        "TunedModel",
        "TuneGrid",
        "fine_tune_noisy",
        "noise_space_of",
        "select_tuned",
        "tuned_family",
    ),
    "privrepro.inference.sweep": (
        "SERIES",
        "SERIES_LABEL",
        "Point",
        "accuracy_rows",
        "calibrate_points",
        "gauss_input_sweep",
        "gauss_output_sweep",
        "resnet_series",
        "sll_series",
        "tuned_sweep",
    ),
    "privrepro.training.classifier": ("TrainConfig",),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "MODES",
    "SERIES",
    "SERIES_LABEL",
    "ArchSpec",
    "BaseModel",
    "BaseModelSpec",
    "Calibration",
    "Evaluation",
    "IPGuarantee",
    "ImageData",
    "NormalizedNet",
    "Point",
    "TrainConfig",
    "TuneGrid",
    "TunedModel",
    "accuracy_rows",
    "basic_composition",
    "build_network",
    "calibrate",
    "calibrate_points",
    "chaining",
    "chaining_steps",
    "fine_tune_noisy",
    "gauss_input",
    "gauss_input_accuracy",
    "gauss_input_sigma",
    "gauss_input_sweep",
    "gauss_output",
    "gauss_output_accuracy",
    "gauss_output_sigma",
    "gauss_output_sweep",
    "get_base_model",
    "lap_output",
    "lap_output_scale",
    "lipschitz_bound",
    "lipschitz_for_mode",
    "load_image_data",
    "noise_space_of",
    "parallel_composition",
    "resnet_series",
    "select_tuned",
    "sll_series",
    "tuned_family",
    "tuned_sweep",
]
