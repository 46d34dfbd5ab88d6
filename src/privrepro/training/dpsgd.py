"""DP-SGD with Poisson sampling, per-sample clipping and Gaussian noise (Abadi et al. 2016).

cl paper, Sec. 6 and App. F (Table A2): every fine-tuned model is trained with DP-SGD in opacus
with the PRV accountant (Gopi et al. 2021), δ = 1e-5, Poisson sampling, Adam, 40 epochs; the
noise multiplier is calibrated to the target ε (Table A2: "Based on target ε").

Two code paths share one step rule (:func:`noisy_mean_gradient`) (more in ``docs/modules.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import Tensor, nn

from privrepro.config import ConfigError
from privrepro.dp.accounting import (
    OPACUS_RDP_ORDERS,
    Method,
    calibrate_noise_multiplier,
    gaussian_epsilon,
)
from privrepro.loops import PLAIN, Loops
from privrepro.metrics import MetricLogger
from privrepro.training.per_sample import PerSampleClipper, unsupported_modules
from privrepro.training.precision import (
    backward_precision,
    check_precision,
    compute_precision,
    exact_arithmetic,
    widened,
)
from privrepro.training.rows import Rows, gather_rows, num_rows

__all__ = [
    "DPSGDHyper",
    "PrivacyRecord",
    "TrainLog",
    "clip_factors",
    "linear_head_per_sample_norms",
    "noisy_mean_gradient",
    "plan_steps",
    "pld_epsilon",
    "poisson_batch",
    "privacy_record",
    "spent_epsilon",
    "train_dpsgd",
    "train_linear_head",
]

ACCOUNTANTS = ("prv", "rdp")
CLIP_EPS = 1e-6  # opacus' DPOptimizer adds this to the norm before dividing (optimizer.py)


@dataclass(frozen=True)
class DPSGDHyper:
    """Hyperparameters of one DP-SGD run (cl paper, Table A2).

    Attributes:
        epochs: passes over the data in expectation (Table A2: 40, fixed).
        batch_size: expected (Poisson) batch size; the sample rate is ``batch_size / n``.
        lr: Adam's learning rate (Table A2: 1e-7 … 1e-2).
        clip: per-sample clipping bound C (Table A2: 0.2 … 10); ``inf`` disables clipping.
        epsilon: target ε of the run; ``None`` is non-private (σ = 0).
        delta: target δ (cl paper: 1e-5).
        accountant: ``"prv"`` (the paper's) or ``"rdp"``.
        epsilon_tolerance: precision of the noise calibration's bisection (opacus' default 0.01).
    """

    epochs: float = 40.0
    batch_size: float = 64.0
    lr: float = 1e-3
    clip: float = 1.0
    epsilon: float | None = None
    delta: float = 1e-5
    accountant: str = "prv"
    epsilon_tolerance: float = 0.01

    def check(self, n: int) -> None:
        """Raise :class:`ConfigError` for a value outside its range, before any compute."""
        if n < 0:
            raise ConfigError("n", n, "must be >= 0")
        if not self.epochs > 0:
            raise ConfigError("dpsgd.epochs", self.epochs, "must lie in (0, inf)")
        if not self.batch_size > 0:
            raise ConfigError("dpsgd.batch_size", self.batch_size, "must lie in (0, inf)")
        if not self.lr > 0:
            raise ConfigError("dpsgd.lr", self.lr, "must lie in (0, inf)")
        if not self.clip > 0:
            raise ConfigError("dpsgd.clip", self.clip, "must lie in (0, inf]")
        if self.epsilon is not None and not (self.epsilon > 0):
            raise ConfigError("dpsgd.epsilon", self.epsilon, "must lie in (0, inf) or be null")
        if not 0 < self.delta < 1:
            raise ConfigError("dpsgd.delta", self.delta, "must lie in (0, 1)")
        if self.accountant not in ACCOUNTANTS:
            raise ConfigError("dpsgd.accountant", self.accountant, f"must be one of {ACCOUNTANTS}")

    @property
    def private(self) -> bool:
        return self.epsilon is not None and math.isfinite(self.epsilon)


def plan_steps(n: int, hp: DPSGDHyper) -> tuple[float, int]:
    """Sample rate ``q = min(1, B/n)`` and step count ``⌊epochs / q⌋`` (opacus' epochs→steps rule)."""
    hp.check(n)
    if n == 0:
        return 1.0, 0
    q = float(f"{min(1.0, hp.batch_size / n):.12g}")  # transfers that keep q hit one cache entry
    return q, max(1, int(hp.epochs / q + 1e-9))


def spent_epsilon(
    noise_multiplier: float, sample_rate: float, steps: int, delta: float, accountant: str = "prv"
) -> float:
    """ε of ``steps`` Poisson-subsampled Gaussian steps at δ under the run's opacus accountant.

    :func:`privrepro.dp.accounting.gaussian_epsilon`: PRV's upper bound (opacus' ``get_epsilon``
    defaults, ``eps_error`` 0.01) or RDP over opacus' default orders, so the number is opacus' own
    (tested); ``inf`` without noise, 0 without steps.
    """
    if noise_multiplier <= 0 or steps == 0:
        return math.inf if steps > 0 else 0.0
    method: Method = "prv" if accountant == "prv" else "rdp"
    return gaussian_epsilon(
        float(noise_multiplier),
        int(steps),
        float(delta),
        sampling_rate=float(sample_rate),
        method=method,
        rdp_orders=OPACUS_RDP_ORDERS,
    ).epsilon


def pld_epsilon(record: PrivacyRecord, discretization: float = 1e-4) -> float:
    """ε of the run's mechanism under dp_accounting's PLD accountant, the reference written
    beside the PRV (or RDP) number: ``steps`` Poisson-subsampled Gaussian releases with noise
    multiplier σ at the record's δ (pessimistic discretisation: an upper bound, tighter than
    RDP). ``inf`` for a non-private run, 0 for a run without steps."""
    if record.steps == 0:
        return 0.0
    if record.noise_multiplier <= 0:
        return math.inf
    return gaussian_epsilon(
        record.noise_multiplier,
        record.steps,
        record.delta,
        sampling_rate=record.sample_rate,
        method="pld",
        pld_discretization=discretization,
    ).epsilon


@dataclass(frozen=True)
class PrivacyRecord:
    """The guarantee of one DP-SGD run (one task), written into the result rows.

    ``composition`` says how per-task guarantees combine over the stream: ``"parallel"`` for
    disjoint task data (cl paper, Thm D.1: the stream is (ε, δ)-DP), ``"single"`` for one run on
    all data (Non-CL baseline).
    """

    epsilon_target: float
    delta: float
    noise_multiplier: float
    sample_rate: float
    steps: int
    epsilon_spent: float
    accountant: str
    composition: str = "parallel"

    def as_row(self, prefix: str = "") -> dict[str, Any]:
        return {prefix + k: v for k, v in asdict(self).items()}


def privacy_record(n: int, hp: DPSGDHyper, composition: str = "parallel") -> PrivacyRecord:
    """Calibrate σ for ``hp`` on ``n`` samples and account the run (non-private: σ = 0, ε = ∞)."""
    q, steps = plan_steps(n, hp)
    if not hp.private or steps == 0:
        eps_t = math.inf if not hp.private else float(hp.epsilon)  # type: ignore[arg-type]
        return PrivacyRecord(
            eps_t,
            hp.delta,
            0.0,
            q,
            steps,
            math.inf if (steps and not hp.private) else 0.0,
            hp.accountant,
            composition,
        )
    eps = float(hp.epsilon)  # type: ignore[arg-type]
    sigma = calibrate_noise_multiplier(
        eps,
        hp.delta,
        steps,
        sampling_rate=q,
        method="prv" if hp.accountant == "prv" else "rdp",
        epsilon_tolerance=hp.epsilon_tolerance,
        rdp_orders=OPACUS_RDP_ORDERS,
    )
    spent = spent_epsilon(sigma, q, steps, hp.delta, hp.accountant)
    return PrivacyRecord(eps, hp.delta, sigma, q, steps, spent, hp.accountant, composition)


def poisson_batch(n: int, sample_rate: float, generator: torch.Generator) -> Tensor:
    """Indices of a Poisson batch: each of ``n`` samples independently with prob. ``sample_rate``."""
    if n == 0:
        return torch.zeros(0, dtype=torch.long, device=generator.device)
    u = torch.rand(n, generator=generator, device=generator.device)
    return torch.nonzero(u < sample_rate, as_tuple=False).flatten()


def clip_factors(norms: Tensor, clip: float) -> Tensor:
    """``min(1, C / (‖g_i‖ + 1e-6))`` — opacus' DPOptimizer rule; ``C = inf`` gives ones."""
    if math.isinf(clip):
        return torch.ones_like(norms)
    return (clip / (norms + CLIP_EPS)).clamp(max=1.0)


def linear_head_per_sample_norms(x: Tensor, logits: Tensor, y: Tensor, bias: bool = True) -> Tensor:
    """Exact per-sample gradient norms of cross-entropy for a linear head ``z = W x + b``.

    ``∇_W ℓ_i = (p_i − e_{y_i}) x_iᵀ`` and ``∇_b ℓ_i = p_i − e_{y_i}`` (softmax cross-entropy), so
    ``‖∇ℓ_i‖_F = ‖p_i − e_{y_i}‖₂ · sqrt(‖x_i‖² + 1)`` (without the bias: ``· ‖x_i‖``).
    """
    resid = torch.softmax(logits, dim=1)
    resid = resid - nn.functional.one_hot(y, logits.shape[1]).to(resid.dtype)
    sq = (x * x).sum(1) + (1.0 if bias else 0.0)
    return resid.norm(dim=1) * sq.sqrt()


def noisy_mean_gradient(
    clipped_sum: Tensor, noise_std: float, expected_batch: float, generator: torch.Generator | None
) -> Tensor:
    """``(Σ_i clip(g_i) + N(0, (σC)² I)) / (q n)`` — opacus' DPOptimizer with Poisson sampling."""
    if noise_std > 0:
        noise = torch.normal(
            0.0,
            noise_std,
            size=clipped_sum.shape,
            generator=generator,
            device=clipped_sum.device,
            dtype=clipped_sum.dtype,
        )
        clipped_sum = clipped_sum + noise
    return clipped_sum / expected_batch


@dataclass
class TrainLog:
    """What a DP-SGD run did: its guarantee, steps, mean batch size and final training loss."""

    privacy: PrivacyRecord
    steps: int
    mean_batch: float
    last_loss: float


def _chunks(idx: Tensor, size: int) -> Iterator[Tensor]:
    for s in range(0, idx.numel(), size):
        yield idx[s : s + size]


ENGINES = ("auto", "privrepro", "opacus")

#: how many points of the ε-spent curve a logged run gets (each is one accountant evaluation)
EPSILON_LOG_POINTS = 10


def epsilon_log_steps(steps: int, points: int = EPSILON_LOG_POINTS) -> frozenset[int]:
    """The steps (1-based) at which a logged run reports ε spent: ``points`` evenly spaced ones,
    the last step always among them."""
    if steps <= 0:
        return frozenset()
    return frozenset(max(1, round(steps * (i + 1) / points)) for i in range(points)) | {steps}


def _log_step(
    log_metric: MetricLogger,
    step: int,
    loss: float,
    rec: PrivacyRecord,
    hp: DPSGDHyper,
    eps_at: frozenset[int],
) -> None:
    log_metric("loss", loss, step)
    if step in eps_at:
        spent = (
            rec.epsilon_spent
            if step == rec.steps
            else spent_epsilon(
                rec.noise_multiplier, rec.sample_rate, step, rec.delta, hp.accountant
            )
        )
        log_metric("epsilon_spent", spent, step)


class _OpacusClipper:
    """Clipped sums of one physical batch from opacus' ``GradSampleModule`` (backward hooks;
    ``loss.backward()`` also fills the ordinary ``.grad``, which is discarded)."""

    def __init__(self, model: nn.Module, params: list[nn.Parameter], exact: bool = False) -> None:
        from opacus import GradSampleModule

        self.params = params
        self.exact = exact  # a reduced-precision model: norms and sums in exact float32
        self.module = GradSampleModule(model, batch_first=True, loss_reduction="sum")

    def clipped_sums(self, loss: Tensor, batch: int, clip: float) -> list[Tensor]:
        loss.backward()
        with exact_arithmetic(self.exact):
            gs = [widened(p.grad_sample) for p in self.params]  # type: ignore[attr-defined]
            norms = torch.stack([g.reshape(g.shape[0], -1).norm(dim=1) for g in gs]).norm(dim=0)
            c = clip_factors(norms, clip)
            sums = [torch.einsum("i,i...->...", c, g) for g in gs]
        for p in self.params:
            p.grad_sample = None  # type: ignore[attr-defined]
            p.grad = None
        return sums

    def close(self) -> None:
        self.module._close()


class _HookClipper:
    """Clipped sums of one physical batch from :class:`~privrepro.training.per_sample.PerSampleClipper`."""

    def __init__(self, model: nn.Module, params: list[nn.Parameter], exact: bool = False) -> None:
        self.module = model
        self.clipper = PerSampleClipper(model, params, exact=exact)

    def clipped_sums(self, loss: Tensor, batch: int, clip: float) -> list[Tensor]:
        norms = self.clipper.norms(loss, batch)
        return self.clipper.weighted_sums(clip_factors(norms, clip))

    def close(self) -> None:
        self.clipper.close()


def _clipper(engine: str, model: nn.Module, params: list[nn.Parameter], exact: bool) -> Any:
    if engine == "opacus" or (engine == "auto" and unsupported_modules(model)):
        return _OpacusClipper(model, params, exact)
    return _HookClipper(model, params, exact)


def _clipped_chunk(
    clipper: Any,
    forward: Callable[[nn.Module, Tensor], Tensor],
    xb: Tensor,
    yb: Tensor,
    clip: float,
    precision: str,
    device: torch.device,
) -> tuple[list[Tensor], Tensor]:
    """One physical chunk of a DP-SGD step: the forward at ``precision``, the summed
    cross-entropy, and the clipped per-sample gradients summed (exact float32); returns those
    sums and the loss."""
    with compute_precision(precision, device):
        logits = forward(clipper.module, xb)
    loss = nn.functional.cross_entropy(widened(logits), yb, reduction="sum")
    with backward_precision(precision):
        parts = clipper.clipped_sums(loss, xb.shape[0], clip)
    return parts, loss


def train_dpsgd(
    model: nn.Module,
    x: Rows,
    y: Tensor,
    hp: DPSGDHyper,
    *,
    generator: torch.Generator,
    physical_batch: int = 256,
    composition: str = "parallel",
    privacy: PrivacyRecord | None = None,
    loops: Loops = PLAIN,
    forward: Callable[[nn.Module, Tensor], Tensor] | None = None,
    engine: str = "auto",
    log_metric: MetricLogger | None = None,
    precision: str = "fp32",
) -> TrainLog:
    """DP-SGD (Adam) on the trainable parameters of ``model`` with per-sample clipping.

    Args:
        model: a module; only parameters with ``requires_grad`` are trained (FiLM: LayerNorm
            affine + head).
        x, y: the run's data: ``x`` a tensor on the model's device or rows gathered to it one
            physical chunk at a time (:mod:`privrepro.training.rows`); ``y`` holds class
            indices of the output, on the model's device.
        hp: hyperparameters; σ is calibrated from ``hp.epsilon`` unless ``privacy`` is given.
        generator: the stream for Poisson sampling and noise (one run = one stream).
        physical_batch: per-sample gradients are materialised this many samples at a time
            (opacus' BatchMemoryManager idea); the logical batch stays the Poisson batch.
        loops: runs the optimiser steps (``"dp-sgd steps"``; :mod:`privrepro.loops`), each
            Poisson batch whole unless ``loops`` sizes it.
        forward: ``forward(module, xb) -> logits`` (default: ``module(xb)``).
        engine: the per-sample gradients' source: ``"privrepro"``
            (:class:`~privrepro.training.per_sample.PerSampleClipper`), ``"opacus"``
            (``GradSampleModule``), or ``"auto"``: privrepro when it supports every trainable
            module. Both give the same clipped sums up to summation order, the same draws.
        log_metric: ``log(name, value, step)`` after each step (:mod:`privrepro.metrics`):
            ``loss`` (the batch's mean cross-entropy) every step, ``epsilon_spent`` (ε of the
            steps so far, the run's accountant) at :func:`epsilon_log_steps`.
        precision: the model's forward and backward in ``"fp32"`` (default), ``"tf32"`` or
            ``"bf16"`` (:mod:`privrepro.training.precision`); the per-sample norms, clipping,
            sums and noise stay exact float32 whatever it is.
    """
    if engine not in ENGINES:
        raise ConfigError("engine", engine, f"must be one of {ENGINES}")
    check_precision(precision)
    n = num_rows(x)
    rec = privacy or privacy_record(n, hp, composition)
    q, steps = rec.sample_rate, rec.steps
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ConfigError("model", type(model).__name__, "has no trainable parameters")
    opt = torch.optim.Adam(params, lr=hp.lr)
    if steps == 0:
        return TrainLog(rec, 0, 0.0, math.nan)
    clipper = _clipper(engine, model, params, exact=precision != "fp32")
    fwd = forward or (lambda m, xb: m(xb))
    device = params[0].device
    noise_std = rec.noise_multiplier * (hp.clip if math.isfinite(hp.clip) else 0.0)
    expected = q * n
    loop = loops(range(steps), "dp-sgd steps")
    total_b, last = 0, math.nan
    eps_at = epsilon_log_steps(steps) if log_metric is not None else frozenset()
    try:
        for step in loop:
            idx = poisson_batch(n, q, generator)
            total_b += idx.numel()
            idx = idx[: loops.item_size(idx.numel())]  # the whole batch, unless ``loops`` sizes it
            sums = [torch.zeros_like(p) for p in params]
            loss_acc = 0.0
            for chunk in _chunks(idx, physical_batch):
                xb, yb = gather_rows(x, chunk), y[chunk]
                parts, loss = _clipped_chunk(clipper, fwd, xb, yb, hp.clip, precision, device)
                for s, part in zip(sums, parts, strict=True):
                    s.add_(part)
                loss_acc += float(loss.detach())
            for p, s in zip(params, sums, strict=True):
                p.grad = noisy_mean_gradient(s, noise_std, expected, generator)
            opt.step()
            opt.zero_grad(set_to_none=True)
            if idx.numel():
                last = loss_acc / idx.numel()
            if log_metric is not None:
                _log_step(log_metric, step + 1, last, rec, hp, eps_at)
    finally:
        clipper.close()
    return TrainLog(rec, steps, total_b / steps, last)


def train_linear_head(
    head: nn.Linear,
    feats: Tensor,
    y: Tensor,
    hp: DPSGDHyper,
    *,
    generator: torch.Generator,
    composition: str = "parallel",
    privacy: PrivacyRecord | None = None,
    loops: Loops = PLAIN,
    log_metric: MetricLogger | None = None,
    precision: str = "fp32",
) -> TrainLog:
    """DP-SGD (Adam) of a softmax-linear head on fixed features, per-sample norms in closed form.

    Same step rule as :func:`train_dpsgd` (Poisson batch, clip, noise, divide by ``q n``, Adam),
    with the clipped sum ``((P − Y) ⊙ c)ᵀ [X, 1]`` computed in one matmul. ``precision``: the
    logits' matmul (:mod:`privrepro.training.precision`); the norms and the clipped sum are
    exact float32 from the float32 features whatever it is. ``log_metric`` as there (the loss
    of a step is read off the logits the step computed).
    """
    check_precision(precision)
    n = int(feats.shape[0])
    rec = privacy or privacy_record(n, hp, composition)
    q, steps = rec.sample_rate, rec.steps
    params = [head.weight] + ([head.bias] if head.bias is not None else [])
    opt = torch.optim.Adam(params, lr=hp.lr)
    if steps == 0:
        return TrainLog(rec, 0, 0.0, math.nan)
    noise_std = rec.noise_multiplier * (hp.clip if math.isfinite(hp.clip) else 0.0)
    expected = q * n
    loop = loops(range(steps), "dp-sgd steps")
    total_b = 0
    last_batch: tuple[Tensor, Tensor] | None = None  # the loss is read off the last batch only
    eps_at = epsilon_log_steps(steps) if log_metric is not None else frozenset()
    for step in loop:
        idx = poisson_batch(n, q, generator)
        total_b += idx.numel()
        xb, yb = feats[idx], y[idx]
        with torch.no_grad(), exact_arithmetic(precision != "fp32"):
            with compute_precision(precision, feats.device):
                logits = widened(head(xb))
            p = torch.softmax(logits, dim=1)
            resid = p - nn.functional.one_hot(yb, head.out_features).to(p.dtype)
            norms = (
                resid.norm(dim=1)
                * ((xb * xb).sum(1) + (1.0 if head.bias is not None else 0.0)).sqrt()
            )
            g = resid * clip_factors(norms, hp.clip)[:, None]
            grads = [g.T @ xb] + ([g.sum(0)] if head.bias is not None else [])
            for par, gr in zip(params, grads, strict=True):
                par.grad = noisy_mean_gradient(gr, noise_std, expected, generator)
            if idx.numel():
                last_batch = logits, yb
            if log_metric is not None:
                loss = float(nn.functional.cross_entropy(logits, yb)) if idx.numel() else math.nan
                _log_step(log_metric, step + 1, loss, rec, hp, eps_at)
        opt.step()
        opt.zero_grad(set_to_none=True)
    last = math.nan
    if last_batch is not None:
        with torch.no_grad():
            last = float(nn.functional.cross_entropy(*last_batch))
    return TrainLog(rec, steps, total_b / steps, last)
