"""SLL layers (Araujo et al. 2023) are 1-Lipschitz; power-iteration Lipschitz bounds."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from privrepro.models.lipschitz import (
    layer_lipschitz_bound,
    network_lipschitz_bound,
    power_iteration,
)
from privrepro.models.sll import (
    LinearNormalized,
    PaddingChannels,
    SDPBasedLipschitzConvLayer,
    SDPBasedLipschitzLinearLayer,
    SumPool2d,
    sll_network,
)


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("seed", range(4))
def test_dense_sll_layer_is_one_lipschitz(seed: int) -> None:
    layer = SDPBasedLipschitzLinearLayer(12, 20)
    layer.reset_parameters(gen(seed))
    bound, _ = layer_lipschitz_bound(layer, (1, 12), gen(100 + seed))
    assert bound <= 1 + 1e-4  # Araujo et al. Thm. 3; power iteration tolerance
    # empirical: ‖h(x) − h(y)‖ ≤ ‖x − y‖ on random pairs (float64)
    layer = layer.double()
    x, y = torch.randn(500, 12, generator=gen(seed), dtype=torch.float64).chunk(2)
    with torch.no_grad():
        ratio = (layer(x) - layer(y)).norm(dim=1) / (x - y).norm(dim=1)
    assert float(ratio.max()) <= 1 + 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_conv_sll_layer_is_one_lipschitz(seed: int) -> None:
    layer = SDPBasedLipschitzConvLayer(4, 6)
    layer.reset_parameters(gen(seed))
    bound, _ = layer_lipschitz_bound(layer, (1, 4, 6, 6), gen(7))
    assert bound <= 1 + 1e-4
    layer = layer.double()
    x = torch.randn(64, 4, 6, 6, generator=gen(seed), dtype=torch.float64)
    y = x + 0.3 * torch.randn(64, 4, 6, 6, generator=gen(seed + 50), dtype=torch.float64)
    with torch.no_grad():
        ratio = (layer(x) - layer(y)).flatten(1).norm(dim=1) / (x - y).flatten(1).norm(dim=1)
    assert float(ratio.max()) <= 1 + 1e-12


def test_sll_scaling_is_tight_at_one() -> None:
    """‖T^{1/2} W‖₂ ≤ 1 for any W (the Gershgorin-type scaling of Araujo et al. 2023, Thm. 3), and
    the bound is attained: when W has orthogonal rows, T = diag(1/‖w_i‖²) makes the rows of
    T^{1/2} W orthonormal (norm exactly 1), and with every ReLU active the layer is the reflection
    x ↦ (I − 2 Wᵀ T W) x + c, an isometry. So 1 is the layer's Lipschitz constant, not just a bound:
    the scaling cannot be loosened without breaking 1-Lipschitzness."""
    layer = SDPBasedLipschitzLinearLayer(8, 8)
    layer.reset_parameters(gen(0))
    t = layer.compute_t().detach().double()
    a = t.sqrt()[:, None] * layer.weights.detach().double()
    assert float(torch.linalg.matrix_norm(a, ord=2)) <= 1 + 1e-9
    # a W with orthogonal rows of unequal lengths, and a bias keeping every unit active
    q, _ = torch.linalg.qr(torch.randn(8, 8, generator=gen(1), dtype=torch.float64))
    layer = layer.double()
    with torch.no_grad():
        layer.weights.copy_(torch.linspace(0.5, 2.0, 8, dtype=torch.float64)[:, None] * q.T)
        layer.bias.fill_(100.0)
    a = layer.compute_t().detach().sqrt()[:, None] * layer.weights.detach()
    assert float(torch.linalg.matrix_norm(a, ord=2)) == pytest.approx(1.0, abs=1e-12)
    x = torch.randn(200, 8, generator=gen(2), dtype=torch.float64)
    y = x + torch.randn(200, 8, generator=gen(3), dtype=torch.float64)
    with torch.no_grad():
        assert bool(
            (torch.nn.functional.linear(torch.cat([x, y]), layer.weights) + layer.bias > 0).all()
        )
        ratio = (layer(x) - layer(y)).norm(dim=1) / (x - y).norm(dim=1)
    assert float(ratio.min()) == pytest.approx(1.0, abs=1e-12)
    assert float(ratio.max()) == pytest.approx(1.0, abs=1e-12)
    bound, _ = layer_lipschitz_bound(layer, (1, 8), gen(4))
    assert bound == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("shape", [(30, 20), (20, 30), (25, 25)])
def test_dense_spectral_norm_matches_svd(shape: tuple[int, int]) -> None:
    """The dense SLL layers' ‖A‖₂ from the Gram matrix's largest eigenvalue equals the largest
    singular value (LAPACK's SVD), wide, tall and rank-deficient."""
    from privrepro.models.lipschitz import _spectral_norm

    a = torch.randn(shape, generator=gen(5), dtype=torch.float64)
    a[-1] = a[0]  # rank-deficient
    assert _spectral_norm(a) == pytest.approx(float(torch.linalg.svdvals(a)[0]), rel=1e-12)
    assert _spectral_norm(torch.zeros(shape, dtype=torch.float64)) == 0.0


def test_power_iteration_matches_svd() -> None:
    m = torch.randn(30, 20, generator=gen(3), dtype=torch.float64)
    est = power_iteration(lambda v: v @ m.T, lambda u: u @ m, (1, 20), gen(4), n_iter=2000)
    assert est == pytest.approx(float(torch.linalg.matrix_norm(m, ord=2)), rel=1e-6)


@pytest.mark.parametrize("weight_seed", [0, 26, 28])
def test_strided_conv_bound_matches_jacobian(weight_seed: int) -> None:
    """Power iteration on a strided convolution reaches the largest singular value of its
    Jacobian (LAPACK's SVD) from below. The weights come from a seeded generator: with the
    global one they changed with the order the tests ran in, and some draws have their two
    largest singular values within 0.3 % of each other, which 500 iterations do not separate
    to 1e-5 (seeds 26 and 28 are such draws, 0.13 % and 0.22 % apart; 2,000 iterations do)."""
    conv = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1).double()
    with torch.no_grad():
        conv.weight.copy_(0.2 * torch.randn(conv.weight.shape, generator=gen(weight_seed)))
    bound, _ = layer_lipschitz_bound(conv, (1, 3, 8, 8), gen(0), n_iter=2000)
    jac = torch.autograd.functional.jacobian(
        lambda x: conv(x).flatten(), torch.zeros(1, 3, 8, 8, dtype=torch.float64)
    )
    exact = float(torch.linalg.matrix_norm(jac.reshape(-1, 192), ord=2))
    assert bound <= exact * (1 + 1e-12)  # ‖A v‖ with ‖v‖ = 1 never exceeds ‖A‖₂
    assert bound == pytest.approx(exact, rel=1e-5)


