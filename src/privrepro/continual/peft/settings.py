"""What a PEFT run is and the settings it runs under (cl paper, Secs. 6–7, App. F, Table A2).

:class:`PeftRun` names one run: a method (PEFT Ensemble, Naive or Non-CL; FiLM or head-only) on
one scenario of one benchmark, at one ε, for one repeat. Four groups of settings say how it runs:
:class:`FeatureSettings` (where the data come from), :class:`FilmSettings` (the FiLM model on
synthetic images), :class:`TrainSettings` (DP-SGD) and :class:`TuningSettings` (Optuna).

Every field declares its allowed range (:func:`privrepro.config.param`); :func:`check_settings`
checks them all before any compute and raises :class:`~privrepro.config.ConfigError` naming the
key, the value and the range.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from privrepro.config import ConfigError, param, validate
from privrepro.config.identity import identity
from privrepro.continual.benchmarks import BENCHMARKS
from privrepro.continual.blurry import BLURRY_KINDS
from privrepro.continual.ensemble import RULES
from privrepro.continual.label_spaces import DUMMY_REFERENCES, LABEL_POLICIES
from privrepro.training.precision import PRECISIONS

__all__ = [
    "FILM_BENCHMARKS",
    "METHODS",
    "FeatureSettings",
    "FilmSettings",
    "PeftRun",
    "TrainSettings",
    "TuningSettings",
    "check_film_source",
    "check_settings",
    "eps_label",
    "identity",
]

#: benchmarks whose real images the FiLM path reads (``FeatureSettings.source = "backbone"``).
FILM_BENCHMARKS = ("cifar100", "imagenet-r", "5-datasets")
#: ``<family>_<kind>``: PEFT Ensemble (Alg. 2), Naive (Alg. A1), Non-CL (Alg. A2); FiLM or head
METHODS = ("peft_film", "peft_head", "naive_film", "naive_head", "noncl_film", "noncl_head")


@dataclass(frozen=True)
class FeatureSettings:
    """Where the data come from, and the smoke reductions."""

    source: str = param(
        "synthetic",
        choices=["synthetic", "backbone"],
        doc="synthetic clusters/images (smoke) or the real benchmark (paper)",
    )
    synthetic_dim: int = param(64, ge=2, doc="dimension of synthetic features")
    synthetic_seed: int = param(0, ge=0, doc="seed of the fixed synthetic feature space")
    max_train_per_class: int = param(0, ge=0, doc="subsample training data per class (0: all)")
    max_test_per_class: int = param(0, ge=0, doc="subsample test data per class (0: all)")
    backbone: str = param(
        "vit_base_patch16_224.augreg_in21k",
        assumed="the paper's ViT-B/16 in21k weights via timm (not named)",
    )
    weights: str = param("", doc="local checkpoint of the backbone ('' = timm hub cache)")
    precision: str = param(
        "fp32",
        choices=list(PRECISIONS),
        doc="the backbone's arithmetic extracting head runs' features: fp32, tf32 or bf16 "
        "autocast (privrepro.training.precision); its cache files are apart",
    )

    #: fields added after units were stored, omitted from an identity at this value
    IDENTITY_DEFAULTS: ClassVar[dict[str, Any]] = {"precision": "fp32"}


@dataclass(frozen=True)
class FilmSettings:
    """The FiLM model: the real backbone (paper) or a small random ViT (synthetic)."""

    img_size: int = param(16, ge=4, doc="synthetic images and small ViT: side length")
    patch_size: int = param(4, ge=1)
    embed_dim: int = param(32, ge=4)
    depth: int = param(2, ge=1)
    num_heads: int = param(2, ge=1)
    image_noise: float = param(0.35, ge=0, doc="pixel noise of the synthetic images")
    physical_batch: int = param(256, ge=1, doc="per-sample gradients materialised at once")
    engine: str = param(
        "auto",
        choices=["auto", "privrepro", "opacus"],
        doc="per-sample clipping: the project's clipper (one backward pass, LayerNorm rule, "
        "the head's norm in closed form) or opacus' GradSampleModule; auto: the project's",
    )

    #: fields added after units were stored, omitted from an identity at this value
    IDENTITY_DEFAULTS: ClassVar[dict[str, Any]] = {"engine": "auto"}

    def check(self, prefix: str = "film") -> None:
        """The small ViT needs whole patches and whole attention heads."""
        if self.img_size % self.patch_size:
            raise ConfigError(
                f"{prefix}.patch_size",
                self.patch_size,
                f"must divide {prefix}.img_size = {self.img_size}",
            )
        if self.embed_dim % self.num_heads:
            raise ConfigError(
                f"{prefix}.num_heads",
                self.num_heads,
                f"must divide {prefix}.embed_dim = {self.embed_dim}",
            )


@dataclass(frozen=True)
class TrainSettings:
    """DP-SGD settings shared by every run (cl paper, Table A2 and Sec. 6)."""

    epochs: float = param(40.0, gt=0, doc="Table A2: 40")
    delta: float = param(1e-5, gt=0, lt=1, doc="δ of every run")
    accountant: str = param("prv", choices=["prv", "rdp"], doc="opacus accountant (paper: PRV)")
    epsilon_tolerance: float = param(0.01, gt=0, doc="σ calibration precision in ε")
    nondp_clip: bool = param(
        False,
        assumed="non-DP runs: the paper does not say whether "
        "clipping is kept; default: no clipping, no noise",
    )
    precision: str = param(
        "fp32",
        choices=list(PRECISIONS),
        doc="the model's forward and backward in DP-SGD and evaluation: fp32, tf32 or bf16 "
        "autocast; DP-SGD's norms, clipping and noise stay float32 (privrepro.training.precision)",
    )

    #: fields added after units were stored, omitted from an identity at this value
    IDENTITY_DEFAULTS: ClassVar[dict[str, Any]] = {"precision": "fp32"}


@dataclass(frozen=True)
class TuningSettings:
    """Optuna tuning (cl paper, App. F) and the fixed fallback when ``enabled`` is false."""

    enabled: bool = param(True, doc="tune with Optuna; false: use lr/batch_size/clip below")
    sampler: str = param("gp", choices=["gp", "tpe", "random"], doc="paper: GP sampler")
    n_trials: int = param(20, ge=1, doc="COMPLETE trials per (ε, δ, seed); paper: 20")
    n_startup_trials: int = param(10, ge=1, assumed="Optuna's GPSampler default")
    log_scale: bool = param(True, assumed="Table A2 does not say log or linear; log spans decades")
    storage: str = param("", doc="'' → <experiments>/_studies/<name>.log; or an RDB URL")
    lr_low: float = param(1e-7, gt=0, doc="Table A2: learning-rate lower bound")
    lr_high: float = param(1e-2, gt=0, doc="Table A2: learning-rate upper bound")
    tune_task: int = param(0, ge=0, assumed="which task is 'representative of one task'")
    tune_fraction: float = param(0.7, gt=0, le=1, doc="tuning share (CIFAR/IN-R: 70 of 70:30)")
    val_fraction: float = param(0.3, gt=0, le=1, doc="validation share (30 of 70:30)")
    lr: float = param(1e-3, gt=0, doc="fixed lr when not tuning")
    batch_size: float = param(64.0, gt=0, doc="fixed expected batch size when not tuning")
    clip: float = param(1.0, gt=0, doc="fixed clipping bound when not tuning")
    label_space: str = param(
        "const",
        choices=["const", "run"],
        assumed="App. E.1 tunes 'for each combination of privacy budget (ε, δ) and seed once': "
        "one study per (benchmark, ε, δ, repeat, seed), its trials in S_prior^const without "
        "dummy labels, shared by every label configuration; 'run': each run's own label space",
    )

    scenario: str = param(
        "split",
        choices=["split", "run"],
        assumed="App. E.1: 'For Split-CIFAR-100 and ImageNet-R we tune using a dataset that is "
        "representative of one task (10/20 classes)', 'for each combination of privacy budget "
        "(ε, δ) and seed once'. 'split' (the paper's reading): a study tunes on a task of the "
        "benchmark's class-incremental split into tune_tasks tasks whatever the run's scenario, "
        "so blurry runs (Fig. 4) share Split-CIFAR-100's studies (Figs. 3, 5); 'run': a task of "
        "the run's own scenario (Fig. 4: 45 more studies on its 5-task blurry splits: 7,000 "
        "tuning images in not-blurry and i-Blurry, Si-Blurry's varying first task)",
    )
    tune_tasks: int = param(
        0,
        ge=0,
        doc="tasks of the class-incremental split a 'split' study tunes one task of "
        "(10: the paper's 10/20 classes of CIFAR-100 / ImageNet-R); 0: the run's nb_tasks",
    )
    tune_of: str = param(
        "task",
        choices=["task", "benchmark"],
        assumed="App. F: 5-Datasets tunes on 'a subset of CIFAR-10 that is 10% the size of the "
        "final training dataset' with a validation set of '4.28% of the final training "
        "dataset': 'task' (the final training dataset of the CIFAR-10 task: 5,000 + 2,140 "
        "images), 'benchmark' (of all five members' 258,236 images: 25,824 + 11,052)",
    )

    #: fields added after units were stored, omitted from an identity at this value
    IDENTITY_DEFAULTS: ClassVar[dict[str, Any]] = {
        "label_space": "const",
        "scenario": "split",
        "tune_tasks": 0,
        "tune_of": "task",
    }

    def check(self, prefix: str = "tuning") -> None:
        """The learning-rate range must be ordered (Table A2: 1e-7 … 1e-2)."""
        if self.lr_low >= self.lr_high:
            raise ConfigError(
                f"{prefix}.lr_low",
                self.lr_low,
                f"must be < {prefix}.lr_high = {self.lr_high} (the tuned range, Table A2)",
            )


def eps_label(eps: float | None) -> str:
    """``"ε=1"``-style label of a privacy level; ``"non-DP"`` for ``None``."""
    return "non-DP" if eps is None else f"ε={eps:g}"


@dataclass(frozen=True)
class PeftRun:
    """One run: ``method`` on a scenario of ``benchmark`` at per-task ε, repeat ``repeat``.

    The repeat fixes the scenario's class order (or blurry split) and the tuning split: every run
    of one repeat and seed shares them (e.g. the label configurations of Table A3); DP noise is
    the run's own.
    """

    benchmark: str = param(choices=BENCHMARKS)
    method: str = param(choices=METHODS)
    epsilon: float | None = param(gt=0, doc="per-task ε; None: non-DP")
    repeat: int = param(0, ge=0)
    label_policy: str = param(
        "prior_const", choices=LABEL_POLICIES[:2], doc="S_prior^const (default) or S_prior"
    )
    dummy_factor: int = param(1, ge=1, doc="×f dummy labels (1: none; Sec. 7.1)")
    dummy_reference: str = param("base", choices=DUMMY_REFERENCES)
    blurry: str = param(
        "", choices=["", *BLURRY_KINDS], doc="'' = the benchmark's class-incremental split"
    )
    nb_tasks: int = param(0, ge=0, doc="0: the benchmark's own (10 / 10 / 5; blurry: 5)")
    disjoint_pct: float = param(50.0, ge=0, le=100, doc="N of a blurry split")
    blurry_pct: float = param(10.0, ge=0, le=100, doc="M of a blurry split")
    order: tuple[int, ...] = param(
        (), ge=0, le=4, min_len=0, doc="5-Datasets member order (() = canonical)"
    )
    rules: tuple[str, ...] = param(("argmax",), choices=RULES, doc="ensemble prediction rules")
    save_logits: bool = param(False, doc="return the members' test logits (all task orders)")

    @property
    def kind(self) -> str:
        """``"film"`` or ``"head"``."""
        return self.method.rsplit("_", 1)[1]

    @property
    def family(self) -> str:
        """``"peft"``, ``"naive"`` or ``"noncl"``."""
        return self.method.rsplit("_", 1)[0]

    @classmethod
    def from_unit(cls, unit: Mapping[str, Any]) -> PeftRun:
        """The run of a unit dict: its keys that name fields (lists become tuples)."""
        names = {f.name for f in fields(cls)}
        kw: dict[str, Any] = {
            k: (tuple(v) if isinstance(v, list) else v) for k, v in unit.items() if k in names
        }
        return cls(**kw)

    def check(self, prefix: str = "run") -> None:
        """Cross-field checks: a 5-Datasets order is a permutation of its five members."""
        if self.order and sorted(self.order) != list(range(5)):
            raise ConfigError(f"{prefix}.order", list(self.order), "must be a permutation of 0..4")
        if not self.rules:
            raise ConfigError(f"{prefix}.rules", [], f"must name at least one of {list(RULES)}")


def check_settings(run: PeftRun, **groups: Any) -> None:
    """Check ``run`` and every settings group (``features=``, ``film=``, ...) against their
    declared ranges; raises :class:`~privrepro.config.ConfigError` for the first bad value."""
    validate(run, "run")
    for name, settings in groups.items():
        validate(settings, name)


def check_film_source(
    features: FeatureSettings, benchmarks: Sequence[str], methods: Sequence[str]
) -> None:
    """Refuse, before any compute, FiLM on real images of a benchmark without an image source.

    CIFAR-100, ImageNet-R and 5-Datasets all have one (:func:`~.data.load_film_images`)."""
    if features.source != "backbone" or not any(m.endswith("_film") for m in methods):
        return
    for b in benchmarks:
        if b not in FILM_BENCHMARKS:
            raise ConfigError(
                "params.benchmarks",
                b,
                f"FiLM on real images needs one of {list(FILM_BENCHMARKS)}; use a *_head "
                "method or features.source=synthetic",
            )
