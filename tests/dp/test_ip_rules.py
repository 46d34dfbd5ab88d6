"""ip paper Props. 2–4 against the ip note's check values (§7)."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privrepro.config import ConfigError
from privrepro.dp.ip_rules import (
    IPGuarantee,
    basic_composition,
    chaining,
    chaining_steps,
    parallel_composition,
)


def test_ceiling_is_exact() -> None:
    # ip note §7 float pitfall: ceil(0.07/0.01) is 8 in floating point; the answer is 7.
    assert math.ceil(0.07 / 0.01) == 8
    assert chaining_steps(0.07, 0.01) == 7
    assert chaining_steps(0.14, 0.01) == 14
    assert chaining_steps(0.27, 0.03) == 9
    assert chaining_steps(0.33, 0.03) == 11
    assert chaining_steps("0.07", Decimal("0.01")) == 7
    assert chaining_steps(Fraction(7, 100) + Fraction(1, 10**9), 0.01) == 8
    assert chaining_steps(0, 0.1) == 0


@pytest.mark.parametrize(
    ("eps", "alpha", "beta", "h", "eps2", "delta2"),
    [
        # ip note §7, chaining rows (δ = 1e-5).
        (1.0, 0.1, 0.25, 3, 3.0, 1.110733792739e-04),
        (1.0, 0.1, 0.2, 2, 2.0, 3.718281828459e-05),
        (1.0, 0.1, 0.05, 1, 1.0, 1e-5),
        (1.0, 0.1, 0.1, 1, 1.0, 1e-5),
        (0.5, 0.1, 0.3, 3, 1.5, 5.367003099159e-05),
        (0.1, 0.01, 0.1, 10, 1.0, 1.633799399966e-04),
    ],
)
def test_chaining_reference(
    eps: float, alpha: float, beta: float, h: int, eps2: float, delta2: float
) -> None:
    assert chaining_steps(beta, alpha) == h
    g = chaining(IPGuarantee(eps, 1e-5, alpha), beta)
    assert g.epsilon == pytest.approx(eps2, rel=1e-14)
    assert g.delta == pytest.approx(delta2, rel=1e-11)  # 13 significant digits printed
    assert g.alpha == beta


def test_chaining_edge_cases() -> None:
    assert chaining(IPGuarantee(1.0, 1e-5, 0.1), 0.0) == IPGuarantee(0.0, 0.0, 0.0)
    # ε → 0: the δ factor tends to h (ip note §3).
    assert chaining(IPGuarantee(1e-12, 1e-5, 0.1), 0.5).delta == pytest.approx(5e-5, rel=1e-9)
    with pytest.raises(ConfigError, match="alpha"):
        chaining_steps(1.0, 0.0)
    with pytest.raises(ConfigError, match="beta"):
        chaining_steps(-1.0, 0.1)


def test_composition_reference() -> None:
    # ip note §7: ε=[0.5, 0.3, 0.2], δ=[1e-5, 2e-5, 0], α=[0.1, 0.05, 0.2] → (1.0, 3e-05, 0.05).
    gs = [IPGuarantee(0.5, 1e-5, 0.1), IPGuarantee(0.3, 2e-5, 0.05), IPGuarantee(0.2, 0.0, 0.2)]
    for rule in (basic_composition, parallel_composition):
        g = rule(gs)
        assert g.epsilon == 1.0
        assert g.delta == pytest.approx(3e-5, rel=1e-15)
        assert g.alpha == 0.05
    with pytest.raises(ConfigError):
        basic_composition([])


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 500), st.integers(1, 100))
def test_ceiling_matches_integer_arithmetic(num: int, den: int) -> None:
    # β = num/100 and α = den/100 as decimals: ⌈β/α⌉ = ⌈num/den⌉ in integers.
    assert chaining_steps(num / 100, den / 100) == -(-num // den)
