"""pac paper, Theorems 1, 2, 8 and Corollary 1: MI → posterior success bounds (nats)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.optimize import brentq

from privrepro.pac.bounds import (
    generalization_bound,
    individual_success_bound,
    kl_bernoulli,
    pinsker_advantage_bound,
    posterior_success_bound,
)


def test_p_star_check_value() -> None:
    # pac note, check T2: p*(0.01, 1) = 0.35729 (paper Example 1 prints 0.36)
    assert posterior_success_bound(0.01, 1.0) == pytest.approx(0.3572905727, abs=1e-9)


@pytest.mark.parametrize(
    ("q", "row"),
    [
        (0.5, [0.5624, 0.5882, 0.6243, 0.6749, 0.7446, 0.8379, 0.9518, 1.0, 1.0]),
        (0.1, [0.1395, 0.1569, 0.1826, 0.2207, 0.2779, 0.3643, 0.4951, 0.6892, 0.9511]),
        (0.01, [0.0248, 0.0321, 0.0436, 0.0620, 0.0917, 0.1406, 0.2218, 0.3573, 0.5810]),
        (0.001, [0.0071, 0.0107, 0.0166, 0.0268, 0.0441, 0.0744, 0.1275, 0.2211, 0.3860]),
    ],
)
def test_p_star_table(q: float, row: list[float]) -> None:
    # pac note, table T1 (4 decimals printed, so tolerance 5e-5)
    v = 2.0 ** np.arange(-7, 2)
    assert posterior_success_bound(q, v) == pytest.approx(row, abs=5e-5)


def test_p_star_matches_brentq() -> None:
    # an independent root finder on KL(Bern(p)||Bern(q)) = v (scipy brentq, xtol 1e-14)
    for q, v in [(0.2, 0.3), (0.03, 0.05), (0.7, 0.1)]:
        ref = brentq(lambda p, q=q, v=v: float(kl_bernoulli(p, q)) - v, q, 1 - 1e-15, xtol=1e-14)
        assert posterior_success_bound(q, v) == pytest.approx(ref, abs=1e-12)


def test_p_star_saturates_at_log_inverse_prior() -> None:
    # KL(Bern(1)||Bern(q)) = log(1/q): p* = 1 exactly from v = log 2 on for q = 1/2 (note T1)
    assert posterior_success_bound(0.5, np.log(2.0)) == 1.0
    assert posterior_success_bound(0.5, np.log(2.0) - 1e-3) < 1.0


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-4, 0.99), st.floats(1e-4, 5.0), st.floats(1e-4, 5.0))
def test_p_star_properties(q: float, v1: float, v2: float) -> None:
    lo, hi = sorted([v1, v2])
    p_lo, p_hi = posterior_success_bound(q, lo), posterior_success_bound(q, hi)
    assert q <= p_lo <= p_hi <= 1.0  # monotone in v, never below the prior (Lemma 1)
    assert kl_bernoulli(p_lo, q) <= lo + 1e-9  # the inversion never overshoots the budget
    # Pinsker (Corollary 1) is looser: p* <= q + sqrt(v/2)
    assert p_lo <= q + pinsker_advantage_bound(lo) + 1e-12


def test_theorem1_on_a_toy_channel() -> None:
    # pac note, check T9: X uniform on {0..3}, Y = X + N(0, s^2), MAP adversary
    table = {0.5: (0.84523, 0.76202), 1.0: (0.39960, 0.53719), 2.0: (0.13583, 0.39806)}
    grid = np.linspace(-12, 15, 60001)
    for s, (mi_ref, succ_ref) in table.items():
        dens = stats.norm.pdf(grid[None, :], loc=np.arange(4)[:, None], scale=s) / 4
        mix = dens.sum(0)
        dx = grid[1] - grid[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            mi = np.nansum(dens * np.log(4 * dens / mix)) * dx  # p(x,y) log p(y|x)/p(y)
        succ = dens.max(0).sum() * dx
        assert mi == pytest.approx(mi_ref, abs=5e-5)  # quadrature vs the note's 5 decimals
        assert succ == pytest.approx(succ_ref, abs=5e-5)
        assert kl_bernoulli(succ, 0.25) <= mi  # Theorem 1, eq. (2)
        assert succ <= posterior_success_bound(0.25, mi)


def test_example1_theorem2_values() -> None:
    # pac note T2: the reconstructed Theorem 2 gives these (paper prints 0.17 at n=10, 0.06 at n=50)
    ref = {2: 0.2910, 5: 0.2037, 10: 0.14893, 20: 0.1069, 50: 0.06790, 100: 0.0484}
    got = individual_success_bound(0.01, 1.0, list(ref))
    assert got == pytest.approx(list(ref.values()), abs=5e-5)
    assert np.all(np.diff(got) < 0)  # monotone decreasing in n
    assert individual_success_bound(0.01, 1.0, 1) == pytest.approx(0.3572905727, abs=1e-9)


def test_theorem8_and_pinsker() -> None:
    assert generalization_bound(0.1) == pytest.approx(0.2236068, abs=1e-7)  # note T12
    assert pinsker_advantage_bound(1.0) == pytest.approx(0.7071068, abs=1e-7)  # note T1


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="prior"):
        posterior_success_bound(1.5, 1.0)
    with pytest.raises(ValueError, match="mi"):
        posterior_success_bound(0.5, -1.0)
    with pytest.raises(ValueError, match="n ="):
        individual_success_bound(0.01, 1.0, 0)
