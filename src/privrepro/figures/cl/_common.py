"""What the cl recipes share: the cosine figures' units, inputs and privacy levels, the
PEFT figures' unit settings and run, summary rows, and the paper's plotting rule (median over
repeats with min/max error bars)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from privrepro.config.identity import identity
from privrepro.continual import peft
from privrepro.continual.benchmarks import BENCHMARK_CLASSES, FeatureSpec, features_cache_key
from privrepro.continual.peft import shared_work
from privrepro.continual.peft.settings import PeftRun
from privrepro.continual.plots import final_accuracy_markers
from privrepro.continual.provenance import benchmark_source
from privrepro.continual.repeat_summaries import final_metrics, median_min_max
from privrepro.continual.workspace import Workspace
from privrepro.data.provenance import DataSource
from privrepro.figures.api import (
    Figure,
    MemoryEstimate,
    P,
    UnitContext,
    grid_units,
    param,
)
from privrepro.figures.cost_model import CostModel, CostPart
from privrepro.plotting.names import display
from privrepro.plotting.style import new_figure

__all__ = [
    "NON_DP",
    "CosineFigure",
    "EnsembleParams",
    "PeftParams",
    "checked",
    "cosine_inputs",
    "cosine_units",
    "feature_columns",
    "mean_std_rows",
    "peft_data_source",
    "peft_device_memory",
    "peft_head_labels",
    "peft_settings",
    "peft_units",
    "plot_final",
    "privacy_columns",
    "privacy_label",
    "privacy_levels",
    "privacy_order",
    "privacy_tick",
    "run_peft_unit",
    "summarize_final",
    "workspace_of",
]

NON_DP = "non-DP"


# --------------------------------------------------------------------------- cosine figures


def workspace_of(ctx: UnitContext) -> Workspace:
    """The library's :class:`~privrepro.continual.Workspace` of a unit: data root, cache,
    device, loops and per-step metrics of its context."""
    return Workspace(ctx.data_dir, ctx.cache_dir, ctx.device, ctx.loops, metrics=ctx.metrics)


def cosine_units(params: Any, fixed: tuple[str, ...], **axes: Any) -> list[dict[str, Any]]:
    """:func:`~privrepro.figures.api.grid_units` of a cosine figure: the ``fixed`` parameters
    and the ``features`` group in every unit."""
    common = {k: getattr(params, k) for k in fixed}
    return grid_units({**common, "features": identity(params.features)}, **axes)


class CosineFigure(Figure[P], CostModel):
    """A figure of cosine-classifier runs (units built by :func:`cosine_units`): each unit reads
    the features of its benchmark, the unit's ``dataset`` or else the figure's ``benchmark``."""

    benchmark: ClassVar[str | None] = None

    def data_source(self, unit: Mapping[str, Any], data_dir: Path) -> DataSource:
        name = unit.get("dataset", self.benchmark)
        f = unit["features"]
        verified = bool(f.get("verify_checksums", True))
        return benchmark_source(str(name), str(f["source"]), data_dir, verified=verified)

    def shared_cache_key(self, unit: Mapping[str, Any]) -> Any:
        """The backbone features of the unit's benchmark (``<cache_dir>/cl/features/``, one file
        per backbone, dataset and split): every cosine unit and figure with the same benchmark
        and feature source reads the same files, and so do the PEFT head runs
        (:func:`~privrepro.continual.benchmarks.features_cache_key`)."""
        return features_cache_key(str(unit.get("dataset", self.benchmark)), unit["features"])

    def cost_parts(self, unit: Mapping[str, Any]) -> dict[str, CostPart]:
        """The feature extraction, once per benchmark over every figure; the cosine
        classifier's training per unit."""
        return {
            "features": CostPart("features", self.shared_cache_key(unit)),
            "training": CostPart("cosine classifier"),
            "evaluation": CostPart("cosine classifier"),
        }

    def cost_class(self, unit: Mapping[str, Any]) -> Any:
        """The benchmark: its images (CIFAR-100's 60,000 32×32 arrays, ImageNet-R's 30,000
        JPEGs, the 5-Datasets) cost differently to extract."""
        return str(unit.get("dataset", self.benchmark))


def cosine_inputs(unit: dict[str, Any], ctx: UnitContext) -> dict[str, Any]:
    """The keyword arguments of :func:`~privrepro.continual.run_cosine_benchmark` that come from
    a unit's ``features`` and its context."""
    return {"features": FeatureSpec(**unit["features"]), "workspace": workspace_of(ctx)}


