"""ip Fig. 3: CIFAR-10 accuracy of the four series against the radius α at ε = 1, δ = 1e-5."""

from __future__ import annotations

from privrepro.figures.ip.common import AccuracyCurve


class AccuracyVsRadius(AccuracyCurve):
    """Fig. 3 (notebooks: α = linspace(0, 0.2, 20), ε = 1, 15 draws)."""

    title = (
        "ip Fig. 3 — accuracy vs radius α (ε = 1, δ = 1e-5): SLL output/input, ResNet, ResNet Tune"
    )
    x = "alpha"
