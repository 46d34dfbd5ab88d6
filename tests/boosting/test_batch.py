"""The vectorised accountant and Algorithm 2 (used by Figs. 2–3) agree with the scalar path."""

from __future__ import annotations

import numpy as np
import pytest

from privrepro.boosting.batch import (
    analytic_sigma_batch,
    gaussian_baseline_batch,
    optimise_eps0_batch,
    paper_epsilon_batch,
)
from privrepro.boosting.design import PBSetting, gaussian_baseline_epsilon, optimise_eps0

RHO = np.array([0.9, 0.8, 0.7])
DQ = np.array([1.0, 4.0, 2.0])
SIZE = np.array([10.0, 20.0, 50.0])


def test_analytic_sigma_batch_matches_note() -> None:
    # note §5.1: σ(1, 1e-5) = 3.730631634815949, σ(0.1, 1e-5) = 30.749566131977787
    got = analytic_sigma_batch(np.array([1.0, 0.1]), 1e-5, 1.0)
    assert np.allclose(got, [3.730631634815949, 30.749566131977787], rtol=1e-10)


@pytest.mark.parametrize("case", ["absolute", "relative", "fixed"])
@pytest.mark.parametrize(("notion", "level"), [("dp", 1e-5), ("dp", 1e-7), ("rdp", 10.0)])
def test_batch_equals_scalar(case: str, notion: str, level: float) -> None:
    kw = {"delta": level} if notion == "dp" else {"alpha": level}
    settings = [
        PBSetting(case, r, d, s, notion=notion, **kw)  # type: ignore[arg-type]
        for r, d, s in zip(RHO, DQ, SIZE, strict=True)
    ]
    base = gaussian_baseline_batch(notion, RHO, DQ, SIZE, level)
    assert np.allclose(base, [gaussian_baseline_epsilon(s) for s in settings], rtol=1e-10)
    eps0 = np.array([0.3, 1.0, 2.0])
    got = paper_epsilon_batch(case, notion, RHO, DQ, SIZE, level, eps0)
    want = [s.epsilon(float(e)) for s, e in zip(settings, eps0, strict=True)]
    assert np.allclose(got, want, rtol=1e-9, atol=1e-12)  # two root-finders, tolerance 1e-11
    _e0, e = optimise_eps0_batch(case, notion, RHO, DQ, SIZE, level, base)
    ref = [optimise_eps0(s) for s in settings]
    assert np.allclose(e, [r.epsilon for r in ref], rtol=1e-8, atol=1e-10)
