"""PEFT Ensemble members: FiLM on a timm ViT and head-only ("last layer") models (cl paper,
Sec. 6, Alg. 2).

Each ensemble member starts from the pre-trained backbone, sees only its own task's data and is
trained with DP-SGD (:mod:`privrepro.training.dpsgd`) (more in ``docs/modules.md``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray
from torch import Tensor, nn

from privrepro.config import ConfigError
from privrepro.loops import PLAIN, Loops
from privrepro.metrics import MetricLogger, prefixed
from privrepro.training.dpsgd import (
    DPSGDHyper,
    PrivacyRecord,
    TrainLog,
    train_dpsgd,
    train_linear_head,
)
from privrepro.training.precision import compute_precision, widened
from privrepro.training.rows import Rows, gather_rows, num_rows, select_rows

__all__ = [
    "PEFT_KINDS",
    "Member",
    "film_parameter_count",
    "iter_ensemble",
    "local_targets",
    "make_film",
    "member_logits",
    "new_head",
    "small_vit",
    "train_member",
    "vit_b16_film_count",
]

PEFT_KINDS = ("film", "head")


def _as_torch_layernorms(model: nn.Module) -> None:
    """Swap timm's ``LayerNorm`` subclasses for plain ``nn.LayerNorm`` (same math, same params),
    so opacus uses its exact LayerNorm per-sample-gradient rule instead of a functorch fallback."""
    for name, child in list(model.named_children()):
        if isinstance(child, nn.LayerNorm) and type(child) is not nn.LayerNorm:
            ln = nn.LayerNorm(
                list(child.normalized_shape),
                eps=child.eps,
                elementwise_affine=child.elementwise_affine,
                device=child.weight.device if child.weight is not None else None,
                dtype=child.weight.dtype if child.weight is not None else None,
            )
            if child.elementwise_affine:
                ln.weight = child.weight
                ln.bias = child.bias
            setattr(model, name, ln)
        else:
            _as_torch_layernorms(child)


def make_film(backbone: nn.Module, num_outputs: int) -> nn.Module:
    """A FiLM copy of a timm ``VisionTransformer``: only LayerNorm affine parameters and a new,
    zero-initialised ``head`` of ``num_outputs`` labels are trainable (cl paper, Sec. 6).

    The frozen weights are shared with ``backbone``, not copied: each member holds new frozen
    ``Parameter`` objects over the backbone's storage (the backbone's own parameters keep their
    ``requires_grad``), so an ensemble of T ViT-B/16 members holds one backbone (343 MB in
    float32) plus T × (LayerNorm affine + head), not T backbones. Only the LayerNorm affine
    parameters (which FiLM trains) are copied."""
    norms = {
        id(p)
        for m in backbone.modules()
        if isinstance(m, nn.LayerNorm)
        for p in m.parameters(recurse=False)
    }
    shared: dict[int, Any] = {
        id(p): nn.Parameter(p.detach(), requires_grad=False)
        for p in backbone.parameters()
        if id(p) not in norms
    }
    model = copy.deepcopy(backbone, memo=shared)
    _as_torch_layernorms(model)
    for p in model.parameters():
        p.requires_grad_(False)
    for m in model.modules():
        if isinstance(m, nn.LayerNorm) and m.elementwise_affine:
            m.weight.requires_grad_(True)
            m.bias.requires_grad_(True)
    dim = int(model.num_features)  # type: ignore[arg-type]
    ref = next(model.parameters())
    model.head = new_head(dim, num_outputs, device=ref.device, dtype=ref.dtype)
    return model


def new_head(dim: int, num_outputs: int, device: Any = None, dtype: Any = None) -> nn.Linear:
    """The zero-initialised linear head of every member (cl paper, Sec. 6)."""
    head = nn.Linear(dim, num_outputs, device=device, dtype=dtype)
    nn.init.zeros_(head.weight)
    nn.init.zeros_(head.bias)
    return head


def film_parameter_count(model: nn.Module) -> int:
    """Number of trainable parameters (FiLM: LayerNorm affine + head)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def vit_b16_film_count(num_outputs: int) -> int:
    """Trainable FiLM parameters of ViT-B/16 with a ``num_outputs`` head, built on the meta
    device (no weights, no memory): 38,400 + 769·C (cl paper, Sec. 6: 115,300 for C = 100)."""
    import timm

    with torch.device("meta"):
        vit = timm.create_model("vit_base_patch16_224", pretrained=False, num_classes=0)
        return film_parameter_count(make_film(vit, num_outputs))


