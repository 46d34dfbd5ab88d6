"""The IP accountant: guarantees {(ε, δ), α} and the paper's rules to combine them.

ip paper, Sec. III: post-processing (Prop. 1), basic composition (Prop. 2), parallel composition
(Prop. 3, a *sum* of budgets, unlike DP's maximum) and chaining to a larger radius (Prop. 4).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["IPGuarantee", "chain", "chain_hops", "compose", "parallel_compose"]


@dataclass(frozen=True)
class IPGuarantee:
    """A {(ε, δ), α} inference-privacy guarantee (ip paper, Def. 2; pure IP when δ = 0, Def. 1).

    For every measurable S and every pair of inputs with d(x_a, x_b) ≤ α:
    Pr[M(x_a) ∈ S] ≤ e^ε Pr[M(x_b) ∈ S] + δ (eq. 4).
    """

    epsilon: float
    delta: float
    alpha: float

    def __post_init__(self) -> None:
        from privrepro.config.validation import ConfigError

        if not (self.epsilon >= 0 and math.isfinite(self.epsilon)):
            raise ConfigError("epsilon", self.epsilon, "must lie in [0, inf)")
        if not 0 <= self.delta <= 1:
            raise ConfigError("delta", self.delta, "must lie in [0, 1]")
        if not self.alpha >= 0:
            raise ConfigError("alpha", self.alpha, "must lie in [0, inf]")


def compose(guarantees: Sequence[IPGuarantee]) -> IPGuarantee:
    """Basic composition (ip paper, Prop. 2): (Σε_i, Σδ_i) at radius min α_i."""
    if not guarantees:
        raise ValueError("compose needs at least one guarantee")
    return IPGuarantee(math.fsum(g.epsilon for g in guarantees),
                       min(1.0, math.fsum(g.delta for g in guarantees)),
                       min(g.alpha for g in guarantees))


def parallel_compose(guarantees: Sequence[IPGuarantee]) -> IPGuarantee:
    """Parallel composition over disjoint input chunks (ip paper, Prop. 3).

    The result is the same as basic composition, (Σε_i, Σδ_i, min α_i): two inputs within α of
    each other may differ in every chunk, so every chunk's budget is spent (Remark 6).
    """
    return compose(guarantees)


def chain_hops(alpha: float, beta: float) -> int:
    """h = ⌈β/α⌉ computed exactly on the decimal values (⌈0.07/0.01⌉ is 7, not 8 as in floats)."""
    if alpha <= 0:
        raise ValueError(f"alpha = {alpha!r}: must be > 0 to chain")
    if beta < 0:
        raise ValueError(f"beta = {beta!r}: must be >= 0")
    ratio = Fraction(repr(float(beta))) / Fraction(repr(float(alpha)))
    return math.ceil(ratio)


def chain(g: IPGuarantee, beta: float) -> IPGuarantee:
    """Chaining to radius β (ip paper, Prop. 4, App. A-D).

    With h = ⌈β/α⌉: ε' = h ε and δ' = δ (e^{hε} − 1)/(e^ε − 1) = δ Σ_{j<h} e^{jε} (h δ when ε = 0).
    β ≤ α gives back (ε, δ); β = 0 gives (0, 0).
    """
    h = chain_hops(g.alpha, beta)
    if h == 0:
        return IPGuarantee(0.0, 0.0, float(beta))
    factor = float(h) if g.epsilon == 0 else math.expm1(h * g.epsilon) / math.expm1(g.epsilon)
    return IPGuarantee(h * g.epsilon, min(1.0, factor * g.delta), float(beta))
