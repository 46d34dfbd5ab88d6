"""Classifiers with their input normalisation kept apart, so noise can go in either space.

The ip notebooks add Gauss-Input noise to the *normalised* tensor for ResNet-18 (per-channel
std ≈ 0.2, so a normalised-space radius α is a pixel-space radius of only α·min std) and in
[0, 1] pixel space for SLL (whose normaliser has std 1). :class:`NormalizedNet` exposes both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from privrepro.models.resnet import cifar_resnet18, small_resnet
from privrepro.models.sll import sll_network

__all__ = ["ArchSpec", "NormalizedNet", "build_network", "lipschitz_bound"]


class NormalizedNet(nn.Module):
    """``body((x − mean) / std)`` with per-channel ``mean`` and ``std`` buffers."""

    mean: Tensor
    std: Tensor

    def __init__(self, body: nn.Module, mean: Sequence[float], std: Sequence[float]) -> None:
        super().__init__()
        self.body = body
        self.register_buffer(
            "mean", torch.tensor(list(mean), dtype=torch.float32).reshape(1, -1, 1, 1)
        )
        self.register_buffer(
            "std", torch.tensor(list(std), dtype=torch.float32).reshape(1, -1, 1, 1)
        )

    def normalize(self, x: Tensor) -> Tensor:
        """Pixels → the body's input space."""
        return (x - self.mean) / self.std

    def forward(self, x: Tensor) -> Tensor:
        return self.body(self.normalize(x))

    def pixel_to_normalized_scale(self) -> Tensor:
        """Per-channel factor 1/std mapping pixel-space noise into the normalised space."""
        return (1.0 / self.std).reshape(1, -1, 1, 1)


@dataclass(frozen=True)
class ArchSpec:
    """An architecture: ``sll`` (Araujo et al.), ``resnet18`` (timm, CIFAR stem) or ``resnet_small``.

    SLL fields follow "SLL small" (20/7/45/2048 in the ip notebooks); ``conv_inner`` is the inner
    channels of each SDP convolution and ``pool`` the sum-pooling window.
    """

    name: str
    depth_conv: int = 20
    depth_linear: int = 7
    width: int = 45
    conv_inner: int = 5
    linear_inner: int = 2048
    pool: int = 4
    resnet_width: int = 16
    resnet_blocks: int = 2


def build_network(
    spec: ArchSpec,
    num_classes: int,
    in_channels: int,
    image_size: int,
    mean: Sequence[float],
    std: Sequence[float],
) -> NormalizedNet:
    """The classifier of ``spec`` behind its normaliser (SLL: std forced to 1, as the notebooks,
    so the network stays 1-Lipschitz in pixel space up to its last layer)."""
    if spec.name == "sll":
        body: nn.Module = sll_network(
            num_classes,
            in_channels,
            image_size,
            spec.depth_conv,
            spec.depth_linear,
            spec.width,
            spec.conv_inner,
            spec.linear_inner,
            spec.pool,
        )
        return NormalizedNet(body, mean, [1.0] * in_channels)
    if spec.name == "resnet18":
        return NormalizedNet(cifar_resnet18(num_classes, in_channels), mean, std)
    if spec.name == "resnet_small":
        return NormalizedNet(
            small_resnet(num_classes, in_channels, spec.resnet_width, spec.resnet_blocks), mean, std
        )
    from privrepro.config.validation import ConfigError

    raise ConfigError("arch.name", spec.name, "must be one of ['sll', 'resnet18', 'resnet_small']")


def lipschitz_bound(
    net: NormalizedNet,
    image_shape: tuple[int, int, int],
    generator: torch.Generator,
    iterations: int = 100,
) -> float:
    """An ℓ2 Lipschitz bound μ_C of ``net``'s logits in pixel space (ip paper, eq. 8).

    The product of per-layer bounds of the body (:func:`privrepro.models.lipschitz.
    network_lipschitz_bound`, power iteration seeded by ``generator``, the last layer included),
    times the normaliser's largest 1/std (1 for SLL, whose std is forced to 1). The body must be
    an ``nn.Sequential`` of layers with a known bound (SLL; a BatchNorm raises ``TypeError``); it
    is bounded on the CPU and put back on its device.
    """
    from privrepro.models.lipschitz import network_lipschitz_bound

    body = net.body
    if not isinstance(body, nn.Sequential):
        from privrepro.config.validation import ConfigError

        raise ConfigError("net.body", type(body).__name__, "must be an nn.Sequential (SLL)")
    device = next(body.parameters()).device
    bound, _ = network_lipschitz_bound(body.cpu(), (1, *image_shape), generator, iterations)
    body.to(device)
    return float(bound) * float((1.0 / net.std).max())
