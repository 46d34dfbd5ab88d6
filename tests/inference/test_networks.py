"""Base architectures: timm ResNet-18 with the CIFAR stem; the normaliser's two noise spaces."""

from __future__ import annotations

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
