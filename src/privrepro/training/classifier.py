"""A plain supervised training loop for torch classifiers, with injected randomness.

Nothing here is specific to a paper: the loop shuffles with a ``torch.Generator``, optionally
turns each batch into several (e.g. a noisy and a clean copy), optionally selects the state with
the lowest validation loss, and can run in *statistics-only* mode — train-mode forward passes
with no parameter update, so only BatchNorm running statistics change.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from privrepro.loops import PLAIN, Loops

__all__ = [
    "TrainConfig",
    "TrainResult",
    "accuracy",
    "predict_logits",
    "seeded_build",
    "train_classifier",
]

BatchTransform = Callable[[Tensor, Tensor, torch.Generator], list[tuple[Tensor, Tensor]]]


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters of :func:`train_classifier`.

    ``optimizer``: ``"adam"`` (``betas``) or ``"sgd"`` (``momentum``); ``weight_decay``: L2;
    ``schedule``: ``"constant"`` or ``"cosine"`` (per step, to 0); ``update_parameters=False``:
    train-mode forward passes, no step; ``keep_best_val``: keep the state with the lowest
    validation loss (ties go to the later one).
    """

    epochs: int = 10
    batch_size: int = 128
    lr: float = 1e-3
    optimizer: str = "adam"
    betas: tuple[float, float] = (0.9, 0.999)
    momentum: float = 0.9
    weight_decay: float = 0.0
    schedule: str = "constant"
    update_parameters: bool = True
    keep_best_val: bool = False

    def __post_init__(self) -> None:
        from privrepro.config.validation import ConfigError

        if self.epochs < 0:
            raise ConfigError("epochs", self.epochs, "must lie in [0, inf)")
        if self.batch_size < 1:
            raise ConfigError("batch_size", self.batch_size, "must lie in [1, inf)")
        if not self.lr > 0:
            raise ConfigError("lr", self.lr, "must lie in (0, inf)")
        if self.optimizer not in ("adam", "sgd"):
            raise ConfigError("optimizer", self.optimizer, "must be one of ['adam', 'sgd']")
        if self.schedule not in ("constant", "cosine"):
            raise ConfigError("schedule", self.schedule, "must be one of ['constant', 'cosine']")


@dataclass
class TrainResult:
    """Per-epoch mean training loss, validation loss (if any) and the epoch kept."""

    train_loss: list[float]
    val_loss: list[float]
    best_epoch: int | None


def seeded_build(build: Callable[[], nn.Module], generator: torch.Generator) -> nn.Module:
    """Build a module whose default initialisation draws from ``generator``'s seed.

    Layer constructors use torch's global generator; it is forked, seeded from ``generator`` and
    restored, so nothing outside this call sees a changed global state.
    """
    seed = int(torch.randint(0, 2**62, (1,), generator=generator).item())
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


def _batches(n: int, batch_size: int, generator: torch.Generator | None) -> Iterator[Tensor]:
    order = torch.randperm(n, generator=generator) if generator is not None else torch.arange(n)
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


@torch.no_grad()
def predict_logits(
    model: nn.Module, x: Tensor, batch_size: int = 512, device: str = "cpu", loops: Loops = PLAIN
) -> Tensor:
    """The model's outputs on ``x`` in eval mode, batched, returned on the CPU (every batch,
    unless ``loops`` (:mod:`privrepro.loops`) shortens the loop and sizes its batches)."""
    model.eval()
    outs = []
    for i in loops(range(0, len(x), batch_size), "predict batches"):
        j = i + loops.item_size(min(batch_size, len(x) - i))
        outs.append(model(x[i:j].to(device)).float().cpu())
    return loops.full_rows(torch.cat(outs), len(x)) if outs else torch.empty(0)


def accuracy(
    model: nn.Module, x: Tensor, y: Tensor, batch_size: int = 512, device: str = "cpu"
) -> float:
    """Top-1 accuracy of ``model`` on ``(x, y)``."""
    return float((predict_logits(model, x, batch_size, device).argmax(1) == y.cpu()).float().mean())


def _optimizer(params: Iterable[nn.Parameter], cfg: TrainConfig) -> torch.optim.Optimizer:
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)
    return torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)


def train_classifier(
    model: nn.Module,
    x: Tensor,
    y: Tensor,
    cfg: TrainConfig,
    generator: torch.Generator,
    device: str = "cpu",
    loss_fn: Callable[[Tensor, Tensor], Tensor] | None = None,
    batch_transform: BatchTransform | None = None,
    val_loss: Callable[[nn.Module], float] | None = None,
    loops: Loops = PLAIN,
) -> TrainResult:
    """Train ``model`` in place on ``(x, y)``.

    Args:
        model: the classifier (moved to ``device``).
        x, y: training inputs and integer labels (CPU tensors; batches are moved to ``device``).
        cfg: hyper-parameters.
        generator: a CPU generator for the shuffling (and passed to ``batch_transform``).
        loss_fn: ``(logits, labels) -> loss``; cross-entropy by default.
        batch_transform: turns one batch into the list of batches to step on (e.g. a noisy and
            a clean copy); it receives ``generator``.
        val_loss: a function of the model giving the validation loss after each epoch; with
            ``cfg.keep_best_val`` the state with the lowest one (``≤`` the running minimum) is
            restored at the end.
        loops: runs the epoch loop and each epoch's batch loop (e.g. ``ctx.loops``: bars with
            an ETA; :mod:`privrepro.loops`).
    """
    loss_fn = loss_fn or F.cross_entropy
    model.to(device)
    opt = _optimizer(model.parameters(), cfg) if cfg.update_parameters else None
    steps = cfg.epochs * -(-len(x) // cfg.batch_size)
    sched = (
        torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(steps, 1))
        if opt is not None and cfg.schedule == "cosine"
        else None
    )
    result = TrainResult([], [], None)
    best_state: dict[str, Tensor] | None = None
    best = float("inf")
    for epoch in loops(range(cfg.epochs), "epochs"):
        model.train()
        total, count = 0.0, 0
        # the epoch's batches: one permutation, drawn now
        for idx in loops(list(_batches(len(x), cfg.batch_size, generator)), "batches"):
            idx = idx[: loops.item_size(len(idx))]  # the whole batch, unless ``loops`` sizes it
            xb, yb = x[idx], y[idx]
            pieces = batch_transform(xb, yb, generator) if batch_transform else [(xb, yb)]
            for xp, yp in pieces:
                xp, yp = xp.to(device), yp.to(device)
                if opt is None:
                    with torch.no_grad():
                        loss = loss_fn(model(xp), yp)
                else:
                    opt.zero_grad(set_to_none=True)
                    loss = loss_fn(model(xp), yp)
                    loss.backward()
                    opt.step()
                total += float(loss.detach()) * len(yp)
                count += len(yp)
            if sched is not None:
                sched.step()
        result.train_loss.append(total / max(count, 1))
        if val_loss is not None:
            v = float(val_loss(model))
            result.val_loss.append(v)
            if cfg.keep_best_val and v <= best:
                best, result.best_epoch = v, epoch
                best_state = copy.deepcopy(model.state_dict())
    if cfg.keep_best_val and best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return result
