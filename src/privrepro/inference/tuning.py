""" "ResNet Tune": fine-tuning a base classifier on noisy inputs, and picking a tuned model per point.

ip paper, Sec. V: "we conduct a grid search by fine-tuning the pre-trained model with images
subjected to varying privacy levels to identify the best fine-tuned model with highest accuracy
when validated at targeted privacy requirement". The notebooks' grid: targets ε_t ∈ {0.5, …, 3}
at α_t = 0.1, training budgets ε_train = m·ε_t for m ∈ {0.25, 0.5, 0.85, 1, 1.15, 2}; each
training batch is used twice, once with Gauss-Input noise at σ(ε_train) and once clean; the
checkpoint with the lowest loss on the validation split noised at σ(ε_t) is kept.

Two modes (the note, "[REPO] protocol"):

``repo_compat``
    What the notebooks did. Their optimiser is bound to another model object, so no parameter is
    ever updated: only BatchNorm running statistics move (train-mode forward passes). Noise lives
    in the normalised space. At evaluation the best tuned model is chosen *on the test set*.
``corrected``
    Real fine-tuning (Adam steps), noise in pixel space (the radius α is the same for every
    model), the tuned model chosen on the validation split.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from privrepro.inference.evaluate import gauss_input_accuracy
from privrepro.inference.networks import NormalizedNet
from privrepro.training.classifier import TrainConfig, train_classifier

__all__ = ["MODES", "fine_tune_noisy", "noise_space_of", "select_tuned"]

MODES = ("repo_compat", "corrected")


def noise_space_of(mode: str) -> str:
    """Where Gauss-Input noise is added to a ResNet under ``mode``."""
    if mode not in MODES:
        from privrepro.config.validation import ConfigError

        raise ConfigError("mode", mode, f"must be one of {list(MODES)}")
    return "normalized" if mode == "repo_compat" else "pixel"


def _noisy(
    x: Tensor, sigma: float, generator: torch.Generator, model: NormalizedNet, space: str
) -> Tensor:
    """Pixel images plus Gauss-Input noise of std σ in ``space`` (returned in pixel space)."""
    z = torch.randn(x.shape, generator=generator)
    if space == "normalized":
        # noise of std σ in the normalised space = σ·std in pixel space
        return x + sigma * z * model.std.cpu()
    return x + sigma * z


def fine_tune_noisy(
    base: NormalizedNet,
    x_train: Tensor,
    y_train: Tensor,
    x_val: Tensor,
    y_val: Tensor,
    sigma_train: float,
    sigma_target: float,
    mode: str,
    cfg: TrainConfig,
    generator: torch.Generator,
    device: str = "cpu",
    progress: Callable[[Iterable[Any], str], Iterable[Any]] | None = None,
) -> tuple[NormalizedNet, list[float]]:
    """A copy of ``base`` fine-tuned on noisy + clean batches; returns it and its val losses.

    In ``repo_compat`` mode ``cfg.update_parameters`` is forced off (statistics only), as the
    notebooks' detached optimiser did; the validation noise is drawn once, as there.
    """
    space = noise_space_of(mode)
    model = copy.deepcopy(base).cpu()
    cfg = TrainConfig(
        **{**cfg.__dict__, "update_parameters": mode != "repo_compat", "keep_best_val": True}
    )

    def both(xb: Tensor, yb: Tensor, g: torch.Generator) -> list[tuple[Tensor, Tensor]]:
        return [(_noisy(xb, sigma_train, g, model, space), yb), (xb, yb)]

    x_val_noisy = _noisy(x_val, sigma_target, generator, model, space)

    @torch.no_grad()
    def val_loss(m: torch.nn.Module) -> float:
        m.eval()
        total = 0.0
        for i in range(0, len(x_val_noisy), 500):
            logits = m(x_val_noisy[i : i + 500].to(device))
            total += float(F.cross_entropy(logits, y_val[i : i + 500].to(device), reduction="sum"))
        m.train()
        return total / max(len(x_val_noisy), 1)

    res = train_classifier(
        model,
        x_train,
        y_train,
        cfg,
        generator,
        device,
        batch_transform=both,
        val_loss=val_loss,
        progress=progress,
    )
    model.eval()
    return model, res.val_loss


def select_tuned(
    models: Sequence[NormalizedNet],
    sigmas: Sequence[float],
    mode: str,
    x_val: Tensor,
    y_val: Tensor,
    x_test: Tensor,
    y_test: Tensor,
    n_draws: int,
    generator_for: Callable[[str], torch.Generator],
    device: str = "cpu",
    batch_size: int = 500,
) -> tuple[np.ndarray, np.ndarray]:
    """For each σ: the index of the chosen tuned model and its per-draw test accuracy.

    ``repo_compat``: the model with the highest mean test accuracy (the notebooks' max over
    models on the test set). ``corrected``: the model with the highest mean validation accuracy,
    reported on the test set. Returns ``(chosen [S], accuracy [S, n_draws])``.
    ``generator_for(name)`` gives the seeded generator of a named stream; every model sees the
    same test noise (stream ``"tune-test"``) so their comparison is on equal draws.
    """
    space = noise_space_of(mode)

    def test_acc(m: NormalizedNet) -> np.ndarray:
        return gauss_input_accuracy(
            m,
            x_test,
            y_test,
            sigmas,
            n_draws,
            generator_for("tune-test"),
            space,
            batch_size,
            device,
        )

    if mode == "repo_compat":
        tests = np.stack([test_acc(m) for m in models])  # [M, S, D]
        chosen = tests.mean(2).argmax(0)
        return chosen, tests[chosen, np.arange(len(sigmas))]
    vals = np.stack(
        [
            gauss_input_accuracy(
                m,
                x_val,
                y_val,
                sigmas,
                n_draws,
                generator_for("tune-val"),
                space,
                batch_size,
                device,
            )
            for m in models
        ]
    )
    chosen = vals.mean(2).argmax(0)
    picked = {int(i): test_acc(models[int(i)]) for i in np.unique(chosen)}  # test only the chosen
    return chosen, np.stack([picked[int(i)][j] for j, i in enumerate(chosen)])
