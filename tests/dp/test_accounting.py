"""Accounting wrappers against the closed form and the cl note's reference values."""

from __future__ import annotations

import pytest

from privrepro.config import ConfigError
from privrepro.dp.accounting import calibrate_noise_multiplier, gaussian_epsilon, prv_estimate
from privrepro.dp.gaussian import analytic_sigma, epsilon_for_delta


def test_pld_matches_exact_gaussian_profile() -> None:
    # cl note check 5: PLD ε of GaussianDpEvent(analytic σ) is 1.000 / 8.000 (±1e-3).
    # Discretisation 1e-3 for ε=8 keeps the test fast; its pessimistic error is below 1e-3.
    for eps, disc in ((1.0, 1e-4), (8.0, 1e-3)):
        r = gaussian_epsilon(
            analytic_sigma(eps, 1e-5), 1, 1e-5, method="pld", pld_discretization=disc
        )
        assert r.kind == "bound" and r.method == "pld"
        assert r.epsilon == pytest.approx(eps, abs=1e-3)
    # T-fold composition: dp_accounting's PLD against the closed form μ√T (exact); PLD's
    # pessimistic discretisation (1e-4) bounds it from above, within 1e-3.
    exact = gaussian_epsilon(4.0, 10, 1e-5, method="exact")
    pld = gaussian_epsilon(4.0, 10, 1e-5, method="pld")
    assert exact.kind == "exact"
    assert exact.epsilon == pytest.approx(float(epsilon_for_delta(1e-5, 4.0 / 10**0.5)))
    assert exact.epsilon - 1e-9 <= pld.epsilon <= exact.epsilon + 1e-3


def test_sequential_composition_reference() -> None:
    # cl note (Cosine Classifier): 10 releases composed sequentially at σ(1, 1e-5) = 3.73 give
    # ε = 3.62, at σ(8, 1e-5) = 0.60 give 35.6 (printed to 3 significant digits).
    for eps, total in ((1.0, 3.62), (8.0, 35.6)):
        r = gaussian_epsilon(analytic_sigma(eps, 1e-5), 10, 1e-5, method="exact")
        assert r.epsilon == pytest.approx(total, rel=2e-3)


@pytest.mark.slow  # 14 062 subsampled steps through PLD and PRV: ~5 s plus the torch import
def test_dpsgd_case_1() -> None:
    # cl note check 6, case 1: q = 256/60000, σ = 1.1, 14 062 steps, δ = 1e-5.
    kw = dict(sampling_rate=256 / 60000)
    pld = gaussian_epsilon(1.1, 14062, 1e-5, method="pld", **kw)
    assert pld.epsilon == pytest.approx(2.3817, abs=1e-3)  # PLD 2.3817
    rdp_int = gaussian_epsilon(
        1.1, 14062, 1e-5, method="rdp", rdp_orders=tuple(range(2, 256)), **kw
    )
    assert rdp_int.epsilon == pytest.approx(2.5970, abs=1e-4)  # opacus, orders 2..255
    lo, est, hi = prv_estimate(1.1, 14062, 1e-5, **kw)
    assert (lo.kind, est.kind, hi.kind) == ("bound", "estimate", "bound")
    assert lo.epsilon <= est.epsilon <= hi.epsilon
    assert abs(est.epsilon - pld.epsilon) <= 0.05  # note: PRV within ±0.05 of PLD
    assert hi.epsilon <= rdp_int.epsilon


