"""Accuracy of a classifier under the Gaussian IP mechanisms, over a σ grid and seeded draws.

"Values reported are average of 15 tests" (ip paper, Figs. 3–6 captions): each draw is a full
pass over the test set with fresh noise. Draw ``d`` uses its own generator seeded from the
caller's generator, and the *same* noise serves every σ of the grid (common random numbers):
the accuracy at a point depends on α/ε only through σ, exactly, as the paper's Fig. 5 remark
says, and neighbouring grid points are compared on equal noise.

* Gauss-Output (Def. 4) runs on cached clean logits: the model runs once.
* Gauss-Input (Def. 5) runs the body on ``normalize(x) + σ·scale·z`` in batches on the device,
  where ``scale`` is 1 (noise in the body's input space, as the notebooks for ResNet) or 1/std
  (noise in pixel space, any model).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray
from torch import Tensor, nn

from privrepro.config.validation import ConfigError
from privrepro.inference.calibration import MODES
from privrepro.loops import PLAIN, Loops

__all__ = ["Evaluation", "draw_seeds", "gauss_input_accuracy", "gauss_output_accuracy"]


@dataclass(frozen=True)
class Evaluation:
    """How an ip experiment measures accuracy under noise, shared by every series it evaluates.

    Attributes:
        delta: the δ of {(ε, δ), α} IP (the paper: 1e-5).
        mode: ``"repo_compat"`` (as the notebooks) or ``"corrected"``
            (:data:`privrepro.inference.calibration.MODES`).
        n_draws: noise draws per point (the paper's captions: 15 tests).
        batch_size: images per forward pass (Gauss-Input, fine-tuning selection).
        device: where the models run (``"cpu"``, ``"cuda"``).
        loops: runs the long loops (:mod:`privrepro.loops`; plain iteration by default).
    """

    delta: float = 1e-5
    mode: str = "corrected"
    n_draws: int = 15
    batch_size: int = 500
    device: str = "cpu"
    loops: Loops = PLAIN

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError("mode", self.mode, f"must be one of {list(MODES)}")
        if not 0 < self.delta < 1:
            raise ConfigError("delta", self.delta, "must lie in (0, 1)")
        for key in ("n_draws", "batch_size"):
            if getattr(self, key) < 1:
                raise ConfigError(key, getattr(self, key), "must lie in [1, inf)")


def draw_seeds(generator: torch.Generator, n_draws: int) -> list[int]:
    """One 62-bit seed per noise draw, taken from ``generator`` (on its own device)."""
    if n_draws < 1:
        raise ConfigError("n_draws", n_draws, "must lie in [1, inf)")
    seeds = torch.randint(0, 2**62, (n_draws,), generator=generator, device=generator.device)
    return [int(s) for s in seeds]


def _unique_sigmas(sigmas: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    s = np.asarray(sigmas, dtype=np.float64).reshape(-1)
    if np.any(~np.isfinite(s)) or np.any(s < 0):
        bad = float(s[~np.isfinite(s) | (s < 0)][0])
        raise ConfigError("sigmas", bad, "every σ must be finite and lie in [0, inf)")
    return np.unique(s, return_inverse=True)


def _correct_intervals(logits: Tensor, labels: Tensor, z: Tensor) -> tuple[Tensor, Tensor]:
    """For each example, the σ-interval (lo, hi) on which argmax(logits + σ z) is its label.

    Being correct means a_j − σ b_j > 0 for every other class j, with a_j = l_y − l_j and
    b_j = z_j − z_y: linear in σ, so the set of σ > 0 that classify correctly is one open
    interval. An empty interval is returned as (inf, inf).
    """
    a = logits.gather(1, labels[:, None]) - logits
    b = z - z.gather(1, labels[:, None])
    other = torch.ones_like(a, dtype=torch.bool).scatter_(1, labels[:, None], False)
    with torch.no_grad():
        ratio = a / b
    neg_inf = torch.full_like(a, -torch.inf)
    pos_inf = torch.full_like(a, torch.inf)
    lo = torch.where(other & (b < 0), ratio, neg_inf).amax(1).clamp(min=0.0)
    hi = torch.where(other & (b > 0), ratio, pos_inf).amin(1)
    never = (other & (b == 0) & (a <= 0)).any(1) | ~(lo < hi)
    lo = torch.where(never, torch.inf, lo)
    hi = torch.where(never, torch.inf, hi)
    return lo, hi


def gauss_output_accuracy(
    logits: Tensor,
    labels: Tensor,
    sigmas: ArrayLike,
    n_draws: int,
    generator: torch.Generator,
    method: str = "interval",
    max_elements: int = 1 << 23,
) -> NDArray[np.float64]:
    """Accuracy of argmax(logits + σ Z) for each σ and draw: an array ``[len(sigmas), n_draws]``.

    ``method="interval"`` (default): per draw, each example is correct on one σ-interval
    (:func:`_correct_intervals`), so the accuracy at every σ of the grid is two sorted searches —
    O(N k + (N + S) log N) per draw instead of O(S N k). ``method="direct"`` computes every
    argmax (in chunks of ``max_elements`` noisy logits); both use the same noise and agree up to
    ties of probability zero. σ = 0 is the clean accuracy (argmax's tie rule) in both.
    """
    if method not in ("interval", "direct"):
        raise ConfigError("method", method, "must be one of ['interval', 'direct']")
    uniq, inverse = _unique_sigmas(sigmas)
    n, k = logits.shape
    device = logits.device
    labels = labels.to(device)
    logits64 = logits.to(torch.float64)
    clean = float((logits.argmax(-1) == labels).double().mean())
    sig = torch.as_tensor(uniq, dtype=torch.float64, device=device)
    chunk = max(1, max_elements // max(n * k, 1))
    out = np.empty((len(uniq), n_draws))
    for d, seed in enumerate(draw_seeds(generator, n_draws)):
        g = torch.Generator(device=device).manual_seed(seed)
        z = torch.randn(logits.shape, generator=g, dtype=logits.dtype, device=device).to(
            torch.float64
        )
        if method == "interval":
            lo, hi = _correct_intervals(logits64, labels, z)
            lo_sorted, hi_sorted = torch.sort(lo).values, torch.sort(hi).values
            count = torch.searchsorted(lo_sorted, sig, side="left") - torch.searchsorted(
                hi_sorted, sig, side="right"
            )
            out[:, d] = count.double().cpu().numpy() / n
        else:
            for start in range(0, len(uniq), chunk):
                s = sig[start : start + chunk]
                pred = torch.addcmul(
                    logits64.unsqueeze(0), s.reshape(-1, 1, 1), z.unsqueeze(0)
                ).argmax(-1)
                out[start : start + chunk, d] = (pred == labels).double().mean(1).cpu().numpy()
        out[uniq == 0, d] = clean
    return out[inverse]


@torch.no_grad()
def gauss_input_accuracy(
    model: nn.Module,
    images: Tensor,
    labels: Tensor,
    sigmas: ArrayLike,
    n_draws: int,
    generator: torch.Generator,
    noise_space: str = "pixel",
    batch_size: int = 500,
    device: str = "cpu",
    loops: Loops = PLAIN,
) -> NDArray[np.float64]:
    """Accuracy of C(x + Z), Z ~ N(0, σ²), for each σ and draw: ``[len(sigmas), n_draws]``.

    Args:
        model: a :class:`~privrepro.inference.networks.NormalizedNet` (or any module; then
            ``noise_space`` must be ``"pixel"`` and the noise is added to ``images``).
        images: pixel-space inputs (CPU or device).
        noise_space: ``"pixel"`` (the radius α is measured on the images) or ``"normalized"``
            (on the normalised tensor, as the ip notebooks do for ResNet-18).
        batch_size: images per forward pass.
        loops: runs the draws and their batches (:mod:`privrepro.loops`).
    """
    from privrepro.inference.networks import NormalizedNet

    if noise_space not in ("pixel", "normalized"):
        raise ConfigError("noise_space", noise_space, "must be one of ['pixel', 'normalized']")
    uniq, inverse = _unique_sigmas(sigmas)
    model.eval().to(device)
    if isinstance(model, NormalizedNet):
        body: nn.Module = model.body
        scale = (
            model.pixel_to_normalized_scale().to(device)
            if noise_space == "pixel"
            else torch.ones(1, device=device)
        )
        prep: Callable[[Tensor], Tensor] = model.normalize
    else:
        if noise_space != "pixel":
            raise ConfigError("noise_space", noise_space, "'normalized' needs a NormalizedNet")
        body, scale, prep = model, torch.ones(1, device=device), (lambda t: t)
    correct = np.zeros((len(uniq), n_draws))
    for d, seed in loops(list(enumerate(draw_seeds(generator, n_draws))), "noise draws"):
        g = torch.Generator(device=device).manual_seed(seed)
        # every batch, unless ``loops`` shortens the loop and sizes its batches
        for start in loops(range(0, len(images), batch_size), "noise batches"):
            stop = start + loops.item_size(min(batch_size, len(images) - start))
            xb = prep(images[start:stop].to(device))
            yb = labels[start:stop].to(device)
            z = torch.randn(xb.shape, generator=g, dtype=xb.dtype, device=device) * scale
            for i, s in enumerate(uniq):
                logits = body(xb + float(s) * z) if s > 0 else body(xb)
                correct[i, d] += float((logits.argmax(-1) == yb).sum())
    return (correct / len(images))[inverse]
