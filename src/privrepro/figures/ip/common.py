"""What the ip figures share: parameters, base and tuned models, and the four accuracy series.

Series (ip paper, Figs. 3–6; the notebooks' labels in brackets):

* ``sll_output`` — Gauss-Output on the SLL network ("SLL output"), noise on cached logits;
* ``sll_input`` — Gauss-Input on the SLL network ("SLL input"), noise in pixel space;
* ``resnet`` — Gauss-Input on the ResNet ("ResNet");
* ``resnet_tune`` — Gauss-Input on the best noisy-fine-tuned ResNet ("ResNet Tune").

Each point is (α, ε) at δ; the accuracy is the mean (and population std, as the notebooks)
over ``n_draws`` seeded noise draws. ``mode`` is ``repo_compat`` (as the notebooks: μ_C = 1,
classical σ, ResNet noise in normalised space, BN-statistics-only "fine-tuning" selected on the
test set) or ``corrected`` (μ_C the computed bound including the last layer, the exact-δ
calibration where the classical σ misses δ, pixel-space noise for every model, real fine-tuning
selected on the validation split).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch

from privrepro.config.validation import param
from privrepro.figures.api import UnitContext
from privrepro.inference.basemodels import BaseModel, BaseModelSpec, get_base_model, spec_key
from privrepro.inference.calibration import (
    analytic_sigma,
    gauss_input_sigma,
    gaussian_true_delta,
)
from privrepro.inference.data import ImageData, load_image_data
from privrepro.inference.evaluate import gauss_input_accuracy, gauss_output_accuracy
from privrepro.inference.networks import ArchSpec
from privrepro.inference.tuning import MODES, fine_tune_noisy, noise_space_of, select_tuned
from privrepro.seeding import numpy_stream, torch_stream
from privrepro.training.classifier import TrainConfig

SERIES = ("sll_output", "sll_input", "resnet", "resnet_tune")
SERIES_LABEL = {
    "sll_output": "SLL Gauss-Output",
    "sll_input": "SLL Gauss-Input",
    "resnet": "ResNet Gauss-Input",
    "resnet_tune": "ResNet Tune Gauss-Input",
}
GROUPS = {
    "sll": ("sll_output", "sll_input"),
    "resnet": ("resnet",),
    "resnet_tune": ("resnet_tune",),
}


@dataclass
class DataParams:
    """The data set and its splits."""

    val_fraction: float = param(
        0.2, gt=0, lt=1, assumed="the notebooks split the training set 80/20 into train/valid"
    )
    max_train: int | None = param(None, ge=1, doc="subsample the training split (reduced profiles)")
    max_test: int | None = param(None, ge=1, doc="subsample the test set (reduced profiles)")
    download: bool = param(False, doc="let torchvision download CIFAR (a user's machine)")


@dataclass
class ModelParams:
    """One base architecture, its training recipe, and optional per-dataset checkpoints."""

    arch: str = param("sll", choices=["sll", "resnet18", "resnet_small"])
    depth_conv: int = param(20, ge=0, doc="SLL conv layers (SLL small: 20)")
    depth_linear: int = param(7, ge=0, doc="SLL dense layers (SLL small: 7)")
    width: int = param(45, ge=1, doc="SLL channels (SLL small: 45)")
    conv_inner: int = param(
        5, ge=1, assumed="the note's reading of Araujo et al.'s SLL small conv inner size"
    )
    linear_inner: int = param(2048, ge=1, doc="SLL dense inner size (SLL small: 2048)")
    pool: int = param(4, ge=1, doc="SLL sum-pooling window (Araujo: 4 on 32×32)")
    resnet_width: int = param(16, ge=1, doc="resnet_small base width")
    resnet_blocks: int = param(2, ge=1, doc="resnet_small blocks")
    epochs: int = param(
        200, ge=0, assumed="pretrained weights are not shipped; training budget is ours"
    )
    batch_size: int = param(128, ge=1, assumed="not stated")
    lr: float = param(1e-2, gt=0, assumed="Araujo et al. main.py: Adam lr 0.01")
    optimizer: str = param("adam", choices=["adam", "sgd"])
    beta1: float = param(0.5, ge=0, lt=1, assumed="Araujo et al. main.py: betas (0.5, 0.9)")
    beta2: float = param(0.9, ge=0, lt=1)
    momentum: float = param(0.9, ge=0, lt=1)
    weight_decay: float = param(0.0, ge=0)
    schedule: str = param(
        "cosine",
        choices=["constant", "cosine"],
        assumed="Araujo's 'interp' schedule replaced by cosine",
    )
    loss: str = param("margin_xent", choices=["xent", "margin_xent"])
    checkpoints: dict = param(
        {}, doc="dataset name → a state_dict file to load instead of training"
    )

    def spec(self, dataset: str, data: DataParams) -> BaseModelSpec:
        arch = ArchSpec(
            self.arch,
            self.depth_conv,
            self.depth_linear,
            self.width,
            self.conv_inner,
            self.linear_inner,
            self.pool,
            self.resnet_width,
            self.resnet_blocks,
        )
        train = TrainConfig(
            self.epochs,
            self.batch_size,
            self.lr,
            self.optimizer,
            (self.beta1, self.beta2),
            self.momentum,
            self.weight_decay,
            self.schedule,
        )
        return BaseModelSpec(
            arch,
            dataset,
            train,
            loss=self.loss,
            checkpoint=self.checkpoints.get(dataset),
            data={**asdict(data), "splits": "registry train/test"},
        )


def _default_resnet() -> ModelParams:
    return ModelParams(
        arch="resnet18",
        epochs=200,
        batch_size=128,
        lr=0.1,
        optimizer="sgd",
        weight_decay=5e-4,
        schedule="cosine",
        loss="xent",
    )


@dataclass
class TuneParams:
    """The noisy fine-tuning grid ("ResNet Tune") and its recipe."""

    eps_targets: list[float] = param(
        [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0],
        gt=0,
        doc="notebooks' CIFAR10_FineTune target budgets",
        unique=True,
    )
    multipliers: list[float] = param(
        [0.25, 0.5, 0.85, 1.0, 1.15, 2.0],
        gt=0,
        doc="ε_train = m · ε_target (notebooks)",
        unique=True,
    )
    alpha_target: float = param(
        0.1, gt=0, doc="the radius the tuned models target (notebooks: 0.1)"
    )
    epochs: int = param(11, ge=0, doc="notebooks: range(waiting_epochs + 1), waiting_epochs = 10")
    batch_size: int = param(500, ge=1, doc="notebooks: 500")
    lr: float = param(1e-3, gt=0, doc="notebooks: Adam 1e-3")


@dataclass
class IPParams:
    """Parameters every ip accuracy figure shares."""

    delta: float = param(1e-5, gt=0, lt=1, doc="δ (the paper: 1e-5 everywhere)")
    n_draws: int = param(15, ge=1, doc="noise draws per point (the captions: 15 tests)")
    modes: list[str] = param(
        ["repo_compat"], choices=list(MODES), doc="which protocol(s) to run", unique=True
    )
    series: list[str] = param(list(SERIES), choices=list(SERIES), unique=True)
    data: DataParams = field(default_factory=DataParams)
    sll: ModelParams = field(default_factory=ModelParams)
    resnet: ModelParams = field(default_factory=_default_resnet)
    tune: TuneParams = field(default_factory=TuneParams)
    eval_batch_size: int = param(500, ge=1, doc="images per forward pass (notebooks: 500)")
    power_iterations: int = param(100, ge=1, doc="power-iteration steps per layer for μ_C")


def groups_of(series: list[str]) -> list[str]:
    """The unit groups needed for ``series``, in a stable order."""
    return [g for g, members in GROUPS.items() if any(s in series for s in members)]


def unit_params(p: IPParams) -> dict[str, Any]:
    """The parameters a unit depends on (they enter the unit's hash)."""
    d = asdict(p)
    for k in ("modes", "series"):
        d.pop(k, None)
    return d


def _from_dict(cls: type, d: dict[str, Any]) -> Any:
    return cls(**d)


def params_from_unit(unit: dict[str, Any]) -> IPParams:
    """Rebuild :class:`IPParams` from a unit's ``params`` entry."""
    d = dict(unit["params"])
    return IPParams(
        delta=d["delta"],
        n_draws=d["n_draws"],
        data=_from_dict(DataParams, d["data"]),
        sll=_from_dict(ModelParams, d["sll"]),
        resnet=_from_dict(ModelParams, d["resnet"]),
        tune=_from_dict(TuneParams, d["tune"]),
        eval_batch_size=d["eval_batch_size"],
        power_iterations=d["power_iterations"],
    )


def load_data(ctx: UnitContext, dataset: str, p: IPParams) -> ImageData:
    """The dataset with a split that depends on the root seed and dataset only (shared by figures)."""
    rng = numpy_stream(ctx.seed, "ip-data", dataset)
    return load_image_data(
        dataset,
        ctx.data_dir,
        rng,
        p.data.val_fraction,
        p.data.max_train,
        p.data.max_test,
        p.data.download,
    )


def base_model(
    ctx: UnitContext, which: str, dataset: str, p: IPParams, data: ImageData
) -> BaseModel:
    """The cached base ``sll`` or ``resnet`` for ``dataset``."""
    mp = p.sll if which == "sll" else p.resnet
    return get_base_model(
        mp.spec(dataset, p.data), data, ctx.cache_dir, ctx.seed, ctx.device, ctx.log
    )


def sigma_for(mode: str, epsilon: float, delta: float, sensitivity: float) -> tuple[float, str]:
    """σ for sensitivity Δ: classical (repo_compat; corrected where its exact δ holds), else the
    exact (analytic Gaussian) σ."""
    if sensitivity == 0:
        return 0.0, "none"
    s = float(np.asarray(gauss_input_sigma(epsilon, delta, sensitivity)))
    if mode == "repo_compat" or float(gaussian_true_delta(epsilon, s, sensitivity)) <= delta:
        return s, "classical"
    return float(analytic_sigma(epsilon, delta, sensitivity)), "analytic"


def _rows(
    series: str,
    mode: str,
    points: list[tuple[float, float]],
    sigmas: list[float],
    calib: list[str],
    mu: float,
    delta: float,
    acc: np.ndarray,
    dataset: str,
    sensitivity: list[float],
    extra: dict[str, Any] | None = None,
) -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "dataset": dataset,
            "series": series,
            "mode": mode,
            "alpha": [a for a, _ in points],
            "epsilon": [e for _, e in points],
            "delta": delta,
            "sigma": sigmas,
            "calibration": calib,
            "mu": mu,
            "true_delta": [
                float(gaussian_true_delta(e, s, d)) if s > 0 else 0.0
                for (_, e), s, d in zip(points, sigmas, sensitivity, strict=True)
            ],
            "accuracy": acc.mean(1),
            "accuracy_std": acc.std(1),
            "n_draws": acc.shape[1],
        }
    )
    for k, v in (extra or {}).items():
        df[k] = v
    return df


