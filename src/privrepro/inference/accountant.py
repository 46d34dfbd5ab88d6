"""The IP accountant: guarantees {(ε, δ), α} and the paper's rules to combine them (Props. 2–4).

A mechanism M: ℝⁿ → ℝᵏ is {(ε, δ), α} inference-private (IP) when, for all inputs with
‖x_a − x_b‖ ≤ α and all measurable S, Pr[M(x_a) ∈ S] ≤ e^ε Pr[M(x_b) ∈ S] + δ (ip paper, Def. 1;
the neighbouring relation is a ball of radius α in the input metric, not a record change).

More in ``docs/modules.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from privrepro.config import ConfigError
from privrepro.dp.group import group_delta

__all__ = [
    "IPGuarantee",
    "basic_composition",
    "chaining",
    "chaining_steps",
    "exact_fraction",
    "parallel_composition",
]

Number = float | int | str | Decimal | Fraction


def exact_fraction(name: str, value: Number) -> Fraction:
    """``value`` as an exact rational: floats through their shortest decimal repr (so 0.07 is
    7/100, not the binary double 0.07000000000000000666…), others exactly."""
    if isinstance(value, bool):
        raise ConfigError(name, value, "must be a number")
    try:
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ConfigError(name, value, "must be finite")
            return Fraction(repr(value))
        return Fraction(value)
    except (ValueError, TypeError) as err:
        raise ConfigError(name, value, "must be a number") from err


def chaining_steps(beta: Number, alpha: Number) -> int:
    """h = ⌈β/α⌉ computed exactly (ip paper, Prop. 4 / eq. 25: (h−1)α < β ≤ hα); β ≥ 0, α > 0.

    ``chaining_steps(0.07, 0.01)`` is 7 (ip note §7, float pitfall).
    """
    b, a = exact_fraction("beta", beta), exact_fraction("alpha", alpha)
    if a <= 0:
        raise ConfigError("alpha", alpha, "must lie in (0, inf)")
    if b < 0:
        raise ConfigError("beta", beta, "must lie in [0, inf)")
    return math.ceil(b / a)


@dataclass(frozen=True)
class IPGuarantee:
    """{(ε, δ), α} inference privacy (ip paper, Def. 1): for ‖x_a − x_b‖ ≤ α and every set S,
    Pr[M(x_a) ∈ S] ≤ e^ε Pr[M(x_b) ∈ S] + δ."""

    epsilon: float
    delta: float
    alpha: float

    def __post_init__(self) -> None:
        if not self.epsilon >= 0:
            raise ConfigError("epsilon", self.epsilon, "must lie in [0, inf)")
        if not self.delta >= 0:  # δ > 1 is allowed: chaining can produce vacuous guarantees
            raise ConfigError("delta", self.delta, "must lie in [0, inf)")
        if not self.alpha >= 0:
            raise ConfigError("alpha", self.alpha, "must lie in [0, inf)")


def _sum_rule(guarantees: Sequence[IPGuarantee]) -> IPGuarantee:
    if len(guarantees) == 0:
        raise ConfigError("guarantees", list(guarantees), "must hold at least one guarantee")
    return IPGuarantee(
        math.fsum(g.epsilon for g in guarantees),
        math.fsum(g.delta for g in guarantees),
        min(g.alpha for g in guarantees),
    )


def basic_composition(guarantees: Sequence[IPGuarantee]) -> IPGuarantee:
    """Prop. 2 (ip paper, App. A-B): {(Σ ε_i, Σ δ_i), min α_i} for independent M_i on one input.

    ε=[0.5, 0.3, 0.2], δ=[1e-5, 2e-5, 0], α=[0.1, 0.05, 0.2] gives (1.0, 3e-5, 0.05) (ip note §7).
    Sums are exactly rounded (``math.fsum``).
    """
    return _sum_rule(guarantees)


def parallel_composition(guarantees: Sequence[IPGuarantee]) -> IPGuarantee:
    """Prop. 3 (ip paper, App. A-C): on disjoint input chunks, still the *sum* {(Σ ε_i, Σ δ_i),
    min α_i} (not DP's max; ip paper, Remark 6)."""
    return _sum_rule(guarantees)


def chaining(guarantee: IPGuarantee, beta: Number) -> IPGuarantee:
    """Prop. 4 (ip paper, App. A-D): the guarantee at radius β, with h = ⌈β/α⌉ (exact):
    {(h ε, δ (e^{hε} − 1)/(e^ε − 1)), β}.

    Edge cases (ip note §3): β ≤ α gives h = 1 and the guarantee unchanged (at radius β); β = 0
    gives h = 0 and (0, 0); ε → 0 gives the factor h. Example (ip note §7): ε=1, δ=1e-5, α=0.1,
    β=0.25 gives h=3, ε'=3, δ'=1.110733792739e-4.
    """
    h = chaining_steps(beta, guarantee.alpha)
    beta_f = float(exact_fraction("beta", beta))
    if h == 0:
        return IPGuarantee(0.0, 0.0, beta_f)
    d = float(group_delta(guarantee.epsilon, guarantee.delta, h))
    return IPGuarantee(h * guarantee.epsilon, d, beta_f)
