"""SDP-based Lipschitz layers (SLL; Araujo et al., "A unified algebraic perspective on Lipschitz
neural networks", ICLR 2023), written from their definitions.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = [
    "LinearNormalized",
    "PaddingChannels",
    "SDPBasedLipschitzConvLayer",
    "SDPBasedLipschitzLinearLayer",
    "SumPool2d",
    "safe_inv",
    "sll_network",
]


class _TCache:
    """``t`` of one SLL layer, kept while its parameters are unchanged (see ``docs/modules.md``).

    "Unchanged" is checked exactly: the kept value is reused only while every parameter equals
    (``torch.equal``) the snapshot it was computed from, on the same device and dtype. A
    version counter would be cheaper but misses in-place writes that do not bump it (fused
    Adam, ``p.data`` writes); the comparison reads the layer's weights once per forward, a small
    fraction of the Gram product it saves (≈ 6 M reads against 24 GFLOP per SLL-small dense layer).
    """

    def __init__(self) -> None:
        self.snapshot: tuple[Tensor, ...] = ()
        self.value: Tensor | None = None

    def _holds(self, params: tuple[Tensor, ...]) -> bool:
        return (
            self.value is not None
            and len(self.snapshot) == len(params)
            and all(
                s.device == p.device and s.dtype == p.dtype and torch.equal(s, p)
                for s, p in zip(self.snapshot, params, strict=True)
            )
        )

    def get(self, params: tuple[Tensor, ...], compute: Callable[[], Tensor]) -> Tensor:
        """``compute()`` in the graph when a gradient is recorded, else the kept value while
        ``params`` are unchanged."""
        if torch.is_grad_enabled() and any(p.requires_grad for p in params):
            return compute()
        with torch.no_grad():
            if not self._holds(params):
                self.value = compute()
                self.snapshot = tuple(p.detach().clone() for p in params)
        assert self.value is not None
        return self.value


def safe_inv(x: Tensor) -> Tensor:
    """1/x with 1/0 := 0 (a zero row of WWᵀ means a dead unit whose scale does not matter)."""
    return torch.where(
        x == 0, torch.zeros_like(x), 1.0 / torch.where(x == 0, torch.ones_like(x), x)
    )


class SDPBasedLipschitzConvLayer(nn.Module):
    """Convolutional SLL layer: ``x − 2 Kᵀ * (t ⊙ ReLU(K * x + b))`` (Araujo et al. 2023, Thm. 3).

    Args:
        cin: channels in (and out: the layer is a residual map).
        inner_dim: channels of the inner convolution ``K``.
        kernel_size: odd kernel size; padding keeps the spatial size.
    """

    def __init__(self, cin: int, inner_dim: int, kernel_size: int = 3) -> None:
        super().__init__()
        if kernel_size % 2 != 1:
            raise ValueError(f"kernel_size = {kernel_size}: must be odd")
        self.padding = kernel_size // 2
        self.kernel = nn.Parameter(torch.empty(inner_dim, cin, kernel_size, kernel_size))
        self.bias = nn.Parameter(torch.empty(1, inner_dim, 1, 1))
        self.q = nn.Parameter(torch.empty(inner_dim))
        self._t_cache = _TCache()
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Xavier-normal kernel, uniform(±1/√fan_in) bias, standard-normal log-scales q (as Araujo)."""
        fan_in = self.kernel.shape[1] * self.kernel.shape[2] * self.kernel.shape[3]
        fan_out = self.kernel.shape[0] * self.kernel.shape[2] * self.kernel.shape[3]
        with torch.no_grad():
            self.kernel.normal_(0.0, math.sqrt(2.0 / (fan_in + fan_out)), generator=generator)
            self.bias.uniform_(-1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in), generator=generator)
            self.q.normal_(0.0, 1.0, generator=generator)

    def compute_t(self) -> Tensor:
        """t_i = 1 / Σ_j |KKᵀ|_ij e^{q_j − q_i}, KKᵀ the full self-correlation of the kernel."""
        ktk = F.conv2d(self.kernel, self.kernel, padding=self.kernel.shape[-1] - 1).abs()
        q = torch.exp(self.q).reshape(-1, 1, 1, 1)
        q_inv = torch.exp(-self.q).reshape(-1, 1, 1, 1)
        return safe_inv((q_inv * ktk * q).sum((1, 2, 3)))

    def forward(self, x: Tensor) -> Tensor:
        t = self._t_cache.get((self.kernel, self.q), self.compute_t).reshape(1, -1, 1, 1)
        res = F.conv2d(x, self.kernel, padding=self.padding) + self.bias
        res = t * F.relu(res)
        return x - 2.0 * F.conv_transpose2d(res, self.kernel, padding=self.padding)