def sll_mu(ctx: UnitContext, bm: BaseModel, data: ImageData, p: IPParams) -> tuple[float, float]:
    """(μ used by repo_compat = 1, the computed bound including the last layer)."""
    from privrepro.models.lipschitz import network_lipschitz_bound

    c, h, w = data.shape
    body = bm.model.body.cpu()
    assert isinstance(body, torch.nn.Sequential)
    bound, _ = network_lipschitz_bound(
        body, (1, c, h, w), torch_stream(ctx.seed, "ip-mu", bm.key), p.power_iterations
    )
    bm.model.to(ctx.device)
    return 1.0, float(bound)


def tuned_family(
    ctx: UnitContext, dataset: str, mode: str, p: IPParams, data: ImageData, base: BaseModel
) -> list[tuple[float, float, Any]]:
    """The fine-tuned ResNets of the grid (cached): ``[(ε_target, ε_train, model), ...]``."""
    from filelock import FileLock

    from privrepro.inference.basemodels import load_state, save_state

    out = []
    t = p.tune
    grid = [(et, et * m) for et in t.eps_targets for m in t.multipliers]
    cfg = TrainConfig(epochs=t.epochs, batch_size=t.batch_size, lr=t.lr)
    for eps_t, eps_tr in ctx.progress(grid, desc=f"tuned models ({mode})"):
        s_tr = float(gauss_input_sigma(eps_tr, p.delta, t.alpha_target))
        s_t = float(gauss_input_sigma(eps_t, p.delta, t.alpha_target))
        key = spec_key(
            p.resnet.spec(dataset, p.data),
            ctx.seed,
            {
                "tune": asdict(t),
                "mode": mode,
                "eps_target": eps_t,
                "eps_train": eps_tr,
                "delta": p.delta,
            },
        )
        folder = ctx.cache_dir / "ip" / f"tune-{key}"
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder / ".lock")):
            if (folder / "model.pt").is_file():
                import copy

                model = copy.deepcopy(base.model)
                load_state(model, folder / "model.pt")
            else:
                gen = torch_stream(ctx.seed, "ip-tune", key, device="cpu")
                model, _ = fine_tune_noisy(
                    base.model,
                    data.x_train,
                    data.y_train,
                    data.x_val,
                    data.y_val,
                    s_tr,
                    s_t,
                    mode,
                    cfg,
                    gen,
                    ctx.device,
                )
                save_state(model, folder / "model.pt")
        out.append((eps_t, eps_tr, model.to(ctx.device).eval()))
    return out


