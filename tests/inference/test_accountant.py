"""IP composition and chaining (ip paper, Props. 2–4) against the ip note's §7 values."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privrepro.config import ConfigError
from privrepro.inference.accountant import (
    IPGuarantee,
    basic_composition,
    chaining,
    chaining_steps,
    parallel_composition,
)


@pytest.mark.parametrize(
    "eps,delta,alpha,beta,h,eps2,delta2",
    [
        (1.0, 1e-5, 0.1, 0.25, 3, 3.0, 1.110733792739e-04),  # note §7
        (1.0, 1e-5, 0.1, 0.2, 2, 2.0, 3.718281828459e-05),
        (1.0, 1e-5, 0.1, 0.1, 1, 1.0, 1e-5),
        (1.0, 1e-5, 0.1, 0.05, 1, 1.0, 1e-5),
        (0.5, 1e-5, 0.1, 0.3, 3, 1.5, 5.367003099159e-05),
        (0.1, 1e-5, 0.01, 0.1, 10, 1.0, 1.633799399966e-04),
    ],
)
def test_chaining_note_values(
    eps: float, delta: float, alpha: float, beta: float, h: int, eps2: float, delta2: float
) -> None:
    assert chaining_steps(beta, alpha) == h
    g = chaining(IPGuarantee(eps, delta, alpha), beta)
    assert g.epsilon == pytest.approx(eps2, rel=1e-12)
    assert g.delta == pytest.approx(delta2, rel=1e-11)  # the note prints 13 significant digits
    assert g.alpha == beta


@pytest.mark.parametrize(
    "alpha,beta,h", [(0.01, 0.07, 7), (0.01, 0.14, 14), (0.03, 0.27, 9), (0.03, 0.33, 11)]
)
def test_chaining_float_pitfall(alpha: float, beta: float, h: int) -> None:
    # note §7: math.ceil(0.07/0.01) is 8 in floats; the exact ⌈β/α⌉ is 7
    assert math.ceil(0.07 / 0.01) == 8
    assert chaining_steps(beta, alpha) == h


def test_ceiling_of_exact_inputs() -> None:
    # str / Decimal / Fraction are taken exactly; a hair above 7/100 needs an 8th step
    assert chaining_steps("0.07", Decimal("0.01")) == 7
    assert chaining_steps(Fraction(7, 100) + Fraction(1, 10**9), 0.01) == 8
    assert chaining_steps(0, 0.1) == 0


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 500), st.integers(1, 100))
def test_ceiling_matches_integer_arithmetic(num: int, den: int) -> None:
    # β = num/100 and α = den/100 as decimals: ⌈β/α⌉ = ⌈num/den⌉ in integers.
    assert chaining_steps(num / 100, den / 100) == -(-num // den)


def test_chaining_edge_cases() -> None:
    assert chaining(IPGuarantee(1.0, 1e-5, 0.1), 0.0) == IPGuarantee(0.0, 0.0, 0.0)
    # ε → 0: the δ factor (e^{hε}−1)/(e^ε−1) tends to h (ip note §3)
    assert chaining(IPGuarantee(0.0, 1e-5, 0.1), 0.3).delta == pytest.approx(3e-5, rel=1e-12)
    tiny = chaining(IPGuarantee(1e-9, 1e-5, 0.1), 0.3).delta
    assert tiny == pytest.approx(3e-5, rel=1e-6)
    assert chaining(IPGuarantee(1e-12, 1e-5, 0.1), 0.5).delta == pytest.approx(5e-5, rel=1e-9)
    # the factor equals the group-privacy sum Σ_{j<h} e^{jε}
    g = chaining(IPGuarantee(0.7, 1e-6, 0.1), 0.45)
    assert g.delta == pytest.approx(1e-6 * sum(math.exp(j * 0.7) for j in range(5)), rel=1e-12)


def test_composition_note_value() -> None:
    # note §7: ε = [0.5, 0.3, 0.2], δ = [1e-5, 2e-5, 0], α = [0.1, 0.05, 0.2] → (1.0, 3e-05, 0.05)
    gs = [IPGuarantee(0.5, 1e-5, 0.1), IPGuarantee(0.3, 2e-5, 0.05), IPGuarantee(0.2, 0.0, 0.2)]
    for rule in (basic_composition, parallel_composition):
        out = rule(gs)
        assert out.epsilon == 1.0
        assert out.delta == pytest.approx(3e-5, rel=1e-15)
        assert out.alpha == 0.05


def test_bad_parameters_name_the_key() -> None:
    with pytest.raises(ConfigError, match="delta"):
        IPGuarantee(1.0, -1.0, 0.1)
    with pytest.raises(ConfigError, match="guarantees"):
        basic_composition([])
    with pytest.raises(ConfigError, match="alpha"):
        chaining_steps(1.0, 0.0)
    with pytest.raises(ConfigError, match="beta"):
        chaining_steps(-1.0, 0.1)
