"""Group privacy (cl paper, Sec. 4.4, Fig. 2) against the cl note's check values."""

from __future__ import annotations

import numpy as np
import pytest

from privrepro.dp.group import drop_probability_lower_bound, group_delta, largest_group_dropped


def test_drop_bound_reference() -> None:
    # cl note check 3 (ε=1, δ=1e-7): k=12 → 0.990528, k=13 → 0.974253, k=15 → 0.809751, 0 at k=17.
    got = drop_probability_lower_bound(1.0, 1e-7, [12, 13, 15, 17])
    assert np.allclose(got, [0.990528, 0.974253, 0.809751, 0.0], atol=1e-6)


def test_largest_group_dropped_reference() -> None:
    # cl note check 3: 12 for (ε=1, δ=1e-7) and 7 for (ε=1, δ=1e-5) at probability 0.99.
    assert largest_group_dropped(1.0, 1e-7) == 12
    assert largest_group_dropped(1.0, 1e-5) == 7
    assert largest_group_dropped(1.0, 0.5) == 0


def test_group_delta_sum() -> None:
    # δ_k = Σ_{i<k} e^{iε} δ written as the literal sum.
    for eps in [1e-8, 0.3, 2.0]:
        for k in [1, 2, 7, 20]:
            lit = sum(np.exp(i * eps) * 1e-6 for i in range(k))
            assert group_delta(eps, 1e-6, k) == pytest.approx(lit, rel=1e-7)