def small_vit(
    generator: torch.Generator,
    img_size: int = 16,
    patch_size: int = 4,
    embed_dim: int = 32,
    depth: int = 2,
    num_heads: int = 2,
    in_chans: int = 3,
) -> nn.Module:
    """A small timm ``VisionTransformer`` with random weights from ``generator`` (``smoke``: the
    FiLM code path of ViT-B/16 on a model that trains in seconds on a CPU)."""
    from timm.models.vision_transformer import VisionTransformer

    vit = VisionTransformer(
        img_size=img_size,
        patch_size=patch_size,
        in_chans=in_chans,
        embed_dim=embed_dim,
        depth=depth,
        num_heads=num_heads,
        num_classes=0,
    )
    with torch.no_grad():
        for name, p in vit.named_parameters():
            if p.ndim > 1 and name not in ("cls_token", "pos_embed"):
                fan_in = int(torch.tensor(p.shape[1:]).prod())  # LeCun-normal: features vary
                p.copy_(torch.randn(p.shape, generator=generator) / fan_in**0.5)
            elif name in ("cls_token", "pos_embed"):
                p.copy_(torch.randn(p.shape, generator=generator) * 0.02)
            elif name.endswith("bias"):
                p.zero_()
    vit.eval()  # no dropout; DP-SGD needs a deterministic forward
    return vit


def local_targets(
    y: ArrayLike, label_ids: ArrayLike
) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """Keep-mask and head index of each label in ``label_ids`` (sorted); unmatched: dropped
    (``R_t^task`` with the drop map, cl paper Eq. 3)."""
    yy = np.asarray(y, dtype=np.int64)
    ids = np.asarray(label_ids, dtype=np.int64)
    if ids.size and np.any(np.diff(ids) <= 0):
        raise ValueError("label_ids must be sorted and unique")
    pos = np.searchsorted(ids, yy)
    keep = (
        (pos < ids.size) & (ids[np.minimum(pos, max(ids.size - 1, 0))] == yy)
        if ids.size
        else np.zeros(yy.shape, bool)
    )
    return keep, pos[keep].astype(np.int64)


@dataclass
class Member:
    """One ensemble member: its label ids (global, sorted) and its trained model.

    ``model`` is an ``nn.Linear`` head (``kind="head"``, on features) or a FiLM ViT
    (``kind="film"``, on images).
    """

    kind: str
    label_ids: NDArray[np.int64]
    model: nn.Module
    log: TrainLog | None = None
    n_train: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def privacy(self) -> PrivacyRecord | None:
        return None if self.log is None else self.log.privacy


