"""Making a mechanism PAC-private: Algorithm 1's noise from its outputs, and what the noise costs.

PAC privacy (pac paper, Sec. 4) needs no analysis of the mechanism: sample its outputs on
independent data draws, calibrate Gaussian noise to them (Algorithm 1), and release one more
output with that noise. Two engines, each returning tidy rows (a list of dicts) (more in
``docs/modules.md``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray
from torch import Tensor

from privrepro.config.validation import ConfigError
from privrepro.loops import PLAIN, Loops
from privrepro.pac.algorithms import Algorithm1Result, algorithm1_from_samples
from privrepro.pac.gaussian import anisotropic_noise_norm, dp_local_noise_norm, isotropic_noise_norm
from privrepro.pac.mechanisms import (
    local_publishing_samples,
    local_publishing_spectrum,
    smooth_image_pool,
)
from privrepro.pac.noise import GaussianNoise
from privrepro.pac.training import MLPSpec, mlp_accuracy, train_batched

__all__ = [
    "PrivateTraining",
    "Score",
    "Trainer",
    "make_private",
    "mlp_mechanism",
    "noise_rows",
    "smooth_image_noise",
]

Trainer = Callable[[NDArray[np.int64]], Tensor]
"""A deterministic training mechanism, batched: index sets ``[k, n]`` into a pool in, the ``k``
trained parameter vectors ``[k, P]`` out (:func:`privrepro.pac.training.train_batched`)."""

Score = Callable[[Tensor, NDArray[np.int64]], Tensor]
"""The utility of parameters ``[P]`` (a scalar) or ``[k, P]`` (``[k]``) on the pool indices given,
e.g. their accuracy (:func:`privrepro.pac.training.mlp_accuracy`)."""


def noise_rows(
    samples: ArrayLike,
    v: float,
    beta: float,
    c: float,
    r: float | None = None,
    exact_spectrum: ArrayLike | None = None,
    baseline: tuple[str, float] | None = None,
) -> list[dict[str, Any]]:
    """The noise magnitude ``E||B||`` (bound ``sqrt(Tr Sigma_B)``) for ``MI <= v``, one row per method.

    Rows: ``pac_algorithm1_<branch>`` and ``pac_theorem3_estimated`` from Algorithm 1 on the
    ``m x d`` ``samples`` (with its diagnostics, :meth:`Algorithm1Result.summary`); with
    ``exact_spectrum`` (the eigenvalues of the true output covariance), ``pac_theorem3_exact``
    and ``pac_isotropic_exact``; with ``baseline = (name, E||B||)`` (a DP mechanism), its row and
    the ratio ``dp_over_pac`` = baseline / PAC on every PAC row (NaN without a baseline).

    Args:
        samples: the mechanism's outputs ``M(X^(k))``, ``m x d``.
        v, beta, c, r: Algorithm 1's budget (nats), slack, floor and output radius.
    """
    res = algorithm1_from_samples(samples, v, beta, c, r=r)
    rows = _algorithm1_rows(res)
    if exact_spectrum is not None:
        lam = np.asarray(exact_spectrum, dtype=np.float64)
        exact = {"sum_sqrt_lambda": float(np.sqrt(lam).sum()), "trace_sigma": float(lam.sum())}
        rows += [
            {"method": "pac_theorem3_exact", "noise_norm": anisotropic_noise_norm(lam, v), **exact},
            {"method": "pac_isotropic_exact", "noise_norm": isotropic_noise_norm(lam, v), **exact},
        ]
    dp = baseline[1] if baseline is not None else None
    for row in rows:
        row["dp_over_pac"] = dp / float(row["noise_norm"]) if dp else np.nan
    if baseline is not None:
        rows.append({"method": baseline[0], "noise_norm": baseline[1], "dp_over_pac": 1.0})
    return rows


def smooth_image_noise(
    side: int,
    pool_size: int,
    frequencies: int,
    pixel_noise: float,
    v: float,
    m: int,
    beta: float,
    c: float,
    data_rng: np.random.Generator,
    mc_rng: np.random.Generator,
    loops: Loops = PLAIN,
) -> list[dict[str, Any]]:
    """PAC against local-DP noise for local publishing (Example 2's ``M(x) = x``) of a pool of
    ``pool_size`` synthetic smooth ``side x side`` images (:func:`~privrepro.pac.mechanisms.
    smooth_image_pool`, drawn from ``data_rng``), ``d = side^2``.

    Rows ``side, d, v, method, noise_norm`` for ``MI <= v``: Theorem 3 and the isotropic rule on
    the exact pool covariance, Algorithm 1 as stated on ``m`` draws from ``mc_rng`` (output
    radius ``sqrt(d)``, pixels in [0, 1]; method ``pac_algorithm1 (<branch>)``), and local DP's
    ``d / sqrt(2v)``. The paper: PAC noise follows ``sum_j sqrt(lambda_j)``, DP grows as ``d``.
    """
    d = side * side
    pool = smooth_image_pool(data_rng, pool_size, side, frequencies, pixel_noise=pixel_noise)
    lam = local_publishing_spectrum(pool, loops)
    samples = local_publishing_samples(pool, m, mc_rng)
    res = algorithm1_from_samples(samples, v, beta, c, r=float(np.sqrt(d)))
    norms = {
        "pac_theorem3_exact": anisotropic_noise_norm(lam, v),
        "pac_isotropic_exact": isotropic_noise_norm(lam, v),
        f"pac_algorithm1 ({res.branch})": res.noise.expected_norm_upper,
        "dp_local": dp_local_noise_norm(d, v),
    }
    return [{"side": side, "d": d, "v": v, "method": k, "noise_norm": n} for k, n in norms.items()]


def _algorithm1_rows(res: Algorithm1Result) -> list[dict[str, Any]]:
    """Algorithm 1 as stated (its branch), and Theorem 3's anisotropic noise on its ``λ̂``."""
    base = res.summary()
    return [
        {
            "method": f"pac_algorithm1_{res.branch}",
            "noise_norm": res.noise.expected_norm_upper,
            **base,
        },
        {"method": "pac_theorem3_estimated", "noise_norm": float(np.sqrt(res.ideal_trace)), **base},
    ]


@dataclass(frozen=True)
class PrivateTraining:
    """A trainer made PAC-private by :func:`make_private`.

    Attributes:
        released: ``M(X*)``, the clean parameters trained on the released draw ``X*`` (``[P]``);
            the private release is ``released + B`` with ``B`` one draw of a calibrated noise.
        released_subset: the pool indices of ``X*``.
        held_out: the pool indices outside ``X*`` (all of the pool when ``X*`` is) on which the
            released model is scored.
        outputs: the ``m`` Monte-Carlo outputs ``M(X^(k))`` (``[m, P]``) Algorithm 1 ran on.
        calibrations: Algorithm 1's result per budget ``v``.
        train_seconds: the wall time of the ``m`` trainings.
        rows: one per (budget, noise method), see :func:`make_private`.
    """

    released: Tensor
    released_subset: NDArray[np.int64]
    held_out: NDArray[np.int64]
    outputs: Tensor
    calibrations: dict[float, Algorithm1Result]
    train_seconds: float
    rows: list[dict[str, Any]]

    def noise(self, v: float, method: str = "algorithm1") -> GaussianNoise:
        """The noise for budget ``v``: Algorithm 1's (``"algorithm1"``, with Theorem 4's
        guarantee) or Theorem 3's on the estimated spectrum (``"theorem3_estimated"``)."""
        res = self.calibrations[v]
        if method == "algorithm1":
            return res.noise
        if method == "theorem3_estimated":
            return res.theorem3_plugin()
        raise ConfigError("method", method, "must be one of ['algorithm1', 'theorem3_estimated']")


def make_private(
    trainer: Trainer,
    score: Score,
    pool_size: int,
    subset_size: int,
    m: int,
    vs: Sequence[float],
    data_rng: np.random.Generator,
    noise_rng: np.random.Generator,
    *,
    beta: float = 0.1,
    c: float = 1e-6,
    r: float | None = None,
    noise_draws: int = 20,
    norm_draws: int = 200,
) -> PrivateTraining:
    """Make a deterministic ``trainer`` PAC-private (pac paper, Algorithm 1; Example 4).

    The data distribution ``D`` draws ``subset_size`` of the ``pool_size`` pool items uniformly
    without replacement. ``m + 1`` draws come from ``data_rng``: the first is the released
    ``X*``, the others are the Monte-Carlo draws ``X^(k)``, trained in one ``trainer`` call;
    ``X*`` is trained in a second. For each budget ``v`` in ``vs`` Algorithm 1 calibrates the
    noise on the ``m`` outputs (``beta``, ``c``, ``r``: its slack, floor and output radius).

    Each row (one per budget and noise method, see :func:`noise_rows`) holds the noise
    magnitude (``noise_norm`` = ``sqrt(Tr Sigma_B)``; ``noise_norm_mc`` ± ``noise_norm_mc_se``
    from ``norm_draws`` draws), the held-out utility of ``M(X*)`` clean (``accuracy_clean``) and
    with noise (``accuracy_noisy_mean`` ± ``accuracy_noisy_std`` over ``noise_draws`` draws
    from ``noise_rng``), the Monte-Carlo models' own utility on the whole pool, the training time
    per model, the device, and Algorithm 1's diagnostics.
    """
    if not 1 <= subset_size <= pool_size:
        raise ConfigError("subset_size", subset_size, f"must lie in [1, {pool_size}]")
    if m < 2:
        raise ConfigError("m", m, "must lie in [2, inf) (Algorithm 1 needs at least 2 samples)")
    subsets = np.stack(
        [data_rng.choice(pool_size, subset_size, replace=False) for _ in range(m + 1)]
    )
    released_subset, mc = subsets[0], subsets[1:]
    t0 = time.perf_counter()
    outputs = trainer(mc)
    train_seconds = time.perf_counter() - t0
    released = trainer(released_subset[None])[0]
    held = np.setdiff1d(np.arange(pool_size), released_subset)
    if held.size == 0:
        held = np.arange(pool_size)  # X* is the whole pool: score on the pool itself
    clean = float(score(released, held))
    # diagnostic: the m Monte-Carlo models on the whole pool (their own X^(k) included)
    mc_scores = score(outputs, np.arange(pool_size)).cpu().numpy()
    samples = outputs.double().cpu().numpy()
    calibrations = [(v, algorithm1_from_samples(samples, v, beta, c, r)) for v in vs]
    common = {
        "accuracy_clean": clean,
        "mc_models_pool_accuracy_mean": float(mc_scores.mean()),
        "mc_models_pool_accuracy_min": float(mc_scores.min()),
    }
    rows = []
    for v, res in calibrations:
        for method, noise in (
            (f"pac_algorithm1_{res.branch}", res.noise),
            ("pac_theorem3_estimated", res.theorem3_plugin()),
        ):
            draws = noise.sample(noise_rng, noise_draws)
            noisy = released.unsqueeze(0) + torch.as_tensor(
                draws, dtype=released.dtype, device=released.device
            )
            accs = score(noisy, held).cpu().numpy()
            norm_mc, norm_se = noise.expected_norm(noise_rng, norm_draws)
            rows.append(
                {
                    "v": v,
                    "method": method,
                    "noise_norm": noise.expected_norm_upper,
                    "noise_norm_mc": norm_mc,
                    "noise_norm_mc_se": norm_se,
                    **common,
                    "accuracy_noisy_mean": float(accs.mean()),
                    "accuracy_noisy_std": float(accs.std(ddof=1)) if accs.size > 1 else 0.0,
                    "eval_size": int(held.size),
                    "train_seconds_per_model": train_seconds / m,
                    "device": str(released.device),
                    **{k: val for k, val in res.summary().items() if k != "v"},
                }
            )
    return PrivateTraining(
        released, released_subset, held, outputs, dict(calibrations), train_seconds, rows
    )


def mlp_mechanism(
    spec: MLPSpec, init: Tensor, x: Tensor, y: Tensor, **training: Any
) -> tuple[Trainer, Score]:
    """Example 4's mechanism on the pool ``(x, y)`` (on the training device): full-batch gradient
    descent of the MLP ``spec`` from the fixed ``init`` by :func:`~privrepro.pac.training.
    train_batched` (``training``: its ``steps``, ``lr``, ``chunk``, ``mode``, ``loops``), and
    the accuracy of parameters on pool indices."""

    def train(subsets: NDArray[np.int64]) -> Tensor:
        idx = torch.as_tensor(subsets, device=x.device)
        return train_batched(spec, init, x, y, idx, **training)

    def accuracy(weights: Tensor, index: NDArray[np.int64]) -> Tensor:
        i = torch.as_tensor(index, device=x.device)
        return mlp_accuracy(spec, weights, x[i], y[i])

    return train, accuracy
