"""Accuracy of the Gaussian IP mechanisms over an (α, ε) grid, as tidy rows (ip paper, Figs. 3–6).

The engine of the ip figures, usable from plain Python: at each point (α, ε) of a grid, σ is
calibrated for {(ε, δ), α} (:func:`~privrepro.inference.calibration.calibrate`), and the
classifier's accuracy under the mechanism is measured over ``n_draws`` seeded noise draws
(:mod:`privrepro.inference.evaluate`: the same draws serve every σ of the grid).

More in ``docs/modules.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
from numpy.typing import NDArray
from torch import Tensor, nn

from privrepro.inference.basemodels import BaseModel
from privrepro.inference.calibration import Calibration, calibrate, lipschitz_for_mode
from privrepro.inference.data import ImageData
from privrepro.inference.evaluate import Evaluation, gauss_input_accuracy, gauss_output_accuracy
from privrepro.inference.networks import lipschitz_bound
from privrepro.inference.noisy_finetuning import TunedModel, noise_space_of, select_tuned
from privrepro.seeding import torch_stream

__all__ = [
    "SERIES",
    "SERIES_LABEL",
    "Point",
    "accuracy_rows",
    "calibrate_points",
    "gauss_input_sweep",
    "gauss_output_sweep",
    "resnet_series",
    "sll_series",
    "tuned_sweep",
]

Point = tuple[float, float]
"""One grid point (α, ε)."""

SERIES = ("sll_output", "sll_input", "resnet", "resnet_tune")
SERIES_LABEL = {
    "sll_output": "SLL Gauss-Output",
    "sll_input": "SLL Gauss-Input",
    "resnet": "ResNet Gauss-Input",
    "resnet_tune": "ResNet Tune Gauss-Input",
}


def calibrate_points(
    points: Sequence[Point], delta: float, mode: str, mu: float = 1.0
) -> list[Calibration]:
    """σ at each (α, ε) for the sensitivity Δ = α μ (μ = 1: Gauss-Input, or the notebooks' SLL)."""
    return [calibrate(e, delta, a * mu, mode) for a, e in points]


def accuracy_rows(
    points: Sequence[Point],
    calibrations: Sequence[Calibration],
    accuracy: NDArray[np.float64],
    series: str,
    mode: str,
    mu: float,
    dataset: str,
    noise_space: str,
    extra: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """The tidy rows of one series (the columns in ``docs/modules.md``); ``accuracy`` is
    ``[len(points), n_draws]``, one column per draw."""
    df = pd.DataFrame(
        {
            "dataset": dataset,
            "series": series,
            "mode": mode,
            "alpha": [a for a, _ in points],
            "epsilon": [e for _, e in points],
            "delta": [c.delta for c in calibrations],
            "sigma": [c.sigma for c in calibrations],
            "calibration": [c.rule for c in calibrations],
            "mu": mu,
            "true_delta": [c.true_delta for c in calibrations],
            "accuracy": accuracy.mean(1),
            "accuracy_std": accuracy.std(1),
            "n_draws": accuracy.shape[1],
        }
    )
    for k, v in (extra or {}).items():
        df[k] = v
    df["noise_space"] = noise_space
    return df


def gauss_output_sweep(
    logits: Tensor,
    labels: Tensor,
    points: Sequence[Point],
    ev: Evaluation,
    generator: torch.Generator,
    *,
    mu: float = 1.0,
    dataset: str = "",
    series: str = "sll_output",
    extra: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Gauss-Output (ip paper, Def. 4) on a classifier's clean ``logits``: argmax(C(x) + Z), Z ~
    N(0, σ²) with σ calibrated for Δ = α μ at each point, ``ev.n_draws`` draws from ``generator``.

    ``mu`` is the ℓ2 Lipschitz bound μ_C of the logits
    (:func:`~privrepro.inference.networks.lipschitz_bound`; the notebooks take 1 for SLL, see
    :func:`~privrepro.inference.calibration.lipschitz_for_mode`).
    """
    cals = calibrate_points(points, ev.delta, ev.mode, mu)
    sigmas = [c.sigma for c in cals]
    acc = gauss_output_accuracy(logits, labels, sigmas, ev.n_draws, generator)
    return accuracy_rows(points, cals, acc, series, ev.mode, mu, dataset, "pixel", extra)


def gauss_input_sweep(
    model: nn.Module,
    images: Tensor,
    labels: Tensor,
    points: Sequence[Point],
    ev: Evaluation,
    generator: torch.Generator,
    *,
    noise_space: str = "pixel",
    dataset: str = "",
    series: str = "sll_input",
    extra: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Gauss-Input (ip paper, Def. 5): C(x + Z), Z ~ N(0, σ²) on the inputs, σ calibrated for
    Δ = α at each point, ``ev.n_draws`` draws from ``generator``.

    ``images`` are pixel-space, N×C×H×W in [0, 1]. ``noise_space``: ``"pixel"`` (α measured on
    the images) or ``"normalized"`` (on the normalised tensor, as the notebooks for ResNet-18;
    :func:`~privrepro.inference.noisy_finetuning.noise_space_of` gives a mode's choice).
    """
    cals = calibrate_points(points, ev.delta, ev.mode)
    sigmas = [c.sigma for c in cals]
    acc = gauss_input_accuracy(
        model,
        images,
        labels,
        sigmas,
        ev.n_draws,
        generator,
        noise_space,
        ev.batch_size,
        ev.device,
        ev.loops,
    )
    return accuracy_rows(points, cals, acc, series, ev.mode, 1.0, dataset, noise_space, extra)


def tuned_sweep(
    family: Sequence[TunedModel],
    data: ImageData,
    points: Sequence[Point],
    ev: Evaluation,
    generator_for: Callable[[str], torch.Generator],
    *,
    dataset: str = "",
) -> pd.DataFrame:
    """ "ResNet Tune": Gauss-Input on the tuned model chosen at each point
    (:func:`~privrepro.inference.noisy_finetuning.select_tuned`: on the test set in ``repo_compat``, as the
    notebooks; on the validation split in ``corrected``), noise in the mode's
    :func:`~privrepro.inference.noisy_finetuning.noise_space_of`.

    ``generator_for(name)`` gives the seeded generator of a named stream (``"tune-test"``,
    ``"tune-val"``). Extra columns: ``tuned_eps_target``, ``tuned_eps_train``, ``selection``.
    """
    cals = calibrate_points(points, ev.delta, ev.mode)
    models = [t.model for t in family]
    chosen, acc = select_tuned(
        models,
        [c.sigma for c in cals],
        ev.mode,
        data.x_val,
        data.y_val,
        data.x_test,
        data.y_test,
        ev.n_draws,
        generator_for,
        ev.device,
        ev.batch_size,
        ev.loops,
    )
    selection = "test set" if ev.mode == "repo_compat" else "validation split"
    extra = {
        "tuned_eps_target": [family[i].eps_target for i in chosen],
        "tuned_eps_train": [family[i].eps_train for i in chosen],
        "selection": [selection] * len(points),
    }
    space = noise_space_of(ev.mode)
    return accuracy_rows(points, cals, acc, "resnet_tune", ev.mode, 1.0, data.name, space, extra)


def sll_series(
    base: BaseModel,
    data: ImageData,
    points: Sequence[Point],
    ev: Evaluation,
    generator_for: Callable[[str], torch.Generator],
    seed: int,
    power_iterations: int = 100,
    with_input: bool = True,
) -> pd.DataFrame:
    """The SLL series of the paper on ``data``'s test set: ``sll_output`` (Gauss-Output on the
    cached clean logits, μ_C by :func:`~privrepro.inference.calibration.lipschitz_for_mode`) and,
    ``with_input``, ``sll_input`` (Gauss-Input in pixel space).

    μ_C's bound (:func:`~privrepro.inference.networks.lipschitz_bound`, power iteration seeded
    by ``(seed, "ip-mu", base.key)``) and the clean accuracy are columns ``mu_bound`` and
    ``clean_accuracy`` of every row. Noise streams: ``generator_for("noise-output")`` and
    ``generator_for("noise-input")``.
    """
    mu_gen = torch_stream(seed, "ip-mu", base.key)
    mu_bound = lipschitz_bound(base.model, data.shape, mu_gen, power_iterations)
    extra = {"mu_bound": mu_bound, "clean_accuracy": base.clean_accuracy}
    logits, mu = base.test_logits.to(ev.device), lipschitz_for_mode(ev.mode, mu_bound)
    noise = generator_for("noise-output")
    frames = [
        gauss_output_sweep(
            logits, data.y_test, points, ev, noise, mu=mu, dataset=data.name, extra=extra
        )
    ]
    if with_input:
        x, y, noise = data.x_test, data.y_test, generator_for("noise-input")
        frames.append(
            gauss_input_sweep(base.model, x, y, points, ev, noise, dataset=data.name, extra=extra)
        )
    return pd.concat(frames, ignore_index=True)


def resnet_series(
    base: BaseModel,
    data: ImageData,
    points: Sequence[Point],
    ev: Evaluation,
    generator_for: Callable[[str], torch.Generator],
) -> pd.DataFrame:
    """The ``resnet`` series: Gauss-Input on ``base`` over ``data``'s test set, noise in the
    mode's :func:`~privrepro.inference.noisy_finetuning.noise_space_of` (stream ``"noise-input"``), the
    clean accuracy in column ``clean_accuracy``."""
    x, y, noise = data.x_test, data.y_test, generator_for("noise-input")
    space, extra = noise_space_of(ev.mode), {"clean_accuracy": base.clean_accuracy}
    return gauss_input_sweep(
        base.model,
        x,
        y,
        points,
        ev,
        noise,
        noise_space=space,
        dataset=data.name,
        series="resnet",
        extra=extra,
    )