def feature_columns(meta: dict[str, Any]) -> dict[str, Any]:
    """The provenance columns of a row: feature source and backbone."""
    return {"feature_source": meta["feature_source"], "backbone": meta["backbone"]}


def privacy_levels(epsilons: list[float], non_dp: bool) -> list[float | None]:
    """The ε grid, with ``None`` for the non-private run when ``non_dp``."""
    levels: list[float | None] = [float(e) for e in epsilons]
    return [*levels, None] if non_dp else levels


def privacy_order(epsilons: list[float], non_dp: bool) -> list[str]:
    """The privacy labels of the ε grid, in plotting order."""
    return [privacy_label(e) for e in privacy_levels(epsilons, non_dp)]


def privacy_tick(label: str) -> str:
    """A privacy label as an axis tick: ``"ε=1"`` or ``"non-DP"``."""
    return label if label == NON_DP else f"ε={label}"


def privacy_label(epsilon: float | None) -> str:
    """``"non-DP"`` or ``"ε=1"``-style text without the Greek letter (``"1"``, ``"8"``)."""
    if epsilon is None or (isinstance(epsilon, float) and math.isnan(epsilon)):
        return NON_DP
    return f"{epsilon:g}"


def privacy_columns(epsilon: float | None) -> dict[str, Any]:
    """A cosine row's privacy level: its label (``"1"``, ``"non-DP"``) and ε (NaN if non-DP)."""
    return {"privacy": privacy_label(epsilon), "epsilon": np.nan if epsilon is None else epsilon}


def mean_std_rows(
    table: pd.DataFrame, by: list[str], *values: str, prefix: str = ""
) -> list[dict[str, Any]]:
    """Summary rows ``<prefix><value>_mean`` and ``_std`` over repeats, per group of ``by``."""
    rows = []
    for value in values:
        for _, r in median_min_max(table, by, value).iterrows():
            base = {k: r[k] for k in by}
            rows.append({"metric": f"{prefix}{value}_mean", **base, "value": r["mean"]})
            rows.append({"metric": f"{prefix}{value}_std", **base, "value": r["std"]})
    return rows


# --------------------------------------------------------------------------- PEFT figures


@dataclass
class PeftParams:
    """The four settings groups of every PEFT figure's parameters (cl paper, Sec. 6, App. F)."""

    features: peft.FeatureSettings = param(peft.FeatureSettings())
    film: peft.FilmSettings = param(peft.FilmSettings())
    train: peft.TrainSettings = param(peft.TrainSettings())
    tuning: peft.TuningSettings = param(peft.TuningSettings())


@dataclass
class EnsembleParams(PeftParams):
    """The PEFT figures that run one ensemble method over repeats of a split benchmark."""

    method: str = param("peft_film", choices=["peft_film", "peft_head"])
    repeats: int = param(5, ge=1)
    nb_tasks: int = param(10, ge=1)


def peft_settings(p: PeftParams) -> dict[str, Any]:
    """The four settings groups every PEFT run unit carries, as plain dicts (hashable config;
    a field added later is left out at its default: :func:`~privrepro.continual.peft.identity`)."""
    return {
        "features": peft.identity(p.features),
        "film": peft.identity(p.film),
        "train": peft.identity(p.train),
        "tuning": peft.identity(p.tuning),
    }


def peft_units(p: PeftParams, fixed: dict[str, Any], **axes: Any) -> list[dict[str, Any]]:
    """:func:`~privrepro.figures.api.grid_units` of a PEFT figure, with the ``fixed`` entries and
    the settings groups in every unit (FiLM on real images checked first: :func:`checked`)."""
    return checked(p, grid_units({**fixed, **peft_settings(p)}, **axes))


