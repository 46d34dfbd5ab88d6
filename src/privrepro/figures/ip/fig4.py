"""ip Fig. 4: CIFAR-10 accuracy of the four series against the budget ε at fixed α, δ = 1e-5.

The caption says α = 0.1 and ε from 0.25 to 5.0; the notebook cell uses α = 0.2 and
ε = linspace(0.5, 5, 19) (``fig4_notebook.yaml``)."""

from __future__ import annotations

from privrepro.figures.ip.common import AccuracyCurve


class AccuracyVsBudget(AccuracyCurve):
    """Fig. 4 (caption grid by default; the notebooks' grid as a variant config)."""

    title = "ip Fig. 4 — accuracy vs budget ε (fixed α, δ = 1e-5): SLL output/input, ResNet, ResNet Tune"
    x = "epsilon"
