"""Base architectures: timm ResNet-18 with the CIFAR stem; the normaliser's two noise spaces."""

from __future__ import annotations

import pytest
import torch

from privrepro.inference.networks import ArchSpec, NormalizedNet, build_network
from privrepro.models.resnet import cifar_resnet18


def test_cifar_resnet18_stem() -> None:
    model = cifar_resnet18(10)
    # the detectors/timm resnet18_cifar10 stem: 3×3 stride-1 conv, no max-pool
    assert model.conv1.kernel_size == (3, 3) and model.conv1.stride == (1, 1)
    assert isinstance(model.maxpool, torch.nn.Identity)
    model.eval()
    with torch.no_grad():
        out = model(torch.zeros(2, 3, 32, 32))
    assert out.shape == (2, 10)


def test_sll_normaliser_has_unit_std() -> None:
    # SLL networks keep std = 1 (the notebooks' NormalizedModel) so α is a pixel radius
    net = build_network(
        ArchSpec(
            "sll", depth_conv=1, depth_linear=1, width=4, conv_inner=2, linear_inner=8, pool=2
        ),
        10,
        3,
        8,
        (0.4, 0.5, 0.6),
        (0.2, 0.2, 0.2),
    )
    assert isinstance(net, NormalizedNet)
    assert torch.equal(net.std.flatten(), torch.ones(3))
    res = build_network(
        ArchSpec("resnet_small", resnet_width=4, resnet_blocks=1),
        10,
        3,
        8,
        (0.4, 0.5, 0.6),
        (0.2, 0.25, 0.5),
    )
    assert torch.allclose(res.pixel_to_normalized_scale().flatten(), torch.tensor([5.0, 4.0, 2.0]))


def test_lipschitz_bound_of_an_sll_network() -> None:
    from privrepro.config import ConfigError
    from privrepro.inference.networks import lipschitz_bound
    from privrepro.models.lipschitz import network_lipschitz_bound

    arch = ArchSpec(
        "sll", depth_conv=1, depth_linear=1, width=4, conv_inner=2, linear_inner=8, pool=2
    )
    net = build_network(arch, 10, 1, 8, (0.5,), (0.3,))
    bound = lipschitz_bound(net, (1, 8, 8), torch.Generator().manual_seed(0), 50)
    # SLL's normaliser has std 1: the bound is the body's (the same seeded power iterations)
    body, _ = network_lipschitz_bound(net.body, (1, 1, 8, 8), torch.Generator().manual_seed(0), 50)
    assert bound == body
    # the row-normalised last layer has ℓ2 norm in [1, sqrt(k)], SDP layers 1 (docs/ip.md)
    assert 1.0 - 1e-6 <= bound <= 10**0.5 * (1 + 1e-3)
    res = build_network(
        ArchSpec("resnet_small", resnet_width=4, resnet_blocks=1), 10, 1, 8, (0.5,), (0.3,)
    )
    with pytest.raises(TypeError, match="BatchNorm2d"):  # no bound for a ResNet's BatchNorm
        lipschitz_bound(res, (1, 8, 8), torch.Generator().manual_seed(0))
    with pytest.raises(ConfigError, match="nn.Sequential"):
        lipschitz_bound(NormalizedNet(torch.nn.Identity(), [0.5], [1.0]), (1, 8, 8), None)  # type: ignore[arg-type]
