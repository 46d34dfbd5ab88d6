"""What FiLM DP-SGD through a ViT costs on a GPU per image-pass, from its counted operators.

The cl PEFT figures are almost all FiLM DP-SGD through ViT-B/16 (cl paper, Sec. 6): their cost is
their image-passes (``benchmarks/count_cl_trainings.py --grid paper``: epochs × rows of each
training and each study trial) times the cost of one. :func:`count_film_steps` runs the
project's own FiLM member training (:func:`privrepro.continual.peft.members.train_member`, one
DP-SGD step at sample rate 1, so every row is in the batch) on the CPU at two batch sizes and
records every operator it dispatches (:func:`~.device_model.operator_counts`: FLOPs, bytes,
class). The operators of the two runs pair up one to one (the same code path); each one's FLOPs
and bytes are affine in the batch, so the pair gives them at any batch size
(:meth:`StepCount.at_batch`), and each is priced at that size on a device's roofline
(:meth:`~.device_model.DeviceModel.op_seconds`, launch floor included) — the per-operator
roofline at the physical batch the GPU would run, not the CPU's tiny one.

:func:`closed_form_vit_flops` gives a ViT's matmul, attention and convolution FLOPs per image from
its shapes (the tests hold the counts against it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from privrepro.rehearsal.device_model import (
    DEVICES,
    OPERATOR_CLASSES,
    DeviceModel,
    operator_class,
    operator_counts,
)

__all__ = [
    "StepCount",
    "closed_form_vit_flops",
    "count_film_steps",
    "count_operators",
]


def count_operators(fn: Callable[[], Any]) -> list[tuple[str, float, float]]:
    """Run ``fn`` and return every non-view operator it dispatched, in order, as
    (name, FLOPs, bytes)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    ops: list[tuple[str, float, float]] = []

    class _Mode(TorchDispatchMode):
        def __torch_dispatch__(  # type: ignore[override]
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            counted = operator_counts(func, args, kwargs, out)
            if counted is not None:
                ops.append(counted)
            return out

    with _Mode():
        fn()
    return ops


@dataclass(frozen=True)
class StepCount:
    """One DP-SGD step's operators counted at two batch sizes ``b1 < b2`` (same sequence).

    Attributes:
        b1, b2: the batch sizes counted.
        ops1, ops2: (name, FLOPs, bytes) per operator at each.
        precision: the arithmetic they ran in (``fp32``, ``bf16``, ...).
    """

    b1: int
    b2: int
    ops1: tuple[tuple[str, float, float], ...]
    ops2: tuple[tuple[str, float, float], ...]
    precision: str

    def __post_init__(self) -> None:
        names1 = [o[0] for o in self.ops1]
        names2 = [o[0] for o in self.ops2]
        if names1 != names2:
            raise ValueError(
                f"the operators at batch {self.b1} and {self.b2} differ "
                f"({len(names1)} against {len(names2)}): not one code path"
            )

    def at_batch(self, batch: float) -> list[tuple[str, float, float]]:
        """Every operator's (name, FLOPs, bytes) at ``batch``: affine in the batch through the
        two counts (an operator on the parameters alone stays as counted)."""
        t = (batch - self.b1) / (self.b2 - self.b1)
        return [
            (n, max(0.0, f1 + t * (f2 - f1)), max(0.0, m1 + t * (m2 - m1)))
            for (n, f1, m1), (_, f2, m2) in zip(self.ops1, self.ops2, strict=True)
        ]

    def flops_per_image(self) -> dict[str, float]:
        """FLOPs per image-pass by operator class (the slope between the two counts)."""
        out = dict.fromkeys(OPERATOR_CLASSES, 0.0)
        for (n, f1, _), (_, f2, _) in zip(self.ops1, self.ops2, strict=True):
            out[operator_class(n, max(f1, f2))] += (f2 - f1) / (self.b2 - self.b1)
        return out

    def seconds_per_image(self, device: DeviceModel, batch: int) -> dict[str, float]:
        """Seconds per image-pass on ``device`` by operator class, at physical batch ``batch``
        (one step's operators at that size, priced one by one, over ``batch``)."""
        out = dict.fromkeys(OPERATOR_CLASSES, 0.0)
        for name, flops, nbytes in self.at_batch(batch):
            c = operator_class(name, flops)
            out[c] += device.op_seconds(c, flops, nbytes, self.precision) / batch
        return out


def count_film_steps(
    precision: str = "fp32",
    batches: tuple[int, int] = (2, 4),
    labels: int = 100,
    backbone: Any | None = None,
    img_size: int = 224,
    seed: int = 0,
) -> StepCount:
    """Count one FiLM DP-SGD step (forward, per-sample gradients, clipping, noise, Adam) of
    :func:`~privrepro.continual.peft.members.train_member` at each of ``batches`` rows.

    Args:
        precision: the training's arithmetic (``fp32``, ``tf32``, ``bf16``).
        batches: the two batch sizes counted (each a single step at sample rate 1).
        labels: outputs of the member's head (its released label space).
        backbone: a timm ViT; ``None``: ViT-B/16 at 224² with random weights (the shapes,
            hence the counts, are the pre-trained model's).
        img_size: the images' side (the backbone's input).
        seed: the images' and the DP-SGD stream's seed.
    """
    import numpy as np
    import timm
    import torch

    from privrepro.continual.peft.members import train_member
    from privrepro.training.dpsgd import DPSGDHyper

    if backbone is None:
        backbone = timm.create_model("vit_base_patch16_224", pretrained=False, num_classes=0)
    backbone.eval()
    counts = []
    for b in batches:
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn(b, 3, img_size, img_size, generator=gen)
        y = np.arange(b) % labels
        hp = DPSGDHyper(
            epochs=1.0, batch_size=float(b), lr=1e-3, clip=1.0, epsilon=8.0, accountant="rdp"
        )

        def step(x: Any = x, y: Any = y, hp: DPSGDHyper = hp, b: int = b) -> None:
            train_member(
                "film",
                x,
                y,
                np.arange(labels),
                hp,
                generator=torch.Generator().manual_seed(seed),
                backbone=backbone,
                physical_batch=b,
                precision=precision,
            )

        counts.append(tuple(count_operators(step)))
    return StepCount(batches[0], batches[1], counts[0], counts[1], precision)


def closed_form_vit_flops(
    depth: int, dim: int, tokens: int, patch: int, channels: int = 3, mlp_ratio: float = 4.0
) -> dict[str, float]:
    """A ViT's forward FLOPs per image by class, from its shapes (2 FLOPs per multiply-add):
    ``convolution``, the patch embedding (``tokens − 1`` patches of ``channels · patch²``
    inputs); ``matmul``, per block the qkv (3·dim²), output (dim²) and MLP (2·mlp_ratio·dim²)
    products per token; ``attention``, per block QKᵀ and AV: 2 · tokens² · dim each."""
    patches = tokens - 1
    conv = 2.0 * patches * channels * patch * patch * dim
    per_token = (3 + 1 + 2 * mlp_ratio) * dim * dim
    matmul = depth * 2.0 * tokens * per_token
    attention = depth * 2 * 2.0 * tokens * tokens * dim
    return {"convolution": conv, "matmul": matmul, "attention": attention}


def device_hours(
    passes: float, step: StepCount, batch: int, devices: Mapping[str, DeviceModel] = DEVICES
) -> dict[str, float]:
    """Hours of ``passes`` image-passes per device at physical batch ``batch``."""
    return {
        name: passes * sum(step.seconds_per_image(dev, batch).values()) / 3600
        for name, dev in devices.items()
    }
