"""What the ip recipes share: parameters, the units of an (α, ε) grid, the recipe base that adapts
a unit to the library (:mod:`privrepro.inference.sweep`), the report's named scalars, and the
accuracy curve of Figs. 3 and 4. The two modes: :data:`privrepro.inference.calibration.MODES`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import pandas as pd

from privrepro.config.validation import param
from privrepro.data.provenance import DataSource, registry_source
from privrepro.figures.api import Figure, UnitContext, grid_units
from privrepro.figures.cost_model import CostModel
from privrepro.inference.basemodels import BaseModelSpec, get_base_model, spec_key
from privrepro.inference.calibration import MODES
from privrepro.inference.data import load_image_data
from privrepro.inference.evaluate import Evaluation
from privrepro.inference.networks import ArchSpec
from privrepro.inference.noisy_finetuning import TuneGrid, tuned_family
from privrepro.inference.sweep import SERIES, SERIES_LABEL, resnet_series, sll_series, tuned_sweep
from privrepro.plotting.lines import split_lines
from privrepro.plotting.names import display
from privrepro.plotting.style import PALETTE, new_figure
from privrepro.seeding import numpy_stream
from privrepro.training.classifier import TrainConfig

GROUPS = {
    "sll": ("sll_output", "sll_input"),
    "resnet": ("resnet",),
    "resnet_tune": ("resnet_tune",),
}
"""Run units: the series that share a base model (SLL output and input share one)."""


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
        5, ge=1, assumed="Araujo et al.'s SLL small conv inner size, read from their code"
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
        """The library's spec of this model for ``dataset`` (the arch fields share their names)."""
        arch = ArchSpec(self.arch, **{k: getattr(self, k) for k in _ARCH_FIELDS})
        betas = (self.beta1, self.beta2)
        train = TrainConfig(betas=betas, **{k: getattr(self, k) for k in _TRAIN_FIELDS})
        data_key = {**asdict(data), "splits": "registry train/test"}
        checkpoint = self.checkpoints.get(dataset)
        return BaseModelSpec(arch, dataset, train, self.loss, checkpoint=checkpoint, data=data_key)


_ARCH_FIELDS = [f.name for f in fields(ArchSpec) if f.name != "name"]
_TRAIN_FIELDS = ["epochs", "batch_size", "lr", "optimizer", "momentum", "weight_decay", "schedule"]


@dataclass
class ResNetParams(ModelParams):
    """The ResNet's architecture and training recipe, with its own provenance notes.

    The paper uses pre-trained ResNet-18 weights (timm / ``detectors``) that are not shipped, so
    the harness trains its own; none of the SLL's sources (Araujo et al.) applies here.
    """

    arch: str = param("resnet18", choices=["sll", "resnet18", "resnet_small"])
    conv_inner: int = param(5, ge=1, doc="SLL only; unused by the ResNet")
    epochs: int = param(
        200,
        ge=0,
        assumed="the paper's pre-trained ResNet-18 weights are not shipped; training budget is ours",
    )
    batch_size: int = param(
        128, ge=1, assumed="not stated (the paper uses pre-trained weights); ours"
    )
    lr: float = param(
        0.1, gt=0, assumed="not stated (the paper uses pre-trained weights); ours, per optimizer"
    )
    optimizer: str = param("sgd", choices=["adam", "sgd"])
    beta1: float = param(0.5, ge=0, lt=1, doc="Adam's β1 when optimizer = adam")
    weight_decay: float = param(5e-4, ge=0)
    schedule: str = param(
        "cosine",
        choices=["constant", "cosine"],
        assumed="not stated (the paper uses pre-trained weights); cosine",
    )
    loss: str = param("xent", choices=["xent", "margin_xent"])


def _default_resnet() -> ResNetParams:
    return ResNetParams()


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
    n_draws: int = param(
        15,
        ge=1,
        le=10_000,
        doc="noise draws per point (the captions: 15 tests); each draw evaluates the whole test "
        "set under fresh noise, so 10,000 draws of CIFAR-10's is 10⁸ forward passes per point",
    )
    modes: list[str] = param(
        ["repo_compat"], choices=list(MODES), doc="which protocol(s) to run", unique=True
    )
    series: list[str] = param(list(SERIES), choices=list(SERIES), unique=True)
    data: DataParams = field(default_factory=DataParams)
    sll: ModelParams = field(default_factory=ModelParams)
    resnet: ResNetParams = field(default_factory=_default_resnet)
    tune: TuneParams = field(default_factory=TuneParams)
    eval_batch_size: int = param(500, ge=1, doc="images per forward pass (notebooks: 500)")
    power_iterations: int = param(100, ge=1, doc="power-iteration steps per layer for μ_C")


