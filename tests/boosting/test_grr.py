"""PB-GRR (Prop. 7): the note's probability table (§5.4), its identities, unbiasedness of
eqs. (10)–(11) and the analytic MSE against Monte Carlo."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privrepro.boosting.grr import (
    analytic_mse,
    block_partition,
    estimate,
    grr_probabilities,
    monte_carlo_mse,
    output_matrix,
)


@pytest.mark.parametrize(
    ("s", "eps0", "p", "ps", "psbar", "rho"),
    [
        # note §5.4, ε = 5, |X| = 91 (6 printed decimals)
        (10, 0.0, 0.094825, 0.094825, 0.000639, 0.948247),
        (10, 1.0, 0.205902, 0.075747, 0.001387, 0.887624),
        (10, 2.5, 0.437725, 0.035931, 0.002949, 0.761101),
        (10, 5.0, 0.622504, 0.004194, 0.004194, 0.660254),
        (5, 0.0, 0.179229, 0.179229, 0.001208, 0.896144),
        (5, 2.5, 0.524163, 0.043026, 0.003532, 0.696267),
    ],
)
def test_probabilities_match_note(s, eps0, p, ps, psbar, rho) -> None:  # type: ignore[no-untyped-def]
    g = grr_probabilities(5.0, eps0, 91, s)
    assert (g.p, g.p_s, g.p_sbar, g.rho) == pytest.approx((p, ps, psbar, rho), abs=6e-7)


@pytest.mark.parametrize("eps0", [0.0, 0.7, 3.0, 5.0])
def test_identities(eps0: float) -> None:
    g = grr_probabilities(5.0, eps0, 91, 10)
    assert g.p + 9 * g.p_s + 81 * g.p_sbar == pytest.approx(1.0, abs=1e-15)
    assert g.p / g.p_sbar == pytest.approx(math.exp(5.0), rel=1e-13)  # ε-LDP is tight
    assert g.p_s / g.p_sbar == pytest.approx(math.exp(5.0 - eps0), rel=1e-13)


def test_eps0_equal_eps_is_plain_grr() -> None:
    g = grr_probabilities(2.0, 2.0, 20, 4)
    assert g.p == pytest.approx(math.exp(2) / (math.exp(2) + 19), rel=1e-14)
    assert g.p_s == pytest.approx(1 / (math.exp(2) + 19), rel=1e-14)


def test_output_matrix_rows_and_ldp() -> None:
    cat, n = block_partition(91, 10, "pad")
    assert n == 100 and np.bincount(cat).tolist() == [10] * 10
    g = grr_probabilities(5.0, 1.0, n, 10)
    M = output_matrix(g, cat)
    assert np.allclose(M.sum(axis=1), 1.0, atol=1e-14)
    assert M[0, 0] == pytest.approx(g.p, rel=1e-13) and M[0, 1] == pytest.approx(g.p_s, rel=1e-13)
    ratio = M.max(axis=0) / M.min(axis=0)  # ε-LDP: every column within e^ε
    assert ratio.max() <= math.exp(5.0) * (1 + 1e-12)
    short, n2 = block_partition(91, 10, "last_short")
    assert n2 == 91 and np.bincount(short)[-1] == 1


def test_estimators_are_unbiased_in_expectation() -> None:
    # eqs. (10)–(11) applied to the expected counts return the true counts exactly (Prop. 8)
    cat, n = block_partition(30, 5, "pad")
    hist = np.arange(1, n + 1) * 7
    g = grr_probabilities(3.0, 1.2, n, 5)
    expected = hist @ output_matrix(g, cat)
    F_S, F_x = estimate(expected, cat, g)
    assert np.allclose(F_x, hist, rtol=1e-10)
    assert np.allclose(F_S, np.bincount(cat, weights=hist), rtol=1e-10)


@pytest.mark.parametrize("eps0", [1.0, 5.0])
def test_analytic_mse_matches_monte_carlo(eps0: float) -> None:
    cat, n = block_partition(90, 10, "pad")
    hist = np.full(n, 500)
    g = grr_probabilities(5.0, eps0, n, 10)
    a_cat, a_val = analytic_mse(hist, cat, g)
    m_cat, se_cat, m_val, se_val = monte_carlo_mse(hist, cat, g, np.random.default_rng(3), 300)
    assert abs(m_cat - a_cat) < 5 * se_cat  # 5 Monte Carlo standard errors
    assert abs(m_val - a_val) < 5 * se_val


def test_value_mse_of_plain_grr_is_the_textbook_variance() -> None:
    # note §5.4: at ε₀ = ε the value MSE equals N q(1−q)/(p−q)² + n_x(1−p−q)/(p−q), averaged
    cat, n = block_partition(90, 10, "pad")
    hist = np.full(n, 500)
    g = grr_probabilities(5.0, 5.0, n, 10)
    N = hist.sum()
    p, q = g.p, g.p_sbar
    textbook = np.mean(N * q * (1 - q) / (p - q) ** 2 + hist * (1 - p - q) / (p - q))
    assert analytic_mse(hist, cat, g)[1] == pytest.approx(textbook, rel=1e-10)


def test_value_mse_is_infinite_at_eps0_zero() -> None:
    cat, n = block_partition(20, 5, "pad")
    assert math.isinf(analytic_mse(np.full(n, 10), cat, grr_probabilities(2.0, 0.0, n, 5))[1])


def test_category_mse_falls_as_eps0_falls() -> None:
    # note §5.4: category MSE falls monotonically as ε₀ → 0
    cat, n = block_partition(91, 10, "pad")
    hist = np.full(n, 450)
    vals = [
        analytic_mse(hist, cat, grr_probabilities(5.0, e, n, 10))[0] for e in (0.0, 1.0, 2.5, 5.0)
    ]
    assert vals == sorted(vals)