class SDPBasedLipschitzLinearLayer(nn.Module):
    """Dense SLL layer: ``x − 2 Wᵀ (t ⊙ ReLU(W x + b))`` (Araujo et al. 2023, Thm. 3)."""

    def __init__(self, cin: int, inner_dim: int) -> None:
        super().__init__()
        self.weights = nn.Parameter(torch.empty(inner_dim, cin))
        self.bias = nn.Parameter(torch.empty(1, inner_dim))
        self.q = nn.Parameter(torch.empty(inner_dim))
        self._t_cache = _TCache()
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Xavier-normal weights, uniform(±1/√fan_in) bias, uniform(0, 1) log-scales q (as Araujo)."""
        fan_out, fan_in = self.weights.shape
        with torch.no_grad():
            self.weights.normal_(0.0, math.sqrt(2.0 / (fan_in + fan_out)), generator=generator)
            self.bias.uniform_(-1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in), generator=generator)
            self.q.uniform_(0.0, 1.0, generator=generator)

    def compute_t(self) -> Tensor:
        """t_i = 1 / Σ_j |WWᵀ|_ij e^{q_j − q_i}."""
        q = torch.exp(self.q)
        q_inv = torch.exp(-self.q)
        wwt = self.weights @ self.weights.T
        return safe_inv((q_inv[:, None] * wwt * q[None, :]).abs().sum(1))

    def forward(self, x: Tensor) -> Tensor:
        t = self._t_cache.get((self.weights, self.q), self.compute_t)
        res = t * F.relu(F.linear(x, self.weights) + self.bias)
        return x - 2.0 * F.linear(res, self.weights.T)


class LinearNormalized(nn.Linear):
    """The last layer of SLL networks: ``Q x + b`` with Q the row-normalised weight (‖Q_i‖₂ = 1).

    Each logit is 1-Lipschitz, but the logit *vector* map has ℓ2 norm ‖Q‖₂ ∈ [1, √k].
    """

    def normalized_weight(self) -> Tensor:
        """Q: the weight with every row scaled to unit ℓ2 norm."""
        return F.normalize(self.weight, p=2, dim=1)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.normalized_weight(), self.bias)


class PaddingChannels(nn.Module):
    """Zero-pad the channel axis from ``ncin`` to ``ncout`` (an isometry)."""

    def __init__(self, ncout: int, ncin: int = 3) -> None:
        super().__init__()
        if ncout < ncin:
            raise ValueError(f"ncout = {ncout}: must be >= ncin = {ncin}")
        self.ncout, self.ncin = ncout, ncin

    def forward(self, x: Tensor) -> Tensor:
        return F.pad(x, (0, 0, 0, 0, 0, self.ncout - self.ncin))


class SumPool2d(nn.AvgPool2d):
    """``AvgPool2d(p, divisor_override=p)``: window sums divided by p, ℓ2 norm exactly 1.

    (A p×p window of non-overlapping sums has norm p; dividing by p makes it 1. Araujo et al. use
    p = 4 on 32×32 inputs.)
    """

    def __init__(self, p: int) -> None:
        super().__init__(p, divisor_override=p)


def sll_network(
    num_classes: int,
    in_channels: int = 3,
    image_size: int = 32,
    depth_conv: int = 20,
    depth_linear: int = 7,
    width: int = 45,
    conv_inner: int = 5,
    linear_inner: int = 2048,
    pool: int = 4,
) -> nn.Sequential:
    """An SLL network (Araujo et al. 2023; "SLL small" with the defaults, as in the ip notebooks).

    PaddingChannels(width) → depth_conv × SDP conv (inner ``conv_inner``, 3×3) → SumPool2d(pool)
    → Flatten → depth_linear × SDP dense (inner ``linear_inner``) → LinearNormalized(num_classes).
    """
    if image_size % pool != 0:
        raise ValueError(f"image_size = {image_size}: must be a multiple of pool = {pool}")
    features = width * (image_size // pool) ** 2
    layers: list[nn.Module] = [PaddingChannels(width, in_channels)]
    layers += [SDPBasedLipschitzConvLayer(width, conv_inner) for _ in range(depth_conv)]
    layers += [SumPool2d(pool), nn.Flatten()]
    layers += [SDPBasedLipschitzLinearLayer(features, linear_inner) for _ in range(depth_linear)]
    layers.append(LinearNormalized(features, num_classes))
    return nn.Sequential(*layers)
