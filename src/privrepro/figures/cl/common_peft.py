"""The shared engine of cl's PEFT figures (Figs. 3–5, A1–A8; Tables A3–A7).

One *run* = one method (PEFT Ensemble, Naive, Non-CL; FiLM or head-only) on one scenario of one
benchmark, at one ε, for one repeat. It:

1. builds the scenario of the repeat (class order drawn from the repeat's own stream, shared by
   every unit of that repeat) and the released label spaces (S_prior / S_prior^const, dummies);
2. tunes DP-SGD's hyperparameters with an Optuna study per (benchmark, kind, ε, repeat) kept in
   the run store (``<experiments>/_studies``), on "a dataset that is representative of one task"
   split 70:30 (cl paper, App. F), then transfers them to each run's data size;
3. trains the members / checkpoints and evaluates ``acc[t, i]`` under each ensemble rule;
4. returns tidy rows: per (rule, t, i) accuracies, AA_t and AF_t, and per task the DP-SGD
   privacy record (σ, q, steps, PRV ε, composition).

Data: ``features.source = synthetic`` uses clustered features (head) and seeded synthetic images
through a small random-weight timm ViT (FiLM), ``backbone`` the cached real ViT-B/16 features and
the real images (``profile=paper``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from privrepro.config import ConfigError
from privrepro.figures.api import UnitContext, param
from privrepro.seeding import numpy_stream, torch_stream
from privrepro.training.dpsgd import DPSGDHyper
from privrepro.training.rows import Rows, select_rows

__all__ = [
    "FILM_BENCHMARKS",
    "FeatureParams",
    "FilmParams",
    "RunSpec",
    "TrainParams",
    "TuneParams",
    "eps_label",
    "feature_spec",
    "run_peft",
]

#: benchmarks whose real images the FiLM path reads (``features.source = backbone``).
FILM_BENCHMARKS = ("cifar100", "imagenet-r", "5-datasets")
METHODS = ("peft_film", "peft_head", "naive_film", "naive_head", "noncl_film", "noncl_head")


@dataclass(frozen=True)
class FeatureParams:
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


@dataclass(frozen=True)
class FilmParams:
    """The FiLM model: the real backbone (paper) or a small random ViT (synthetic)."""

    img_size: int = param(16, ge=4, doc="synthetic images and small ViT: side length")
    patch_size: int = param(4, ge=1)
    embed_dim: int = param(32, ge=4)
    depth: int = param(2, ge=1)
    num_heads: int = param(2, ge=1)
    image_noise: float = param(0.35, ge=0, doc="pixel noise of the synthetic images")
    physical_batch: int = param(256, ge=1, doc="per-sample gradients materialised at once")


@dataclass(frozen=True)
class TrainParams:
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


@dataclass(frozen=True)
class TuneParams:
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


def check_film_source(
    features: FeatureParams, benchmarks: Sequence[str], methods: Sequence[str]
) -> None:
    """Refuse, before any compute, FiLM on real images of a benchmark without an image source.

    CIFAR-100, ImageNet-R and 5-Datasets all have one (:func:`_load_real_images`)."""
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


def eps_label(eps: float | None) -> str:
    return "non-DP" if eps is None else f"ε={eps:g}"


@dataclass(frozen=True)
class RunSpec:
    """What one run computes (built from a unit dict)."""

    benchmark: str
    method: str
    epsilon: float | None
    repeat: int
    label_policy: str = "prior_const"
    dummy_factor: int = 1
    dummy_reference: str = "base"
    blurry: str = ""  # "", "not-blurry", "i-blurry", "si-blurry"
    nb_tasks: int = 0  # 0: the benchmark's own (10 / 10 / 5)
    disjoint_pct: float = 50.0
    blurry_pct: float = 10.0
    order: tuple[int, ...] = ()  # 5-Datasets member order (() = canonical)
    rules: tuple[str, ...] = ("argmax",)
    save_logits: bool = False

    @property
    def kind(self) -> str:
        return self.method.rsplit("_", 1)[1]

    @property
    def family(self) -> str:
        return self.method.rsplit("_", 1)[0]


# --------------------------------------------------------------------------- data


@dataclass
class _Data:
    train_x: Rows
    train_y: np.ndarray
    test_x: Rows
    test_y: np.ndarray
    num_classes: int
    meta: dict[str, Any]
    backbone: torch.nn.Module | None = None


def _subsample(y: np.ndarray, per_class: int, rng: np.random.Generator) -> np.ndarray:
    if per_class <= 0:
        return np.arange(len(y))
    keep = [rng.permutation(np.flatnonzero(y == c))[:per_class] for c in np.unique(y)]
    return np.sort(np.concatenate(keep))


def _subsample_pair(
    train_y: np.ndarray, test_y: np.ndarray, fp: FeatureParams
) -> tuple[np.ndarray, np.ndarray]:
    """The kept train and test indices (``max_*_per_class``), the same for head and FiLM runs."""
    rng = np.random.default_rng([fp.synthetic_seed, 17])
    return (
        _subsample(train_y, fp.max_train_per_class, rng),
        _subsample(test_y, fp.max_test_per_class, rng),
    )


def feature_spec(fp: FeatureParams) -> Any:
    """The :class:`~privrepro.continual.benchmarks.FeatureSpec` of the figure's ``features``:
    head runs read its cached features, FiLM runs its images (same split and labels)."""
    from privrepro.continual.benchmarks import FeatureSpec

    return FeatureSpec(
        source=fp.source,
        backbone=fp.backbone,
        weights=fp.weights or None,
        synthetic_dim=fp.synthetic_dim,
        synthetic_seed=fp.synthetic_seed,
    )


def _load(spec: RunSpec, fp: FeatureParams, film: FilmParams, ctx: UnitContext) -> _Data:
    from privrepro.continual.benchmarks import load_benchmark

    sub_rng = np.random.default_rng([fp.synthetic_seed, 17])
    if spec.kind == "head":
        fs = feature_spec(fp)
        data, meta = load_benchmark(spec.benchmark, fs, ctx.data_dir, ctx.cache_dir, ctx.device)
        tr, te = _subsample_pair(data.train_y, data.test_y, fp)
        dev = ctx.device
        return _Data(
            torch.as_tensor(data.train_x[tr], dtype=torch.float32, device=dev),
            data.train_y[tr],
            torch.as_tensor(data.test_x[te], dtype=torch.float32, device=dev),
            data.test_y[te],
            data.num_classes,
            meta,
        )
    if fp.source == "synthetic":
        from privrepro.continual.peft import small_vit
        from privrepro.data.synthetic import synthetic_images

        c = {"cifar100": 100, "imagenet-r": 200, "5-datasets": 50}[spec.benchmark]
        per_tr = fp.max_train_per_class or 50
        per_te = fp.max_test_per_class or 10
        shape = (3, film.img_size, film.img_size)
        # labels are drawn uniformly: oversample and keep ``per`` of each class (balanced)
        tr = synthetic_images(
            None,
            n=c * (3 * per_tr + 40),
            num_classes=c,
            shape=shape,
            noise=film.image_noise,
            seed=fp.synthetic_seed,
            split="train",
        )
        te = synthetic_images(
            None,
            n=c * (3 * per_te + 40),
            num_classes=c,
            shape=shape,
            noise=film.image_noise,
            seed=fp.synthetic_seed,
            split="test",
        )
        ktr, kte = _subsample(tr.y, per_tr, sub_rng), _subsample(te.y, per_te, sub_rng)
        vit = small_vit(
            torch_stream(fp.synthetic_seed, "cl-small-vit"),
            film.img_size,
            film.patch_size,
            film.embed_dim,
            film.depth,
            film.num_heads,
        )
        dev = ctx.device
        return _Data(
            torch.as_tensor(tr.x[ktr], device=dev),
            tr.y[ktr],
            torch.as_tensor(te.x[kte], device=dev),
            te.y[kte],
            c,
            {"feature_source": "synthetic images", "backbone": "small random ViT"},
            vit.to(dev),
        )
    return _load_real_images(spec, fp, ctx)


def _load_real_images(
    spec: RunSpec, fp: FeatureParams, ctx: UnitContext, fs: Any = None, chunk: int = 512
) -> _Data:
    """Real images in the backbone's input format, kept on the host (paper FiLM).

    The images and labels are those of :func:`privrepro.continual.benchmarks.image_parts`, the
    source of head runs' cached features too (ImageNet-R's 80/20 split, 5-Datasets' members and
    label offsets), subsampled like head runs (``max_*_per_class``). Each part is converted to
    RGB (grey MNIST, FashionMNIST and notMNIST repeated over 3 channels), resized and cropped
    once into a memory-mapped ``uint8`` cache (:func:`privrepro.continual.pixels.cached_pixels`,
    under ``ctx.cache_dir``) and returned as :class:`~privrepro.continual.pixels.HostImages`:
    DP-SGD and evaluation gather one batch at a time to ``ctx.device``, normalised in float32,
    so a full-size benchmark never has to fit on the device.
    ``fs`` (default :func:`feature_spec` of ``fp``) gives the loaders' options and the
    backbone's ``model_kwargs``.
    """
    from privrepro.continual.benchmarks import image_parts
    from privrepro.continual.features import backbone_transform, create_backbone
    from privrepro.continual.pixels import (
        HostImages,
        cached_pixels,
        pixel_cache_path,
        split_transform,
    )

    if spec.benchmark not in FILM_BENCHMARKS:
        raise ConfigError("benchmark", spec.benchmark, f"must be one of {list(FILM_BENCHMARKS)}")
    fs = feature_spec(fp) if fs is None else fs
    # the data first: a missing file is reported before the backbone is loaded
    parts = {
        split: [(p, p.load()) for p in plist]
        for split, plist in image_parts(spec.benchmark, fs, Path(ctx.data_dir)).items()
    }
    labels = {
        split: np.concatenate([np.asarray(ds.y, dtype=np.int64) + p.label_offset for p, ds in got])
        for split, got in parts.items()
    }
    model = create_backbone(fs.backbone, fs.weights, pretrained=True, **fs.model_kwargs)
    pt = split_transform(backbone_transform(model))
    k_tr, k_te = _subsample_pair(labels["train"], labels["test"], fp)

    def host(split: str, rows: np.ndarray) -> HostImages:
        arrays = [
            cached_pixels(
                pixel_cache_path(ctx.cache_dir, fs.backbone, pt.key, p.dataset, split),
                partial(getattr, ds, "x"),
                pt,
                chunk,
                ctx.progress,
            )
            for p, ds in parts[split]
        ]
        return HostImages(arrays, pt.mean, pt.std, ctx.device, rows=rows)

    train_x, test_x = host("train", k_tr), host("test", k_te)
    parts.clear()  # the raw images: the pixel caches hold what the runs read
    return _Data(
        train_x,
        labels["train"][k_tr],
        test_x,
        labels["test"][k_te],
        {"cifar100": 100, "imagenet-r": 200, "5-datasets": 50}[spec.benchmark],
        {
            "feature_source": "images",
            "backbone": fs.backbone,
            "weights": fs.weights or "timm hub",
            "n_train": len(k_tr),
            "n_test": len(k_te),
            "pixel_cache": pt.key,
        },
        model.to(ctx.device),
    )


def _scenario(spec: RunSpec, data: _Data, seed: int) -> Any:
    from privrepro.continual.blurry import make_blurry_scenario
    from privrepro.continual.scenarios import ContinualData, class_incremental, five_datasets

    rng = numpy_stream(seed, "cl-peft", spec.benchmark, f"repeat{spec.repeat}", "scenario")
    cd = ContinualData(
        spec.benchmark,
        np.zeros((len(data.train_y), 1)),
        data.train_y,
        np.zeros((len(data.test_y), 1)),
        data.test_y,
        data.num_classes,
    )
    if spec.blurry:
        t = spec.nb_tasks or 5
        return make_blurry_scenario(
            spec.blurry,
            cd.train_y,
            cd.test_y,
            cd.num_classes,
            t,
            rng,
            spec.disjoint_pct,
            spec.blurry_pct,
        )
    if spec.benchmark == "5-datasets":
        return five_datasets(cd, list(spec.order) or None)
    t = spec.nb_tasks or 10
    order = rng.permutation(data.num_classes).astype(np.int64)
    inc = [len(a) for a in np.array_split(np.arange(data.num_classes), t)]
    return class_incremental(
        f"split-{spec.benchmark}", cd.train_y, cd.test_y, cd.num_classes, inc, order
    )


def _label_ids(spec: RunSpec, scenario: Any, num_classes: int) -> list[np.ndarray]:
    from privrepro.continual.label_spaces import label_spaces_for

    spaces = label_spaces_for(spec.label_policy, scenario, spec.dummy_factor, spec.dummy_reference)
    return [s.ids(num_classes) for s in spaces]


# --------------------------------------------------------------------------- tuning


def _study_location(tp: TuneParams, ctx: UnitContext, name: str) -> str:
    if tp.storage:
        return tp.storage
    return str(Path(ctx.cache_dir).parent / "_studies" / f"{name}.log")


def _tuned_hyper(
    spec: RunSpec,
    data: _Data,
    scenario: Any,
    label_ids: list[np.ndarray],
    tp: TuneParams,
    trp: TrainParams,
    film: FilmParams,
    ctx: UnitContext,
    seed: int,
    features: Any = None,
) -> tuple[DPSGDHyper, int, dict[str, Any]]:
    """Hyperparameters at the tuning size and that size (transfer per run afterwards)."""
    from privrepro.continual.peft import member_logits, train_member
    from privrepro.hpo.study import (
        SearchSpace,
        complete_trials,
        open_study,
        run_study,
        study_name,
        suggest_hyper,
    )

    t0 = min(tp.tune_task, scenario.nb_tasks - 1)
    if spec.order:  # 5-Datasets in another order: tune on the same member (CIFAR-10)
        t0 = list(spec.order).index(t0)
    idx = scenario.train_tasks[t0]
    rng = numpy_stream(seed, "cl-peft", spec.benchmark, f"repeat{spec.repeat}", "tune-split")
    perm = rng.permutation(idx)
    n_tune = max(1, round(tp.tune_fraction * len(perm)))
    n_val = max(1, round(tp.val_fraction * len(perm)))
    if tp.tune_fraction + tp.val_fraction > 1:  # 5-Datasets: fractions of the final size
        n_tune = max(1, min(len(perm) - 1, n_tune))
        n_val = max(1, min(len(perm) - n_tune, n_val))
    tune_idx, val_idx = perm[:n_tune], perm[n_tune : n_tune + n_val]
    ids = label_ids[t0]
    if not tp.enabled:
        hp = DPSGDHyper(
            trp.epochs,
            tp.batch_size,
            tp.lr,
            tp.clip,
            spec.epsilon,
            trp.delta,
            trp.accountant,
            trp.epsilon_tolerance,
        )
        return hp, n_tune, {"tuned": False}
    dev = data.train_x.device
    x_tune = select_rows(data.train_x, tune_idx)
    x_val = select_rows(data.train_x, val_idx)
    y_val = torch.as_tensor(data.train_y[val_idx], device=dev)
    space = SearchSpace(lr_low=tp.lr_low, lr_high=tp.lr_high, epochs=trp.epochs, log=tp.log_scale)
    name = (
        f"cl-{spec.benchmark}-{spec.kind}-{spec.blurry or 'split'}-{spec.label_policy}"
        f"-x{spec.dummy_factor}-{eps_label(spec.epsilon)}-r{spec.repeat}-s{seed}-{ctx.profile}"
    )
    name = name.replace("ε=", "eps")
    # the study is keyed by all the objective sees, so two figures' tunings stay apart
    search = {
        k: v
        for k, v in asdict(tp).items()
        if k not in ("storage", "n_trials", "enabled", "lr", "batch_size", "clip")
    }
    shape = {k: getattr(spec, k) for k in ("nb_tasks", "disjoint_pct", "blurry_pct", "order")}
    key = study_name(
        name,
        {
            "train": asdict(trp),
            "tuning": search,
            "film": asdict(film),
            "features": features,
            "spec": {**shape, "dummy_reference": spec.dummy_reference},
        },
    )
    study = open_study(
        key,
        _study_location(tp, ctx, key),
        sampler=tp.sampler,
        seed=int(numpy_stream(seed, name).integers(2**31)),
        n_startup_trials=tp.n_startup_trials,
    )

    def objective(trial: Any) -> float:
        hp = suggest_hyper(trial, space, n_tune, spec.epsilon, trp.delta, trp.accountant)
        hp = _nondp(replace(hp, epsilon_tolerance=trp.epsilon_tolerance), trp)
        gen = torch_stream(seed, name, f"trial{trial.number}", device=str(dev))
        m = train_member(
            spec.kind,
            x_tune,
            data.train_y[tune_idx],
            ids,
            hp,
            generator=gen,
            backbone=data.backbone,
            physical_batch=film.physical_batch,
        )
        z = member_logits(m, x_val)
        pred = torch.as_tensor(m.label_ids, device=z.device)[z.argmax(1)]
        return float((pred == y_val).float().mean())

    run_study(study, objective, tp.n_trials, progress=ctx.show_progress)
    best = max(complete_trials(study), key=lambda t: (t.value, -t.number))
    hp = DPSGDHyper(
        trp.epochs,
        float(best.params["batch_size"]),
        float(best.params["lr"]),
        float(best.params["clip"]),
        spec.epsilon,
        trp.delta,
        trp.accountant,
        trp.epsilon_tolerance,
    )
    return (
        hp,
        n_tune,
        {
            "tuned": True,
            "study": key,
            "best_val_acc": best.value,
            "n_complete": len(complete_trials(study)),
        },
    )


def _nondp(hp: DPSGDHyper, trp: TrainParams) -> DPSGDHyper:
    if hp.private or trp.nondp_clip:
        return hp
    return replace(hp, clip=math.inf)


# --------------------------------------------------------------------------- runs


def _privacy_columns(rec: Any) -> dict[str, Any]:
    """A run's ``dp_*`` columns: the opacus accountant's record (σ, q, steps, ε spent, the
    composition) and dp_accounting's PLD ε of the same mechanism beside it
    (``dp_epsilon_pld``, :func:`privrepro.training.dpsgd.pld_epsilon`)."""
    from privrepro.training.dpsgd import pld_epsilon

    if rec is None:
        return {}
    return {**rec.as_row("dp_"), "dp_epsilon_pld": pld_epsilon(rec)}


def run_peft(
    unit: dict[str, Any],
    fp: FeatureParams,
    film: FilmParams,
    trp: TrainParams,
    tp: TuneParams,
    ctx: UnitContext,
    progress_desc: str = "tasks",
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """One run; returns its rows and (when ``save_logits``) the per-member test logits."""
    from privrepro.continual.baselines import iter_naive, train_non_cl
    from privrepro.continual.ensemble import (
        accuracy_matrix,
        aggregate_scores,
        combine_best,
        member_best,
    )
    from privrepro.continual.metrics import average_accuracy, average_forgetting
    from privrepro.continual.peft import iter_ensemble, member_logits
    from privrepro.hpo.study import transfer_hyper

    spec = RunSpec(
        **{  # type: ignore[arg-type]
            k: (tuple(v) if isinstance(v, list) else v)
            for k, v in unit.items()
            if k in RunSpec.__dataclass_fields__
        }
    )
    if spec.method not in METHODS:
        raise ConfigError("method", spec.method, f"must be one of {list(METHODS)}")
    seed = ctx.seed
    data = _load(spec, fp, film, ctx)
    sc = _scenario(spec, data, seed)
    nb = sc.nb_tasks
    ids = _label_ids(spec, sc, data.num_classes)
    hp0, n_tune, tune_meta = _tuned_hyper(spec, data, sc, ids, tp, trp, film, ctx, seed, asdict(fp))
    dev = data.train_x.device
    y_test = torch.as_tensor(data.test_y, device=dev)
    test_task = torch.as_tensor(sc.test_task_of(len(data.test_y)), device=dev)
    tasks = [(select_rows(data.train_x, ix), data.train_y[ix]) for ix in sc.train_tasks]
    hps = [_nondp(transfer_hyper(hp0, n_tune, len(ix)), trp) for ix in sc.train_tasks]
    gen = ctx.torch_generator("dpsgd")
    rows: list[dict[str, Any]] = []
    logits_out: dict[str, np.ndarray] = {}
    preds: dict[str, list[torch.Tensor]] = {}
    privacy_rows: list[dict[str, Any]] = []
    base = {
        "benchmark": spec.benchmark,
        "method": spec.method,
        "epsilon": spec.epsilon,
        "eps_label": eps_label(spec.epsilon),
        "repeat": spec.repeat,
        "label_policy": spec.label_policy,
        "dummy_factor": spec.dummy_factor,
        "blurry": spec.blurry,
        "order": "-".join(map(str, spec.order)),
    }

    def log_privacy(t: int, m: Any) -> None:
        rec = m.privacy
        privacy_rows.append(
            {
                **base,
                "row": "privacy",
                "task": t,
                "n_train": m.n_train,
                "batch_size": hps[min(t, nb - 1)].batch_size if t >= 0 else None,
                **_privacy_columns(rec),
            }
        )

    if spec.family == "noncl":
        all_ix = np.concatenate(sc.train_tasks)
        hp = _nondp(transfer_hyper(hp0, n_tune, len(all_ix)), trp)
        union = np.unique(np.concatenate(ids))
        m = train_non_cl(
            spec.kind,
            select_rows(data.train_x, all_ix),
            data.train_y[all_ix],
            union,
            hp,
            generator=gen,
            backbone=data.backbone,
            physical_batch=film.physical_batch,
        )
        z = member_logits(m, data.test_x)
        pred = torch.as_tensor(m.label_ids, device=dev)[z.argmax(1)]
        acc = accuracy_matrix(pred[None, :].cpu(), y_test.cpu(), test_task.cpu(), nb)[0]
        for i in range(nb):
            rows.append(
                {
                    **base,
                    "row": "acc",
                    "rule": "argmax",
                    "t": nb,
                    "i": i + 1,
                    "value": float(acc[i]),
                }
            )
        rows.append(
            {
                **base,
                "row": "metric",
                "rule": "argmax",
                "metric": "AA",
                "t": nb,
                "value": float(np.nanmean(acc.numpy())),
            }
        )
        privacy_rows.append(
            {
                **base,
                "row": "privacy",
                "task": -1,
                "n_train": m.n_train,
                "batch_size": hp.batch_size,
                **_privacy_columns(m.privacy),
            }
        )
        return pd.DataFrame(rows + privacy_rows), logits_out

    if spec.family == "naive":
        union = np.unique(np.concatenate(ids))
        it = iter_naive(
            spec.kind,
            tasks,
            union,
            hps,
            generator=gen,
            backbone=data.backbone,
            physical_batch=film.physical_batch,
        )
        for t, m in enumerate(ctx.progress(it, desc=progress_desc, total=nb)):
            z = member_logits(m, data.test_x)
            preds.setdefault("argmax", []).append(
                torch.as_tensor(m.label_ids, device=dev)[z.argmax(1)].cpu()
            )
            log_privacy(t, m)
    else:
        full = ("entropy" in spec.rules) or spec.save_logits
        best: dict[str, tuple[list[torch.Tensor], list[torch.Tensor]]] = {
            r: ([], []) for r in spec.rules if r != "entropy"
        }
        stack: list[torch.Tensor] = []
        width = max(int(i.max()) for i in ids) + 1
        it2 = iter_ensemble(
            spec.kind,
            tasks,
            ids,
            hps,
            generator=gen,
            backbone=data.backbone,
            physical_batch=film.physical_batch,
        )
        for t, m in enumerate(ctx.progress(it2, desc=progress_desc, total=nb)):
            z = member_logits(m, data.test_x).float()
            lid = torch.as_tensor(m.label_ids, device=dev)
            for r, (ss, ll) in best.items():
                s, lab = member_best(z, lid, r)
                ss.append(s.cpu())
                ll.append(lab.cpu())
                preds.setdefault(r, []).append(combine_best(torch.stack(ss), torch.stack(ll)))
            if full:
                if width > 20000:
                    raise ConfigError(
                        "rules",
                        list(spec.rules),
                        "entropy/save_logits need label spaces of at most 20000 labels",
                    )
                g = torch.full((len(data.test_y), width), float("-inf"))
                g[:, m.label_ids] = z.cpu()
                stack.append(g)
                if spec.save_logits:
                    logits_out[f"member{t}"] = z.cpu().numpy().astype(np.float32)
                    logits_out[f"labels{t}"] = m.label_ids
            log_privacy(t, m)
            del m
        if "entropy" in spec.rules:
            c = stack[0].shape[1]
            mask = torch.zeros(nb, c, dtype=torch.bool)
            for t in range(nb):
                mask[t, ids[t]] = True
            ent = []
            for t in range(nb):
                sc_t = aggregate_scores(torch.stack(stack[: t + 1]), mask[: t + 1], "entropy")
                ent.append(sc_t.argmax(1))
            preds["entropy"] = ent
    if spec.save_logits:
        logits_out["y_test"] = data.test_y
        logits_out["test_task"] = test_task.cpu().numpy()
    for r, plist in preds.items():
        acc_np = accuracy_matrix(torch.stack(plist), y_test.cpu(), test_task.cpu(), nb).numpy()
        for t in range(nb):
            for i in range(nb):
                rows.append(
                    {
                        **base,
                        "row": "acc",
                        "rule": r,
                        "t": t + 1,
                        "i": i + 1,
                        "value": float(acc_np[t, i]),
                    }
                )
        aa = average_accuracy(np.nan_to_num(acc_np))
        af = average_forgetting(np.nan_to_num(acc_np))
        for t in range(nb):
            rows.append(
                {
                    **base,
                    "row": "metric",
                    "rule": r,
                    "metric": "AA",
                    "t": t + 1,
                    "value": float(aa[t]),
                }
            )
            rows.append(
                {
                    **base,
                    "row": "metric",
                    "rule": r,
                    "metric": "AF",
                    "t": t + 1,
                    "value": float(af[t]),
                }
            )
    meta = {
        **base,
        "row": "tuning",
        "n_tune": n_tune,
        "tune_batch": hp0.batch_size,
        "tune_lr": hp0.lr,
        "tune_clip": hp0.clip,
        **{k: v for k, v in tune_meta.items() if k != "study"},
        "study": tune_meta.get("study", ""),
    }
    return pd.DataFrame([*rows, *privacy_rows, meta]), logits_out


def final_metrics(
    table: pd.DataFrame, keys: Sequence[str], metric: str = "AA", rule: str = "argmax"
) -> pd.DataFrame:
    """Final-task metric per run, then mean / std / min / median / max over repeats (×100)."""
    m = table[(table["row"] == "metric") & (table["metric"] == metric) & (table["rule"] == rule)]
    if m.empty:
        return pd.DataFrame()
    m = m.reset_index(drop=True)
    last = m.loc[m.groupby([*keys, "repeat"], dropna=False)["t"].idxmax()]
    g = last.groupby(list(keys), dropna=False)["value"]
    out = g.agg(["mean", "std", "min", "median", "max", "count"]).reset_index()
    for c in ("mean", "std", "min", "median", "max"):
        out[c] = out[c] * 100
    return out


def params_dict(obj: Any) -> dict[str, Any]:
    return asdict(obj)


def settings_of(p: Any) -> dict[str, Any]:
    """The four parameter groups every PEFT run unit carries, as plain dicts (hashable config)."""
    return {
        "features": vars(p.features),
        "film": vars(p.film),
        "train": vars(p.train),
        "tuning": vars(p.tuning),
    }


def run_peft_unit(
    unit: dict[str, Any], ctx: UnitContext
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """:func:`run_peft` on a unit built with :func:`settings_of`."""
    return run_peft(
        unit,
        FeatureParams(**unit["features"]),
        FilmParams(**unit["film"]),
        TrainParams(**unit["train"]),
        TuneParams(**unit["tuning"]),
        ctx,
    )