def train_member(
    kind: str,
    x: Rows,
    y: ArrayLike,
    label_ids: ArrayLike,
    hp: DPSGDHyper,
    *,
    generator: torch.Generator,
    backbone: nn.Module | None = None,
    init: nn.Module | None = None,
    physical_batch: int = 256,
    composition: str = "parallel",
    privacy: PrivacyRecord | None = None,
    loops: Loops = PLAIN,
    log_metric: MetricLogger | None = None,
    precision: str = "fp32",
    engine: str = "auto",
) -> Member:
    """Train one member on one task's data with DP-SGD (cl paper, Alg. 2, one loop body).

    Args:
        kind: ``"head"`` (``x`` is a tensor of features ``(n, K)``) or ``"film"`` (``x`` are
            images — a tensor, or :class:`~privrepro.continual.pixels.HostImages` gathered to
            the device batch by batch — and ``backbone`` is the pre-trained timm ViT).
        y: global labels of ``x``; label_ids: the member's released label space.
        init: continue from this model instead of a fresh one (Naive baseline, Alg. A1).
        loops: runs the DP-SGD steps (:mod:`privrepro.loops`).
        log_metric: per-step metrics of the DP-SGD run (:mod:`privrepro.metrics`).
        precision: the model's arithmetic in DP-SGD (``"fp32"``, ``"tf32"``, ``"bf16"``;
            :mod:`privrepro.training.precision`).
        engine: FiLM's per-sample clipping (:func:`~privrepro.training.dpsgd.train_dpsgd`).
    """
    if kind not in PEFT_KINDS:
        raise ConfigError("kind", kind, f"must be one of {list(PEFT_KINDS)}")
    ids = np.unique(np.asarray(label_ids, dtype=np.int64))
    if ids.size == 0:
        raise ConfigError("label_ids", [], "a member needs at least one output label")
    keep, local = local_targets(y, ids)
    xk = select_rows(x, keep)
    yk = torch.as_tensor(local, device=x.device)
    model: nn.Module
    if kind == "head":
        if not isinstance(x, Tensor):
            raise TypeError("kind = 'head' trains on a feature tensor, got " + type(x).__name__)
        model = new_head(int(x.shape[1]), ids.size, device=x.device, dtype=x.dtype)
    else:
        if backbone is None:
            raise ConfigError("backbone", None, "kind = 'film' needs the pre-trained backbone")
        model = make_film(backbone, ids.size)
    if init is not None:  # a fresh module with the previous weights (no per-sample hook state)
        model.load_state_dict(init.state_dict())
    train: Callable[..., TrainLog] = partial(
        train_dpsgd, physical_batch=physical_batch, engine=engine
    )
    if kind == "head":  # the same step rule, per-sample norms in closed form
        assert isinstance(model, nn.Linear) and isinstance(xk, Tensor)
        train = train_linear_head
    log = train(
        model,
        xk,
        yk,
        hp,
        generator=generator,
        composition=composition,
        privacy=privacy,
        loops=loops,
        log_metric=log_metric,
        precision=precision,
    )
    return Member(kind, ids, model, log, num_rows(xk))


@torch.no_grad()
def member_logits(
    member: Member, x: Rows, batch: int = 1024, precision: str = "fp32", loops: Loops = PLAIN
) -> Tensor:
    """Logits ``(n, |O_l|)`` of a member over its own labels (columns follow ``label_ids``);
    ``x`` is gathered ``batch`` rows at a time; the forward in ``precision``, the logits
    float32; every batch, unless ``loops`` (:mod:`privrepro.loops`) shortens the loop and sizes
    its batches."""
    member.model.eval()
    n = num_rows(x)
    with compute_precision(precision, x.device):
        outs = [
            widened(member.model(gather_rows(x, slice(s, s + loops.item_size(min(batch, n - s))))))
            for s in loops(range(0, n, batch), "member logit batches")
        ]
    if not outs:
        return torch.zeros(0, member.label_ids.size, device=x.device)
    return loops.full_rows(torch.cat(outs), n)


def iter_ensemble(
    kind: str,
    tasks: Sequence[tuple[Rows, ArrayLike]],
    label_spaces: Sequence[ArrayLike],
    hps: Sequence[DPSGDHyper],
    *,
    generator: torch.Generator,
    backbone: nn.Module | None = None,
    physical_batch: int = 256,
    loops: Loops = PLAIN,
    log_metric: MetricLogger | None = None,
    precision: str = "fp32",
    engine: str = "auto",
) -> Iterator[Member]:
    """The PEFT Ensemble (cl paper, Alg. 2): for each task t, ``f_t ← init(f^pre)`` and
    ``f_t ← DP-SGD(f_t; D_t)``; yields each member as soon as it is trained, so a caller can
    evaluate and drop it (members never see each other's data: parallel composition).
    ``log_metric`` gets each member's DP-SGD metrics as ``task<t>/<name>``."""
    if not len(tasks) == len(label_spaces) == len(hps):
        raise ConfigError(
            "len(label_spaces), len(hps)",
            (len(label_spaces), len(hps)),
            f"must both equal len(tasks) = {len(tasks)}",
        )
    for t, ((x, y), ids, hp) in enumerate(zip(tasks, label_spaces, hps, strict=True)):
        yield train_member(
            kind,
            x,
            y,
            ids,
            hp,
            generator=generator,
            backbone=backbone,
            physical_batch=physical_batch,
            loops=loops,
            log_metric=prefixed(log_metric, f"task{t}/"),
            precision=precision,
            engine=engine,
        )
