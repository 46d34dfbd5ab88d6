"""The three inference-privacy mechanisms (ip paper, Defs. 3–5), vectorised over noise draws.

* Lap-Output (Def. 3, eq. 9): ``C(x) + Z``, Z i.i.d. Laplace(b), b = μ_C α / ε (ℓ1).
* Gauss-Output (Def. 4, eq. 10): ``C(x) + Z``, Z i.i.d. N(0, σ²) on the k logits.
* Gauss-Input (Def. 5, eq. 13): ``C(x + Z)``, Z i.i.d. N(0, σ²) on the n input coordinates.

Every sampler takes a ``torch.Generator``; ``n_draws`` adds a leading axis of independent draws.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor

from privrepro.config.validation import ConfigError

__all__ = ["gauss_input", "gauss_output", "lap_output", "laplace_noise"]


def _draw_shape(x: Tensor, n_draws: int | None) -> tuple[int, ...]:
    if n_draws is not None and n_draws < 1:
        raise ConfigError("n_draws", n_draws, "must lie in [1, inf)")
    return tuple(x.shape) if n_draws is None else (n_draws, *x.shape)


def laplace_noise(
    shape: tuple[int, ...],
    scale: float,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float32,
    device: str | torch.device = "cpu",
) -> Tensor:
    """i.i.d. Laplace(0, scale) by inversion: −b sgn(u) log(1 − 2|u|), u ~ U(−½, ½)."""
    u = torch.rand(shape, generator=generator, dtype=torch.float64, device=device) - 0.5
    u = u.clamp(min=-0.5 + 1e-16)  # keep log1p finite at the closed end of [0, 1)
    return (-scale * torch.sign(u) * torch.log1p(-2.0 * u.abs())).to(dtype)


def lap_output(
    logits: Tensor, scale: float, generator: torch.Generator, n_draws: int | None = None
) -> Tensor:
    """Lap-Output's release C(x) + Z, Z ~ Lap(scale)^k (ip paper, eq. 9)."""
    if scale < 0:
        raise ConfigError("scale", scale, "must lie in [0, inf)")
    noise = laplace_noise(
        _draw_shape(logits, n_draws), scale, generator, logits.dtype, logits.device
    )
    return logits + noise


def gauss_output(
    logits: Tensor, sigma: float, generator: torch.Generator, n_draws: int | None = None
) -> Tensor:
    """Gauss-Output's release C(x) + Z, Z ~ N(0, σ²)^k (ip paper, eq. 10)."""
    if sigma < 0:
        raise ConfigError("sigma", sigma, "must lie in [0, inf)")
    z = torch.randn(
        _draw_shape(logits, n_draws), generator=generator, dtype=logits.dtype, device=logits.device
    )
    return logits + sigma * z


def gauss_input(
    model: Callable[[Tensor], Tensor],
    x: Tensor,
    sigma: float,
    generator: torch.Generator,
    n_draws: int | None = None,
) -> Tensor:
    """Gauss-Input's release C(x + Z), Z ~ N(0, σ²)^n (ip paper, eq. 13).

    With ``n_draws`` the draws are stacked into one batch of ``n_draws * len(x)`` inputs.
    """
    if sigma < 0:
        raise ConfigError("sigma", sigma, "must lie in [0, inf)")
    z = torch.randn(_draw_shape(x, n_draws), generator=generator, dtype=x.dtype, device=x.device)
    noisy = x + sigma * z
    if n_draws is None:
        return model(noisy)
    out = model(noisy.reshape(-1, *x.shape[1:]))
    return out.reshape(n_draws, x.shape[0], *out.shape[1:])
