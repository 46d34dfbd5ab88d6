"""Batched Monte-Carlo training (pac Example 4's mechanism) against single-model references."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from privrepro.pac.training import (
    MLPSpec,
    init_mlp,
    mlp_accuracy,
    train_batched,
    train_single,
    train_vmap,
)


@pytest.fixture(scope="module")
def pool() -> tuple[torch.Tensor, torch.Tensor]:
    # a synthetic 3-class pool (no data files needed); float64 so that runs agree to rounding
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((3, 8))
    y = rng.integers(0, 3, size=120)
    x = centres[y] + 0.7 * rng.standard_normal((120, 8))
    return torch.tensor(x), torch.tensor(y)


def test_example4_parameter_count() -> None:
    # pac note T6: 784·30 + 30 + 30·30 + 30 + 30·10 + 10 = 24,790
    assert MLPSpec((784, 30, 30, 10)).n_params == 24_790


def test_flatten_roundtrip() -> None:
    spec = MLPSpec((5, 4, 3))
    flat = torch.arange(spec.n_params, dtype=torch.float64)
    assert torch.equal(spec.flatten(spec.unflatten(flat)), flat)
    batch = torch.stack([flat, flat + 1])
    assert torch.equal(spec.flatten(spec.unflatten(batch), batch_dims=1), batch)


@pytest.mark.parametrize("mode", ["wide", "gather", "mask"])
def test_batched_equals_loop_of_single_trainings(pool, mode: str) -> None:
    x, y = pool
    spec = MLPSpec((8, 6, 5, 3))
    init = init_mlp(spec, torch.Generator().manual_seed(1), dtype=torch.float64)
    rng = np.random.default_rng(2)
    subsets = torch.tensor(np.stack([rng.choice(120, 60, replace=False) for _ in range(5)]))
    got = train_batched(spec, init, x, y, subsets, steps=30, lr=0.3, chunk=2, mode=mode)
    ref = torch.stack([train_single(spec, init, x[s], y[s], 30, 0.3) for s in subsets])
    # float64: the hand-written backward equals autograd up to rounding (1e-10 over 30 steps)
    assert torch.allclose(got, ref, atol=1e-10, rtol=0)
    assert not torch.allclose(got[0], got[1])  # different subsets give different models


@pytest.mark.parametrize("sizes", [(8, 3), (8, 5, 3)])
def test_wide_equals_loop_for_shallow_networks(pool, sizes: tuple[int, ...]) -> None:
    # one layer (the wide GEMM is the whole model) and one hidden layer; float64, 1e-10
    x, y = pool
    spec = MLPSpec(sizes)
    init = init_mlp(spec, torch.Generator().manual_seed(4), dtype=torch.float64)
    rng = np.random.default_rng(5)
    subsets = torch.tensor(np.stack([rng.choice(120, 90, replace=False) for _ in range(3)]))
    got = train_batched(spec, init, x, y, subsets, steps=20, lr=0.2)
    ref = torch.stack([train_single(spec, init, x[s], y[s], 20, 0.2) for s in subsets])
    assert torch.allclose(got, ref, atol=1e-10, rtol=0)


def test_vmap_equals_loop(pool) -> None:
    x, y = pool
    spec = MLPSpec((8, 6, 3))
    init = init_mlp(spec, torch.Generator().manual_seed(1), dtype=torch.float64)
    rng = np.random.default_rng(3)
    subsets = torch.tensor(np.stack([rng.choice(120, 40, replace=False) for _ in range(3)]))
    got = train_vmap(spec, init, x, y, subsets, steps=10, lr=0.3)
    ref = torch.stack([train_single(spec, init, x[s], y[s], 10, 0.3) for s in subsets])
    assert torch.allclose(got, ref, atol=1e-10, rtol=0)


def test_training_learns(pool) -> None:
    x, y = pool
    spec = MLPSpec((8, 16, 3))
    init = init_mlp(spec, torch.Generator().manual_seed(0), dtype=torch.float64)
    subsets = torch.arange(120).unsqueeze(0)
    before = float(mlp_accuracy(spec, init, x, y))
    after = float(mlp_accuracy(spec, train_batched(spec, init, x, y, subsets, 200, 0.5)[0], x, y))
    assert after > 0.9 > before  # 3 separated Gaussian classes: well above chance after GD


def test_bad_mode(pool) -> None:
    x, y = pool
    spec = MLPSpec((8, 3))
    with pytest.raises(ValueError, match="mode"):
        train_batched(
            spec,
            torch.zeros(spec.n_params, dtype=torch.float64),
            x,
            y,
            torch.zeros((1, 4), dtype=torch.long),
            1,
            0.1,
            mode="bad",
        )
