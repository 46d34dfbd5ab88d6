"""Batched Monte-Carlo training (pac Example 4's mechanism) against single-model references."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from privrepro.pac.training import (
    MLPSpec,
    choose_layout,
    init_mlp,
    layout_costs,
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


@pytest.mark.parametrize("mode", ["auto", "wide", "gather", "mask"])
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


@pytest.mark.parametrize("mode", ["wide", "gather"])
@pytest.mark.parametrize("sizes", [(8, 3), (8, 5, 3)])
def test_fused_layouts_equal_loop_for_shallow_networks(
    pool, sizes: tuple[int, ...], mode: str
) -> None:
    # one layer (layer 1's GEMM is the whole model) and one hidden layer; float64, 1e-10
    x, y = pool
    spec = MLPSpec(sizes)
    init = init_mlp(spec, torch.Generator().manual_seed(4), dtype=torch.float64)
    rng = np.random.default_rng(5)
    subsets = torch.tensor(np.stack([rng.choice(120, 90, replace=False) for _ in range(3)]))
    got = train_batched(spec, init, x, y, subsets, steps=20, lr=0.2, mode=mode)
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


@pytest.mark.parametrize("mode", ["wide", "gather", "mask"])
def test_training_leaves_the_initialisation_alone(pool, mode: str) -> None:
    # a chunk of one model (m = 3, chunk = 2): its stacked copies must not be views of init
    x, y = pool
    spec = MLPSpec((8, 6, 5, 3))
    init = init_mlp(spec, torch.Generator().manual_seed(1), dtype=torch.float64)
    before = init.clone()
    subsets = torch.tensor(np.stack([np.arange(i, 120, 3) for i in range(3)]))
    train_batched(spec, init, x, y, subsets, steps=5, lr=0.3, chunk=2, mode=mode)
    assert torch.equal(init, before)


@pytest.mark.parametrize("mode", ["wide", "gather"])
def test_float32_batched_equals_loop_to_float_rounding(pool, mode: str) -> None:
    # float32 throughout, as Example 4 runs, against the float64 loop of train_single (the same
    # math to 1e-10 above): the difference is float32 rounding (epsilon 1.2e-7) accumulated
    # over 100 steps; seen here: 4e-7 for train_single in float32 and 1.7e-6 for the batched
    # layouts (their sums run in another order), so the bound 1e-5 leaves a 6x margin. It
    # caught weight updates accumulated into the weights by the GEMM (baddbmm_, alpha = -lr):
    # 4e-6 here, 30x a loop's rounding on the digits. (A problem whose ReLU pre-activations
    # cross zero mid-training, e.g. random labels, turns rounding into a 1e-3 difference for
    # either trainer.)
    x64, y = pool
    spec = MLPSpec((8, 6, 5, 3))
    init64 = init_mlp(spec, torch.Generator().manual_seed(1), dtype=torch.float64)
    rng = np.random.default_rng(2)
    subsets = torch.tensor(np.stack([rng.choice(120, 60, replace=False) for _ in range(5)]))
    ref = torch.stack([train_single(spec, init64, x64[s], y[s], 100, 0.3) for s in subsets])
    x32, init32 = x64.float(), init64.float()
    got = train_batched(spec, init32, x32, y, subsets, steps=100, lr=0.3, chunk=2, mode=mode)
    assert got.dtype == torch.float32
    assert (got.double() - ref).abs().max() < 1e-5


def test_cost_model_prefers_wide_on_the_whole_pool_and_gather_on_half_on_cpu() -> None:
    # layout_costs' closed form: with n = N both layouts do the same flops and wide moves less
    # (hidden-sized arrays, not inputs); with n = N/2 wide does twice gather's layer-1 flops,
    # which on the digits outweighs gather's input traffic (230 KB per model); at Example 4's
    # size (110 MB per model, streamed by a narrow GEMM) it no longer does
    sizes = (64, 16, 16, 10)
    costs = layout_costs(1797, 1797, sizes)
    assert costs["wide"] < costs["gather"]
    assert choose_layout(1797, 1797, sizes) == "wide"
    assert choose_layout(1797, 898, sizes) == "gather"
    assert choose_layout(70_000, 35_000, (784, 30, 30, 10)) == "wide"
    # gather's cost per model-step grows with n, wide's is nearly flat in n
    small, big = (
        layout_costs(70_000, 7_000, (784, 30, 10)),
        layout_costs(70_000, 70_000, (784, 30, 10)),
    )
    assert big["gather"] == pytest.approx(10 * small["gather"])
    assert big["wide"] < 1.2 * small["wide"]
