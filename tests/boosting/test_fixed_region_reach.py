"""Fig. 5(b) where Δ exceeds the fixed region's width (Δ = 30, S = [−10, 10]): true values lie in
S, so neighbours are at most 20 apart; the exact extra loss subtracts the kernel's Rényi
divergence at that same distance."""

from __future__ import annotations

import pytest

from privrepro.boosting.exact import exact_rdp
from privrepro.boosting.fixed_region import fixed_region_extra_loss
from privrepro.boosting.kernels import GaussianKernel
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.regions import FixedRegion


def test_pair_distance_is_capped_at_the_width() -> None:
    region = FixedRegion(-10.0, 10.0)
    assert region.pair_distance(30.0) == 20.0 and region.pair_distance(1.0) == 1.0
    assert max(b - a for a, b in region.exact_pairs(30.0, 5)) == pytest.approx(20.0)


def test_extra_loss_is_the_divergence_beyond_the_kernels_at_the_same_distance() -> None:
    """α = 2 and 10 at ρ = 0.7, σ = 10: D_α of the outputs minus α·20²/(2σ²) (Mironov 2017,
    Prop. 7, at the distance 20 the pairs span), about −0.52 and −0.06 — not D_α minus the
    kernel's divergence at Δ = 30 (−5.52 and −25.06 before the distances were made one)."""
    out = fixed_region_extra_loss(20.0, 30.0, 10.0, [0.7], [2.0, 10.0], exact_pairs=5)
    exact = out[out["accountant"] == "exact"].set_index("alpha")["extra_loss"]
    mech = BoostedMechanism(GaussianKernel(10.0), FixedRegion(-10.0, 10.0), 0.7)
    for alpha in (2.0, 10.0):
        kernel_at_20 = alpha * 20.0**2 / (2 * 10.0**2)
        assert exact[alpha] == pytest.approx(exact_rdp(mech, 30.0, alpha, 5) - kernel_at_20)
    assert exact[2.0] == pytest.approx(-0.5206, abs=5e-4)
    assert exact[10.0] == pytest.approx(-0.0617, abs=5e-4)
    assert set(out["pair_distance"]) == {20.0}