def compute_group(
    ctx: UnitContext,
    dataset: str,
    mode: str,
    group: str,
    points: list[tuple[float, float]],
    p: IPParams,
    series: tuple[str, ...] = SERIES,
) -> pd.DataFrame:
    """Rows of one unit: one series group (restricted to ``series``), one mode, one dataset."""
    data = load_data(ctx, dataset, p)
    frames = []
    if group == "sll":
        bm = base_model(ctx, "sll", dataset, p, data)
        mu_repo, mu_bound = sll_mu(ctx, bm, data, p)
        mu = mu_repo if mode == "repo_compat" else mu_bound
        out_cal = [sigma_for(mode, e, p.delta, a * mu) for a, e in points]
        in_cal = [sigma_for(mode, e, p.delta, a) for a, e in points]
        acc = gauss_output_accuracy(
            bm.test_logits.to(ctx.device),
            data.y_test,
            [s for s, _ in out_cal],
            p.n_draws,
            ctx.torch_generator("noise-output"),
        )
        frames.append(
            _rows(
                "sll_output",
                mode,
                points,
                [s for s, _ in out_cal],
                [c for _, c in out_cal],
                mu,
                p.delta,
                acc,
                dataset,
                [a * mu for a, _ in points],
                {"mu_bound": mu_bound, "clean_accuracy": bm.clean_accuracy},
            )
        )
        if "sll_input" not in series:
            return _finish(frames, mode)
        acc = gauss_input_accuracy(
            bm.model,
            data.x_test,
            data.y_test,
            [s for s, _ in in_cal],
            p.n_draws,
            ctx.torch_generator("noise-input"),
            "pixel",
            p.eval_batch_size,
            ctx.device,
            lambda it, d: ctx.progress(it, desc=d),
        )
        frames.append(
            _rows(
                "sll_input",
                mode,
                points,
                [s for s, _ in in_cal],
                [c for _, c in in_cal],
                1.0,
                p.delta,
                acc,
                dataset,
                [a for a, _ in points],
                {"mu_bound": mu_bound, "clean_accuracy": bm.clean_accuracy},
            )
        )
    else:
        bm = base_model(ctx, "resnet", dataset, p, data)
        cal = [sigma_for(mode, e, p.delta, a) for a, e in points]
        sig = [s for s, _ in cal]
        extra: dict[str, list[Any]] = {}
        if group == "resnet":
            acc = gauss_input_accuracy(
                bm.model,
                data.x_test,
                data.y_test,
                sig,
                p.n_draws,
                ctx.torch_generator("noise-input"),
                noise_space_of(mode),
                p.eval_batch_size,
                ctx.device,
                lambda it, d: ctx.progress(it, desc=d),
            )
            extra = {"clean_accuracy": [bm.clean_accuracy] * len(points)}
        else:
            family = tuned_family(ctx, dataset, mode, p, data, bm)
            chosen, acc = select_tuned(
                [m for _, _, m in family],
                sig,
                mode,
                data.x_val,
                data.y_val,
                data.x_test,
                data.y_test,
                p.n_draws,
                lambda name: ctx.torch_generator(name),
                ctx.device,
                p.eval_batch_size,
            )
            extra = {
                "tuned_eps_target": [family[i][0] for i in chosen],
                "tuned_eps_train": [family[i][1] for i in chosen],
                "selection": ["test set" if mode == "repo_compat" else "validation split"]
                * len(points),
            }
        frames.append(
            _rows(
                group,
                mode,
                points,
                sig,
                [c for _, c in cal],
                1.0,
                p.delta,
                acc,
                dataset,
                [a for a, _ in points],
                extra,
            )
        )
    return _finish(frames, mode)


