"""make_private and noise_rows: the rows are Algorithm 1 on the trainer's outputs, nothing else."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from privrepro.config import ConfigError
from privrepro.pac.algorithms import algorithm1_from_samples
from privrepro.pac.private import make_private, noise_rows

POOL = torch.as_tensor(np.random.default_rng(0).random((60, 3)))


def _mean_trainer(subsets: np.ndarray) -> torch.Tensor:
    """A deterministic 'training': the mean of the subset's points (d = 3)."""
    return POOL[torch.as_tensor(subsets)].mean(dim=1)


def _closeness(weights: torch.Tensor, index: np.ndarray) -> torch.Tensor:
    """A utility in [0, 1]: the share of the indexed points within 0.5 of the output."""
    pts = POOL[torch.as_tensor(index)]
    near = torch.linalg.norm(pts - weights.unsqueeze(-2), dim=-1) < 0.5
    return near.double().mean(dim=-1)


def test_make_private_is_algorithm1_on_the_outputs() -> None:
    rngs = np.random.default_rng(1), np.random.default_rng(2)
    calibration = {"beta": 0.1, "c": 1e-6, "noise_draws": 5}
    res = make_private(_mean_trainer, _closeness, 60, 20, 50, [0.5, 2.0], *rngs, **calibration)
    # X* and the held-out points partition the pool; X* has subset_size distinct points
    assert len(set(res.released_subset)) == 20
    assert sorted([*res.released_subset, *res.held_out]) == list(range(60))
    assert torch.equal(res.released, _mean_trainer(res.released_subset[None])[0])
    # the same draws, in the same order, as an explicit call: m + 1 subsets from data_rng
    rng = np.random.default_rng(1)
    subsets = np.stack([rng.choice(60, 20, replace=False) for _ in range(51)])
    assert np.array_equal(subsets[0], res.released_subset)
    direct = algorithm1_from_samples(_mean_trainer(subsets[1:]).numpy(), 2.0, 0.1, 1e-6)
    rows = {(r["v"], r["method"]): r for r in res.rows}
    assert len(rows) == 4
    alg = rows[(2.0, f"pac_algorithm1_{direct.branch}")]
    assert alg["noise_norm"] == pytest.approx(direct.noise.expected_norm_upper, rel=1e-12)
    # Theorem 3 on λ̂ scales as 1/sqrt(v) exactly (no floor)
    t3 = {v: rows[(v, "pac_theorem3_estimated")]["noise_norm"] for v in (0.5, 2.0)}
    assert t3[0.5] / t3[2.0] == pytest.approx(2.0, rel=1e-12)
    assert alg["accuracy_clean"] == pytest.approx(float(_closeness(res.released, res.held_out)))
    assert alg["eval_size"] == 40 and alg["device"] == "cpu"
    assert res.noise(2.0) is res.calibrations[2.0].noise


def test_make_private_refuses_bad_sizes() -> None:
    rngs = np.random.default_rng(0), np.random.default_rng(1)
    with pytest.raises(ConfigError, match="subset_size"):
        make_private(_mean_trainer, _closeness, 60, 61, 10, [1.0], *rngs)
    with pytest.raises(ConfigError, match="m = 1"):
        make_private(_mean_trainer, _closeness, 60, 20, 1, [1.0], *rngs)


def test_noise_rows_with_and_without_exact_spectrum_and_baseline() -> None:
    samples = np.random.default_rng(3).standard_normal((200, 4)) * [2.0, 1.0, 0.5, 0.1]
    bare = noise_rows(samples, 1.0, 0.1, 1e-6)
    assert [r["method"].split("_")[1] for r in bare] == ["algorithm1", "theorem3"]
    assert all(np.isnan(r["dp_over_pac"]) for r in bare)
    lam = np.array([4.0, 1.0, 0.25, 0.01])  # the exact covariance of the samples' law
    rows = noise_rows(samples, 1.0, 0.1, 1e-6, exact_spectrum=lam, baseline=("dp", 10.0))
    norms = {r["method"]: r["noise_norm"] for r in rows}
    assert norms["pac_theorem3_exact"] == pytest.approx(np.sqrt(lam).sum() / np.sqrt(2.0))
    assert norms["pac_isotropic_exact"] == pytest.approx(np.sqrt(4 * lam.sum() / 2.0))
    assert rows[-1] == {"method": "dp", "noise_norm": 10.0, "dp_over_pac": 1.0}
    assert all(r["dp_over_pac"] == pytest.approx(10.0 / r["noise_norm"]) for r in rows[:-1])
