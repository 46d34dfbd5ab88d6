"""ResNets for the ip paper's Gauss-Input experiments.

* :func:`cifar_resnet18`: timm's ResNet-18 with the CIFAR stem (3×3 stride-1 ``conv1``, no
  max-pool), the architecture of the ``resnet18_cifar10``/``_cifar100`` models the ip notebooks
  load (edadaltocg/detectors). Their weights are not shipped: train it or load a checkpoint.
* :func:`small_resnet`: the same block structure (conv-BN-ReLU stem, BasicBlocks with BatchNorm,
  global pooling, linear head) at a small width, for the ``smoke`` profile.
"""

from __future__ import annotations

from torch import Tensor, nn

__all__ = ["BasicBlock", "cifar_resnet18", "small_resnet"]


def cifar_resnet18(num_classes: int, in_channels: int = 3) -> nn.Module:
    """timm ``resnet18`` (random init) with a 3×3 stride-1 stem conv and the max-pool removed."""
    import timm

    model = timm.create_model(
        "resnet18", pretrained=False, num_classes=num_classes, in_chans=in_channels
    )
    model.conv1 = nn.Conv2d(in_channels, 64, kernel_size=3, stride=1, padding=1, bias=False)
    model.maxpool = nn.Identity()
    return model


class BasicBlock(nn.Module):
    """conv-BN-ReLU-conv-BN plus a (projected) shortcut, then ReLU (He et al. 2016)."""

    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: Tensor) -> Tensor:
        out = self.bn1(self.conv1(x)).relu()
        out = self.bn2(self.conv2(out))
        return (out + self.shortcut(x)).relu()


def small_resnet(
    num_classes: int, in_channels: int = 3, width: int = 16, blocks: int = 2
) -> nn.Sequential:
    """A small CIFAR-style ResNet: stem, ``blocks`` BasicBlocks (the second and later at stride 2
    with doubled width), global average pooling and a linear head."""
    layers: list[nn.Module] = [
        nn.Conv2d(in_channels, width, 3, 1, 1, bias=False),
        nn.BatchNorm2d(width),
        nn.ReLU(),
    ]
    cin = width
    for i in range(blocks):
        cout = width * (2**i)
        layers.append(BasicBlock(cin, cout, stride=1 if i == 0 else 2))
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, num_classes)]
    return nn.Sequential(*layers)
