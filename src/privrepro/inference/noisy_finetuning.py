""" "ResNet Tune": fine-tuning a base classifier on noisy inputs, and picking a tuned model per point.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from privrepro.inference.basemodels import BaseModel, load_cached_state, save_state, spec_key
from privrepro.inference.calibration import MODES, gauss_input_sigma
from privrepro.inference.data import ImageData
from privrepro.inference.evaluate import Evaluation, gauss_input_accuracy
from privrepro.inference.networks import NormalizedNet
from privrepro.loops import PLAIN, Loops
from privrepro.seeding import torch_stream
from privrepro.training.classifier import TrainConfig, train_classifier

__all__ = [
    "MODES",
    "TuneGrid",
    "TunedModel",
    "fine_tune_noisy",
    "noise_space_of",
    "select_tuned",
    "tuned_family",
]


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
    loops: Loops = PLAIN,
) -> tuple[NormalizedNet, list[float]]:
    """A copy of ``base`` fine-tuned on noisy + clean batches; returns it and its val losses.

    In ``repo_compat`` mode ``cfg.update_parameters`` is forced off (statistics only), as the
    notebooks' detached optimiser did; the validation noise is drawn once, as there. ``loops``
    runs the epochs, batches and validation batches (:mod:`privrepro.loops`).
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
        # every batch, unless ``loops`` shortens the loop and sizes its batches
        for i in loops(range(0, len(x_val_noisy), 500), "validation batches"):
            j = i + loops.item_size(min(500, len(x_val_noisy) - i))
            logits = m(x_val_noisy[i:j].to(device))
            total += float(F.cross_entropy(logits, y_val[i:j].to(device), reduction="sum"))
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
        loops=loops,
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
    loops: Loops = PLAIN,
) -> tuple[np.ndarray, np.ndarray]:
    """For each σ: the index of the chosen tuned model and its per-draw test accuracy.

    ``repo_compat``: the model with the highest mean test accuracy (the notebooks' max over
    models on the test set). ``corrected``: the model with the highest mean validation accuracy,
    reported on the test set. Returns ``(chosen [S], accuracy [S, n_draws])``.
    ``generator_for(name)`` gives the seeded generator of a named stream; every model sees the
    same test noise (stream ``"tune-test"``) so their comparison is on equal draws. ``loops``
    runs the models' evaluations (:mod:`privrepro.loops`).
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
            loops,
        )

    if mode == "repo_compat":
        tests = np.stack([test_acc(m) for m in loops(models, "tuned model tests")])  # [M, S, D]
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
                loops,
            )
            for m in loops(models, "tuned model validations")  # all, unless ``loops`` cuts it
        ]
    )
    chosen = vals.mean(2).argmax(0)
    picked = {int(i): test_acc(models[int(i)]) for i in np.unique(chosen)}  # test only the chosen
    return chosen, np.stack([picked[int(i)][j] for j, i in enumerate(chosen)])


@dataclass(frozen=True)
class TuneGrid:
    """The noisy fine-tuning grid of "ResNet Tune" and its recipe (the notebooks' defaults).

    Models are tuned for every target ε_t in ``eps_targets`` and training budget
    ε_train = m · ε_t for m in ``multipliers``, at the radius ``alpha_target``; each trains
    ``epochs`` epochs of Adam (``lr``) on batches of ``batch_size``.
    """

    eps_targets: Sequence[float] = (0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 2.75, 3.0)
    multipliers: Sequence[float] = (0.25, 0.5, 0.85, 1.0, 1.15, 2.0)
    alpha_target: float = 0.1
    epochs: int = 11
    batch_size: int = 500
    lr: float = 1e-3


class TunedModel(NamedTuple):
    """One model of the tuned family: its target budget, its training budget, the model."""

    eps_target: float
    eps_train: float
    model: NormalizedNet


def tuned_family(
    base: BaseModel,
    data: ImageData,
    grid: TuneGrid,
    ev: Evaluation,
    cache_dir: str | Path,
    seed: int,
) -> list[TunedModel]:
    """The fine-tuned copies of ``base`` over ``grid`` (:func:`fine_tune_noisy`), each cached.

    σ_train and σ_target are the classical Gauss-Input σ at (ε_train, δ) and (ε_t, δ) for
    ``grid.alpha_target``, δ and the mode from ``ev``. A model is cached under
    ``<cache_dir>/ip/tune-<key>/``, ``key`` hashing the base model's spec, ``seed``, the grid, the
    mode, δ and the point; it is trained from the stream ``(seed, "ip-tune", key)``, so every
    figure (and every notebook) asking for it gets the same one.
    """
    from filelock import FileLock

    delta, mode, device = ev.delta, ev.mode, ev.device
    cfg = TrainConfig(epochs=grid.epochs, batch_size=grid.batch_size, lr=grid.lr)
    points = [(et, et * m) for et in grid.eps_targets for m in grid.multipliers]
    out = []
    for eps_t, eps_tr in ev.loops(points, f"tuned models ({mode})"):
        key = spec_key(
            base.spec,
            seed,
            {
                "tune": asdict(grid),
                "mode": mode,
                "eps_target": eps_t,
                "eps_train": eps_tr,
                "delta": delta,
            },
        )
        folder = Path(cache_dir) / "ip" / f"tune-{key}"
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(folder / ".lock")):
            model = copy.deepcopy(base.model)
            if not load_cached_state(model, folder / "model.pt"):  # absent, or damaged: set aside
                sigma_train = float(gauss_input_sigma(eps_tr, delta, grid.alpha_target))
                sigma_target = float(gauss_input_sigma(eps_t, delta, grid.alpha_target))
                gen = torch_stream(seed, "ip-tune", key, device="cpu")
                model, _ = fine_tune_noisy(
                    base.model,
                    data.x_train,
                    data.y_train,
                    data.x_val,
                    data.y_val,
                    sigma_train,
                    sigma_target,
                    mode,
                    cfg,
                    gen,
                    device,
                    loops=ev.loops,
                )
                save_state(model, folder / "model.pt")
        out.append(TunedModel(eps_t, eps_tr, model.to(device).eval()))
    if out and len(out) < len(points) and ev.loops.truncates:
        # ``ev.loops`` shortened the loop: the models it did not tune are the tuned ones again
        # (placeholders), so that the selection after it runs over the full family
        out += [
            TunedModel(et, etr, out[i % len(out)].model)
            for i, (et, etr) in enumerate(points[len(out) :])
        ]
    return out
