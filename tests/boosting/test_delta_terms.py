"""The kept ε-free part of the pairs' δ (a root search's evaluations) gives the one-shot numbers.

Expected values: :func:`privrepro.boosting.pair_pieces.pair_deltas` (the closed form of the
module docstring, every Gaussian CDF computed afresh) on the same pairs.
"""

from __future__ import annotations

import numpy as np
import pytest

from privrepro.boosting.exact_batch import GaussianPBBatch
from privrepro.boosting.pair_pieces import DeltaTerms, pair_deltas


@pytest.mark.parametrize("case", ["relative", "fixed", "absolute"])
def test_kept_terms_give_the_one_shot_delta_at_every_epsilon(case: str) -> None:
    rng = np.random.default_rng(7)
    n = 64
    batch = GaussianPBBatch.build(
        case, rng.uniform(2.0, 60.0, n), 0.9, rng.uniform(0.5, 6.0, n), 20.0, 0.05, 5
    )
    terms = DeltaTerms.of(batch.pieces, batch.sigma)
    for base in (-2.0, 0.0, 0.2, 1.0, 4.0, 30.0):
        eps = base + rng.uniform(0.0, 0.2, n)
        want = pair_deltas(batch.pieces, batch.sigma, eps)
        assert np.any(want > 0) or base > 4
        np.testing.assert_allclose(terms.at(eps), want, rtol=1e-13, atol=1e-300)


def test_the_profile_of_some_mechanisms_is_theirs_in_the_whole_batch() -> None:
    """``_delta_rows`` (a root search's running points alone) against :meth:`delta` of the whole
    batch, read at the same rows (relative region: the pairs and the bound beyond the reach)."""
    rng = np.random.default_rng(3)
    n = 40
    batch = GaussianPBBatch.build(
        "relative", rng.uniform(2.0, 60.0, n), 0.9, rng.uniform(0.5, 6.0, n), 20.0, 0.05, 5
    )
    eps = rng.uniform(0.0, 3.0, n)
    rows = np.array([3, 5, 17, 39])
    np.testing.assert_allclose(
        batch._delta_rows(eps[rows], rows), batch.delta(eps)[rows], rtol=1e-15, atol=0.0
    )