def checked(p: PeftParams, units: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``units``, once every benchmark of a FiLM unit is known to have real images (before any
    compute: :func:`~privrepro.continual.peft.check_film_source`), each PEFT Ensemble unit
    marked ``members: "keyed"``: its members draw their DP-SGD noise from the stream of their
    member key and are shared with every unit and figure that trains the same members
    (:mod:`privrepro.continual.peft.shared_members`), not from the unit's own stream — what the
    unit computes, hence part of its identity. Naive and Non-CL units keep their own stream."""
    peft.check_film_source(
        p.features, [u["benchmark"] for u in units], [u["method"] for u in units]
    )
    for u in units:
        if str(u["method"]).startswith("peft_"):
            u["members"] = "keyed"
    return units


def peft_data_source(unit: Mapping[str, Any], data_dir: Path) -> DataSource:
    """The data a PEFT unit runs on: features for ``*_head`` methods, images for ``*_film``."""
    return benchmark_source(
        str(unit["benchmark"]),
        str(unit["features"]["source"]),
        data_dir,
        images=str(unit["method"]).endswith("_film"),
        verified=bool(unit["features"].get("verify_checksums", True)),
    )


#: rows of each benchmark's features (train + test) and of its largest task's training data:
#: CIFAR-100 50,000 + 10,000 in ten tasks; ImageNet-R 30,000 images, 80 % training, in ten tasks;
#: 5-Datasets CIFAR-10 60,000, MNIST 70,000, SVHN 99,289, notMNIST (small) 18,724,
#: Fashion-MNIST 70,000, its largest task SVHN's 73,257 training images
_FEATURE_ROWS = {"cifar100": 60_000, "imagenet-r": 30_000, "5-datasets": 318_013}
_TASK_ROWS = {"cifar100": 5_000, "imagenet-r": 2_400, "5-datasets": 73_257}
_TRAIN_ROWS = {"cifar100": 50_000, "imagenet-r": 24_000, "5-datasets": 258_000}


def peft_head_labels(unit: Mapping[str, Any]) -> int:
    """The most outputs a member (or the Naive / Non-CL model) of ``unit`` has: the base label
    set under S_prior^const (an upper bound under S_prior and blurry splits), grown by the dummy
    factor (cl paper Sec. 7.1; reference ``base``: f · C, ``task``: f · the task's classes)."""
    run = PeftRun.from_unit(unit)
    c = BENCHMARK_CLASSES[run.benchmark]
    if run.dummy_factor <= 1:
        return c
    if run.dummy_reference == "base" or run.blurry:
        return run.dummy_factor * c
    per_task = 10 if run.benchmark == "5-datasets" else -(-c // (run.nb_tasks or 10))
    return max(c, run.dummy_factor * per_task)


def peft_device_memory(unit: Mapping[str, Any], budget: int | None = None) -> MemoryEstimate:
    """Peak device memory of a PEFT unit's DP-SGD step (:mod:`privrepro.training.memory`):
    FiLM through ViT-B/16 (``features.source = backbone``) or the small ViT of ``film``, with
    ``film.physical_batch``, ``film.engine`` and ``train.precision``; a head unit on cached
    features. With ``budget`` and a peak above it, ``detail`` names the one-setting changes
    that fit (clipping method, precision, chunk size)."""
    from privrepro.training.memory import (
        VIT_B16,
        ViTShape,
        film_step_memory,
        head_step_memory,
        settings_that_fit,
    )

    run = PeftRun.from_unit(unit)
    labels = peft_head_labels(unit)
    film = peft.FilmSettings(**unit["film"])
    precision = str(unit["train"].get("precision", "fp32"))
    what = f"{run.benchmark} {run.method}, {labels:,} labels"
    if run.kind == "head":
        rows = _TASK_ROWS[run.benchmark] if run.family != "noncl" else _TRAIN_ROWS[run.benchmark]
        dim = (
            768
            if str(unit["features"].get("source")) == "backbone"
            else int(unit["features"].get("synthetic_dim", 64))
        )
        step = head_step_memory(dim, labels, _FEATURE_ROWS[run.benchmark], rows)
        return MemoryEstimate(step.bytes, "params.method", run.method, f"{what}: {step.largest}")
    if str(unit["features"].get("source")) == "backbone":
        shape = VIT_B16
    else:
        shape = ViTShape(film.img_size, film.patch_size, film.embed_dim, film.depth, film.num_heads)
    engine = "opacus" if film.engine == "opacus" else "privrepro"
    step = film_step_memory(shape, labels, film.physical_batch, precision, engine)
    gib = step.terms[step.largest] / 2**30
    detail = (
        f"{what}, {engine} clipping, chunk {film.physical_batch}, {precision}; "
        f"{step.largest} {gib:.1f} GiB"
    )
    key: str = "params.film.physical_batch"
    value: object = film.physical_batch
    if engine == "opacus" and step.largest == "per-sample gradients":
        key, value = "params.film.engine", film.engine
    if budget is not None and step.bytes > budget:
        group = {"engine": "film", "physical_batch": "film", "precision": "train"}
        fits = settings_that_fit(shape, labels, film.physical_batch, precision, engine, budget)
        detail += "; would fit with " + (
            " or ".join(f"params.{group[k]}.{k}={v}" for k, v in fits) if fits else "no setting"
        )
    return MemoryEstimate(step.bytes, key, value, detail)


class PeftFigure(Figure[P], CostModel):
    """A figure of PEFT-ensemble runs (units built by :func:`peft_units`): each unit reads its
    benchmark's features or, for FiLM, its images (:func:`peft_data_source`)."""

    def data_source(self, unit: Mapping[str, Any], data_dir: Path) -> DataSource:
        return peft_data_source(unit, data_dir)

    def estimate_device_memory(
        self, unit: Mapping[str, Any], budget: int | None = None
    ) -> MemoryEstimate | None:
        """:func:`peft_device_memory`."""
        return peft_device_memory(unit, budget)

    def cost_class(self, unit: Mapping[str, Any]) -> Any:
        """The kind and the benchmark: a FiLM unit trains through ViT-B/16 (hours on a GPU), a
        head unit trains a linear head on cached features (seconds), and a benchmark's
        training images set the work (CIFAR-100: 50,000; ImageNet-R: 24,000, its 80 % split
        of 30,000; 5-Datasets: its five members)."""
        return (PeftRun.from_unit(unit).kind, str(unit["benchmark"]))

    def cost_parts(self, unit: Mapping[str, Any]) -> dict[str, CostPart]:
        """What a unit shares (:mod:`privrepro.continual.peft.shared_work`): its data (pixel
        arrays or features, once per benchmark over every figure), its tuning study (once per
        study key: the runs of one kind, label configurations and task orders of one
        (benchmark, ε, repeat)), and, for a PEFT Ensemble, its members (once per member key:
        Fig. 3's S_prior^const column, Fig. 5 and Fig. A1 train the same). A FiLM unit's parts
        are named FiLM tuning, FiLM final training and evaluation; a head unit's are all
        "heads"."""
        run = PeftRun.from_unit(unit)
        study = ("study", shared_work.study_key(unit))
        members = shared_work.ensemble_key(unit)
        trained = None if members is None else ("members", members)
        if run.kind == "film":
            return {
                "features": CostPart("features", shared_work.data_key(unit)),
                "tuning": CostPart("FiLM tuning", study),
                "training": CostPart("FiLM final training", trained),
                "evaluation": CostPart("evaluation"),
            }
        return {
            "features": CostPart("features", shared_work.data_key(unit)),
            "tuning": CostPart("heads", study),
            "training": CostPart("heads", trained),
            "evaluation": CostPart("heads"),
        }


def run_peft_unit(unit: dict[str, Any], ctx: UnitContext) -> peft.PeftOutput:
    """:func:`~privrepro.continual.peft.run_peft` on a unit built with :func:`peft_settings`,
    with the unit's seeded DP-SGD stream and workspace; studies are named per profile."""
    return peft.run_peft(
        peft.PeftRun.from_unit(unit),
        peft.FeatureSettings(**unit["features"]),
        peft.FilmSettings(**unit["film"]),
        peft.TrainSettings(**unit["train"]),
        peft.TuningSettings(**unit["tuning"]),
        seed=ctx.seed,
        workspace=workspace_of(ctx),
        study_tag=ctx.profile,
        generator=ctx.torch_generator("dpsgd"),
    )


def summarize_final(table: pd.DataFrame, keys: list[str], rule: str = "argmax") -> pd.DataFrame:
    """``final_<AA|AF>_<stat>`` rows over repeats per ``keys`` group (:func:`final_metrics`)."""
    out = []
    for metric in ("AA", "AF"):
        for _, r in final_metrics(table, keys, metric, rule).iterrows():
            base, n = {k: r[k] for k in keys}, int(r["count"])
            for stat in ("mean", "std", "median", "min", "max"):
                out.append(
                    {"metric": f"final_{metric}_{stat}", **base, "value": r[stat], "repeats": n}
                )
    return pd.DataFrame(out)


def plot_final(
    table: pd.DataFrame,
    panels: list[str],
    series: str,
    panel_key: str = "benchmark",
    kind: str = "cl_method",
) -> Any:
    """Median final AA over repeats with min/max error bars per privacy level, one panel per
    ``panel_key`` value and one series per ``series`` value (the paper's plotting rule); the
    series are named by :func:`~privrepro.plotting.names.display` of ``kind``."""
    fig, axes = new_figure(1, len(panels), width=4.6, height=3.4, squeeze=False)
    order = [peft.eps_label(e) for e in (1.0, 8.0, None)]
    for ax, panel in zip(axes[0], panels, strict=False):
        final_accuracy_markers(
            ax, table[table[panel_key] == panel], series, order, label=lambda v: display(kind, v)
        )
        ax.set_title(display("benchmark", panel))
        ax.set_xlabel("privacy level (δ = 1e-5)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        # two columns of method names per panel fit its width (three overran one panel)
        ncol = min(len(labels), 2 * len(panels))
        fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=8)
    fig.suptitle("median over repeats, min/max as error bars", fontsize=9)
    return fig
