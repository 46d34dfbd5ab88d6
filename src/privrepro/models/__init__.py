"""privrepro.models: network builders the papers share.

Modules: :mod:`.sll` (SDP-based Lipschitz layers, the ip paper's SLL nets), :mod:`.lipschitz`
(ℓ2 Lipschitz bounds of networks by power iteration), :mod:`.resnet` (ResNet-18 with the CIFAR stem), :mod:`.weights`
(pretrained weights: where they are read from, and a one-line error when they are missing).
"""