def accuracy_units(
    p: IPParams, dataset: str, points: list[list[float]], groups: list[str] | None = None
) -> list[dict[str, Any]]:
    """One unit per mode and series group (default: the groups of ``p.series``) on ``points``.

    The unit's ``params`` are all of ``p`` but ``modes`` and ``series`` (its own keys)."""
    if groups is None:
        groups = [g for g, members in GROUPS.items() if any(s in p.series for s in members)]
    shared = {k: v for k, v in asdict(p).items() if k not in ("modes", "series")}
    return grid_units(
        {"dataset": dataset, "points": points, "params": shared}, mode=p.modes, group=groups
    )


def params_from_unit(unit: dict[str, Any]) -> IPParams:
    """Rebuild the shared :class:`IPParams` from a unit's ``params`` entry."""
    d = {f.name: unit["params"][f.name] for f in fields(IPParams) if f.name in unit["params"]}
    nested = {"data": DataParams, "sll": ModelParams, "resnet": ResNetParams, "tune": TuneParams}
    return IPParams(**{**d, **{k: cls(**d[k]) for k, cls in nested.items()}})


def _metric(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    out = frame.rename(columns={column: "value"}).copy()
    out.insert(0, "metric", column)
    return out


def summarize_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Named scalars for the report: ``accuracy`` per point, ``accuracy_std``, the exact ``true_delta``
    of the σ used, the base models' ``clean_accuracy`` and the SLL bound ``mu_bound``."""
    keys = ["dataset", "series", "mode", "alpha", "epsilon"]
    frames = [_metric(table[[*keys, c]], c) for c in ("accuracy", "accuracy_std", "true_delta")]
    for column, by in (("clean_accuracy", keys[:3]), ("mu_bound", ["dataset", "mode"])):
        if column in table:
            firsts = table.dropna(subset=[column]).groupby(by, as_index=False)[column].first()
            frames.append(_metric(firsts, column))
    return pd.concat(frames, ignore_index=True)


P = TypeVar("P", bound=IPParams)


class AccuracyFigure(Figure[P], CostModel):
    """An ip accuracy figure: each unit is one series group, one mode, one dataset, computed by
    :mod:`privrepro.inference.sweep`; the report's scalars from :func:`summarize_rows`."""

    series: ClassVar[tuple[str, ...]] = SERIES
    #: the paper's dataset for each registry dataset the figure shows (any other: CIFAR-10)
    paper_datasets: ClassVar[Mapping[str, str]] = {}

    def data_source(self, unit: Mapping[str, Any], data_dir: Path) -> DataSource:
        paper = self.paper_datasets.get(unit["dataset"], "CIFAR-10")
        return registry_source(unit["dataset"], data_dir, paper)

    def shared_cache_key(self, unit: Mapping[str, Any]) -> Any:
        """The cache a unit builds or reads, for every figure: the base model
        (``<cache_dir>/ip/base-<key>``, for every mode) of the ``sll`` (the SLL) and ``resnet``
        (the ResNet-18) groups, and the tuned family of its mode (``<cache_dir>/ip/tune-<key>``)
        of the ``resnet_tune`` group; each with the hash of what it depends on (architecture,
        data, training, tuning grid), so that figures with equal specs share it."""
        p = params_from_unit(dict(unit))
        kind = "sll" if unit["group"] == "sll" else "resnet"
        spec = (p.sll if kind == "sll" else p.resnet).spec(unit["dataset"], p.data)
        if unit["group"] == "resnet_tune":  # the tuned family of its mode (its base model too)
            tune = {"tune": asdict(p.tune), "mode": unit["mode"], "delta": p.delta}
            return ("ip-tune", unit["dataset"], unit["mode"], spec_key(spec, 0, tune))
        return ("ip-base", kind, unit["dataset"], spec_key(spec, 0))

    def cost_class(self, unit: Mapping[str, Any]) -> Any:
        """The series group: an SLL unit (its Lipschitz bound, Gauss-Output and -Input), a ResNet
        unit and a ResNet Tune unit (66 noisy fine-tunings) cost differently."""
        return unit["group"]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        p, points = params_from_unit(unit), [(float(a), float(e)) for a, e in unit["points"]]
        dataset, mode, group = unit["dataset"], unit["mode"], unit["group"]
        d = p.data  # the split depends on the root seed and the dataset only: figures share it
        rng = numpy_stream(ctx.seed, "ip-data", dataset)
        data = load_image_data(
            dataset, ctx.data_dir, rng, d.val_fraction, d.max_train, d.max_test, d.download
        )
        spec = (p.sll if group == "sll" else p.resnet).spec(dataset, d)
        bm = get_base_model(spec, data, ctx.cache_dir, ctx.seed, ctx.device, ctx.log, ctx.loops)
        ev = Evaluation(p.delta, mode, p.n_draws, p.eval_batch_size, ctx.device, ctx.loops)
        noise = ctx.torch_generator
        if group == "sll":
            with_input, iterations = "sll_input" in self.series, p.power_iterations
            return sll_series(bm, data, points, ev, noise, ctx.seed, iterations, with_input)
        if group == "resnet":
            return resnet_series(bm, data, points, ev, noise)
        family = tuned_family(bm, data, TuneGrid(**asdict(p.tune)), ev, ctx.cache_dir, ctx.seed)
        return tuned_sweep(family, data, points, ev, noise)

    def summarize(self, table: pd.DataFrame, params: P) -> pd.DataFrame | None:
        return summarize_rows(table)


@dataclass
class CurveParams(IPParams):
    """An accuracy curve over α (ε fixed) or over ε (α fixed)."""

    dataset: str = param("cifar10", choices=["cifar10", "cifar100", "digits", "synthetic_images"])
    alphas: list[float] = param([0.1], ge=0, doc="radii α (ℓ2)", unique=True)
    epsilons: list[float] = param([1.0], gt=0, doc="privacy budgets ε", unique=True)


class AccuracyCurve(AccuracyFigure[CurveParams]):
    """Accuracy of the four series against ``x`` (``alpha`` or ``epsilon``): Figs. 3 and 4."""

    x: ClassVar[str] = "alpha"

    def units(self, params: CurveParams) -> list[dict[str, Any]]:
        points = [[a, e] for a in params.alphas for e in params.epsilons]
        return accuracy_units(params, params.dataset, points)

    def plot(self, table: pd.DataFrame, params: CurveParams) -> Any:
        fig, ax = new_figure(width=5.6, height=3.8)
        drawn: dict[str, str] = {}
        for (series, mode), sub in split_lines(table, self.x, series=SERIES, mode=list(STYLE)):
            color = PALETTE[SERIES.index(series)]
            drawn[SERIES_LABEL[series]] = color
            style = {"ls": STYLE[mode], "marker": "o", "ms": 3, "capsize": 2}
            ax.errorbar(sub[self.x], sub["accuracy"], sub["accuracy_std"], color=color, **style)
        by_alpha = self.x == "alpha"
        fixed = f"ε = {params.epsilons[0]:g}" if by_alpha else f"α = {params.alphas[0]:g}"
        ax.set_title(
            f"{display('dataset', params.dataset)}: accuracy vs {'α' if by_alpha else 'ε'},"
            f" {fixed}, δ = {params.delta:g}; {params.n_draws} draws per point",
            fontsize=9,
        )
        modes = [m for m in STYLE if m in set(table["mode"])]
        finish_axes(ax, "radius α" if by_alpha else "privacy budget ε", drawn, modes)
        return fig


STYLE = {"repo_compat": "-", "corrected": "--"}
"""The line style of each mode in every ip plot."""


def finish_axes(
    ax: Any, xlabel: str, colours: Mapping[str, str], modes: Sequence[str], marker: str | None = "o"
) -> None:
    """The accuracy axis and the legend every ip curve shares: one entry per colour (``label →
    colour``) and one per line style (the modes), each said once, beside the axes."""
    from matplotlib.lines import Line2D

    ax.set_xlabel(xlabel)
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.02)
    handles = [Line2D([], [], color=c, marker=marker, ms=3, label=k) for k, c in colours.items()]
    handles += [Line2D([], [], color="0.35", ls=STYLE[m], label=display("mode", m)) for m in modes]
    ax.legend(
        handles=handles, fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False
    )