def test_last_layer_norm_range() -> None:
    # note M4: ‖Q‖₂ ∈ [1, √k]; identical rows reach √k (√10 = 3.16227766)
    last = LinearNormalized(50, 10)
    with torch.no_grad():
        last.weight.copy_(torch.ones(10, 50))
    b, _ = layer_lipschitz_bound(last, (1, 50), gen(0))
    assert b == pytest.approx(math.sqrt(10), rel=1e-12)
    with torch.no_grad():
        last.weight.normal_(generator=gen(1))
    b, _ = layer_lipschitz_bound(last, (1, 50), gen(0))
    assert 1.0 <= b <= math.sqrt(10)


def test_padding_and_pooling_are_isometries() -> None:
    assert layer_lipschitz_bound(PaddingChannels(5, 3), (1, 3, 4, 4), gen(0))[0] == 1.0
    assert layer_lipschitz_bound(SumPool2d(4), (1, 2, 8, 8), gen(0))[0] == pytest.approx(1.0)
    # a plain 2×2 average pool has norm 2/4 = 0.5
    assert layer_lipschitz_bound(torch.nn.AvgPool2d(2), (1, 1, 4, 4), gen(0))[0] == pytest.approx(
        0.5
    )


def test_network_bound_and_notebook_assumption() -> None:
    torch.manual_seed(0)  # test-local: the default initialisation of a fixed toy network
    net = sll_network(
        10,
        in_channels=1,
        image_size=8,
        depth_conv=2,
        depth_linear=2,
        width=4,
        conv_inner=4,
        linear_inner=16,
        pool=2,
    )
    total, layers = network_lipschitz_bound(net, (1, 1, 8, 8), gen(0))
    last = layers[-1].bound
    assert all(b.bound <= 1 + 1e-4 for b in layers[:-1])
    assert total == pytest.approx(math.prod(b.bound for b in layers), rel=1e-12)
    assert last >= 1.0
    assumed, _ = network_lipschitz_bound(net, (1, 1, 8, 8), gen(0), assume_last_layer_one=True)
    assert assumed <= total
    # the bound holds empirically
    x = torch.rand(200, 1, 8, 8, generator=gen(1))
    y = x + 0.2 * torch.randn(200, 1, 8, 8, generator=gen(2))
    with torch.no_grad():
        ratio = (net(x) - net(y)).norm(dim=1) / (x - y).flatten(1).norm(dim=1)
    assert float(ratio.max()) <= total * (1 + 1e-5)


@pytest.mark.parametrize("kind", ["conv", "dense"])
@pytest.mark.parametrize("optimizer", ["sgd", "adam-foreach", "adam-fused"])
def test_inference_reuses_t_until_the_weights_change(kind: str, optimizer: str) -> None:
    """Without a recorded gradient a layer keeps t (module docstring); the kept t must equal
    compute_t() before and after every way the weights change: an optimiser step (plain,
    foreach and fused Adam), load_state_dict and a dtype move."""
    torch.manual_seed(0)
    layer: nn.Module = (
        SDPBasedLipschitzConvLayer(4, 3) if kind == "conv" else SDPBasedLipschitzLinearLayer(6, 5)
    )
    x = torch.randn(3, 4, 6, 6) if kind == "conv" else torch.randn(3, 6)

    def reference(module: nn.Module, inputs: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():  # the graph path recomputes t: the closed form, uncached
            return module(inputs.requires_grad_(False)).detach()

    def kept(module: nn.Module, inputs: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return module(inputs)

    assert torch.equal(kept(layer, x), reference(layer, x))
    first = layer._t_cache.value
    assert first is not None
    kept(layer, x)
    assert layer._t_cache.value is first  # reused, not recomputed
    opt: torch.optim.Optimizer
    if optimizer == "sgd":
        opt = torch.optim.SGD(layer.parameters(), lr=0.5)
    else:
        opt = torch.optim.Adam(
            layer.parameters(),
            lr=0.5,
            foreach=optimizer == "adam-foreach",
            fused=optimizer == "adam-fused" or None,
        )
    for _ in range(2):
        opt.zero_grad()
        layer(x).square().sum().backward()
        opt.step()
        assert torch.equal(kept(layer, x), reference(layer, x))
    other = type(layer)(*((4, 3) if kind == "conv" else (6, 5)))
    layer.load_state_dict(other.state_dict())
    assert torch.equal(kept(layer, x), reference(layer, x))
    assert torch.equal(kept(layer, x), kept(other, x))
    layer.double()
    assert torch.equal(kept(layer, x.double()), reference(layer, x.double()))