def _finish(frames: list[pd.DataFrame], mode: str) -> pd.DataFrame:
    df = pd.concat(frames, ignore_index=True)
    df["noise_space"] = np.where(
        df["series"].str.startswith("resnet"), noise_space_of(mode), "pixel"
    )
    return df


def summarize_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Named scalars for the report: ``accuracy`` per point, ``accuracy_std``, the exact ``true_delta``
    of the σ used, the base models' ``clean_accuracy`` and the SLL bound ``mu_bound``."""
    keys = ["dataset", "series", "mode", "alpha", "epsilon"]
    frames = []
    for metric, col in (
        ("accuracy", "accuracy"),
        ("accuracy_std", "accuracy_std"),
        ("true_delta", "true_delta"),
    ):
        f = table[[*keys, col]].rename(columns={col: "value"}).copy()
        f.insert(0, "metric", metric)
        frames.append(f)
    if "clean_accuracy" in table:
        f = (
            table.dropna(subset=["clean_accuracy"])
            .groupby(["dataset", "series", "mode"], as_index=False)["clean_accuracy"]
            .first()
            .rename(columns={"clean_accuracy": "value"})
        )
        f.insert(0, "metric", "clean_accuracy")
        frames.append(f)
    if "mu_bound" in table:
        f = (
            table.dropna(subset=["mu_bound"])
            .groupby(["dataset", "mode"], as_index=False)["mu_bound"]
            .first()
            .rename(columns={"mu_bound": "value"})
        )
        f.insert(0, "metric", "mu_bound")
        frames.append(f)
    return pd.concat(frames, ignore_index=True)