def test_calibration() -> None:
    # Exact: σ for T releases is √T times the analytic σ (closed form).
    s = calibrate_noise_multiplier(1.0, 1e-5, 4, method="exact")
    assert s == pytest.approx(2 * analytic_sigma(1.0, 1e-5), rel=1e-12)
    assert calibrate_noise_multiplier.cache_info().currsize >= 1
    # cl note check 6: RDP(int) noise multiplier for ε=8, q=0.1, 400 steps, δ=1e-5 is 1.5147;
    # opacus' fractional orders can only lower it; the returned σ's ε lies within the tolerance
    # below the target, never above.
    kw = dict(sampling_rate=0.1, epsilon_tolerance=1e-3)
    s_rdp = calibrate_noise_multiplier(8.0, 1e-5, 400, method="rdp", **kw)
    assert s_rdp == pytest.approx(1.5147, rel=1e-2)
    e_rdp = gaussian_epsilon(s_rdp, 400, 1e-5, sampling_rate=0.1, method="rdp").epsilon
    assert 8.0 - 1e-3 <= e_rdp <= 8.0
    # PLD (the tightest bound here): its σ lies below the RDP σ, its ε within the tolerance;
    # the note's PLD σ for this case is 1.423.
    s_pld = calibrate_noise_multiplier(8.0, 1e-5, 400, method="pld", **kw)
    e_pld = gaussian_epsilon(s_pld, 400, 1e-5, sampling_rate=0.1, method="pld").epsilon
    assert 8.0 - 1e-3 <= e_pld <= 8.0
    assert s_pld == pytest.approx(1.423, rel=5e-3) and s_pld < s_rdp


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="epsilon_tolerance"):
        calibrate_noise_multiplier(1.0, 1e-5, 10, method="pld", epsilon_tolerance=0.0)
    with pytest.raises(ConfigError, match="target_epsilon"):
        calibrate_noise_multiplier(-1.0, 1e-5, 10)
    with pytest.raises(ConfigError, match="sampling_rate"):
        gaussian_epsilon(1.0, 10, 1e-5, sampling_rate=0.0)
    with pytest.raises(ConfigError, match="method"):
        gaussian_epsilon(1.0, 10, 1e-5, sampling_rate=0.5, method="exact")
    with pytest.raises(ConfigError, match="method"):
        gaussian_epsilon(1.0, 10, 1e-5, method="moments")  # type: ignore[arg-type]


def test_memoised_opacus_rdp_gives_opacus_values_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The memo on opacus' per-order RDP (``_memoise_opacus_rdp``) changes no bit: ε from the RDP
    and PRV accountants equal what opacus gives without it, and the σ calibrated with the memo
    meets the target under plain opacus within the tolerance."""
    from opacus.accountants import PRVAccountant, RDPAccountant
    from opacus.accountants.analysis import rdp
    from opacus.accountants.analysis.prv import prvs

    from privrepro.dp.accounting import DEFAULT_RDP_ORDERS, _prv

    sigmas, q, steps, delta = (0.7, 1.3, 2.9), 0.07, 40, 1e-5
    ours_rdp = [gaussian_epsilon(s, steps, delta, sampling_rate=q, method="rdp") for s in sigmas]
    memo = rdp._compute_rdp
    assert hasattr(memo, "cache_info") and prvs._compute_rdp is memo
    ours_prv = _prv(1.3, q, steps, delta, 0.01)
    sigma = calibrate_noise_multiplier(2.0, delta, steps, sampling_rate=q, method="prv")

    def plain_prv(s: float) -> tuple[float, ...]:
        acc = PRVAccountant()
        acc.history = [(s, q, steps)]
        dprv = acc._get_dprv(eps_error=0.01, delta_error=delta / 1000)
        return tuple(float(e) for e in dprv.compute_epsilon(delta, delta / 1000, 0.01))

    monkeypatch.setattr(rdp, "_compute_rdp", memo.__wrapped__)  # opacus as shipped
    monkeypatch.setattr(prvs, "_compute_rdp", memo.__wrapped__)
    for s, ours in zip(sigmas, ours_rdp, strict=True):
        acc = RDPAccountant()
        acc.history = [(s, q, steps)]
        assert ours.epsilon == acc.get_epsilon(delta, alphas=list(DEFAULT_RDP_ORDERS))
    assert ours_prv == plain_prv(1.3)
    assert 2.0 - 0.01 <= plain_prv(sigma)[2] <= 2.0
