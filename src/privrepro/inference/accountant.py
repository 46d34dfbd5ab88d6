"""The IP accountant: guarantees {(ε, δ), α} and the paper's rules to combine them.

ip paper, Sec. III: post-processing (Prop. 1: any data-independent map keeps the guarantee),
basic composition (Prop. 2), parallel composition (Prop. 3, a *sum* of budgets, unlike DP's
maximum) and chaining to a larger radius (Prop. 4, h = ⌈β/α⌉ computed exactly). The rules live
in the shared DP core, :mod:`privrepro.dp.ip_rules`; this module names them for the ip package.
"""

from __future__ import annotations

from privrepro.dp.ip_rules import (
    IPGuarantee,
    basic_composition,
    chaining,
    chaining_steps,
    parallel_composition,
)

__all__ = ["IPGuarantee", "basic_composition", "chaining", "chaining_steps", "parallel_composition"]
