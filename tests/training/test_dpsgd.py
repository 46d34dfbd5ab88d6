"""DP-SGD: equivalence with plain training, closed-form norms against opacus, PRV calibration."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from privrepro.config import ConfigError
from privrepro.dp.accounting import OPACUS_RDP_ORDERS, calibrate_noise_multiplier
from privrepro.training.dpsgd import (
    DPSGDHyper,
    linear_head_per_sample_norms,
    plan_steps,
    pld_epsilon,
    poisson_batch,
    privacy_record,
    spent_epsilon,
    train_dpsgd,
    train_linear_head,
)

torch.set_num_threads(1)


def _data(n: int = 40, k: int = 6, c: int = 3, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, k, generator=g, dtype=torch.float64), torch.randint(
        0, c, (n,), generator=g
    )


def _plain_training(model: nn.Module, x, y, hp: DPSGDHyper, seed: int) -> None:
    """Non-private reference: same Poisson batches, loss summed and divided by q·n, Adam."""
    q, steps = plan_steps(x.shape[0], hp)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=hp.lr)
    for _ in range(steps):
        idx = poisson_batch(x.shape[0], q, gen)
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx], reduction="sum") / (
            q * x.shape[0]
        )
        loss.backward()
        opt.step()
        opt.zero_grad()


class _MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(6, dtype=torch.float64)
        self.frozen = nn.Linear(6, 6, dtype=torch.float64)
        self.frozen.requires_grad_(False)
        self.head = nn.Linear(6, 3, dtype=torch.float64)

    def forward(self, x):
        return self.head(torch.tanh(self.frozen(self.ln(x))))


def test_sigma_zero_no_clip_equals_plain_training_step_for_step():
    # σ = 0 and C = ∞: the DP step is Σ g_i / (q n) → Adam, i.e. exactly the plain step on the
    # same Poisson batches; float64 agreement to 1e-10 (only summation order differs).
    x, y = _data()
    hp = DPSGDHyper(epochs=3, batch_size=8, lr=1e-2, clip=math.inf, epsilon=None)
    torch.manual_seed(0)
    a = _MLP()
    b = _MLP()
    b.load_state_dict(a.state_dict())
    log = train_dpsgd(a, x, y, hp, generator=torch.Generator().manual_seed(5), physical_batch=3)
    _plain_training(b, x, y, hp, seed=5)
    assert log.steps == 15  # ⌊3 / (8/40)⌋
    for (na, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert torch.allclose(pa, pb, atol=1e-10, rtol=0), na
    assert not torch.equal(a.head.weight, torch.zeros_like(a.head.weight))


def test_head_closed_form_equals_plain_training():
    x, y = _data()
    hp = DPSGDHyper(epochs=2, batch_size=10, lr=5e-2, clip=math.inf, epsilon=None)
    a = nn.Linear(6, 3, dtype=torch.float64)
    b = nn.Linear(6, 3, dtype=torch.float64)
    b.load_state_dict(a.state_dict())
    train_linear_head(a, x, y, hp, generator=torch.Generator().manual_seed(1))
    _plain_training(b, x, y, hp, seed=1)
    assert torch.allclose(a.weight, b.weight, atol=1e-10)
    assert torch.allclose(a.bias, b.bias, atol=1e-10)


@pytest.mark.parametrize("bias", [True, False])
def test_closed_form_norms_equal_opacus_grad_sample(bias):
    # Reference: opacus GradSampleModule's per-sample gradients of the summed cross-entropy.
    from opacus import GradSampleModule

    x, y = _data(n=17, k=5, c=4, seed=3)
    head = nn.Linear(5, 4, bias=bias, dtype=torch.float64)
    gsm = GradSampleModule(head, loss_reduction="sum")
    logits = gsm(x)
    nn.functional.cross_entropy(logits, y, reduction="sum").backward()
    per = [p.grad_sample.reshape(17, -1) for p in head.parameters()]
    ref = torch.cat(per, dim=1).norm(dim=1)
    got = linear_head_per_sample_norms(x, logits.detach(), y, bias=bias)
    assert torch.allclose(got, ref, rtol=1e-12, atol=1e-12)
    gsm._close()


def test_closed_form_head_path_equals_opacus_path_with_clipping_and_noise():
    # Both paths consume one generator in the same order (batch, then weight and bias noise), so
    # with clipping active and σ > 0 they must agree to float64 round-off.
    x, y = _data(n=30)
    hp = DPSGDHyper(epochs=2, batch_size=3, lr=1e-2, clip=0.3, epsilon=1.0)
    rec = privacy_record(30, hp)
    a = nn.Linear(6, 3, dtype=torch.float64)
    b = nn.Linear(6, 3, dtype=torch.float64)
    b.load_state_dict(a.state_dict())
    train_linear_head(a, x, y, hp, generator=torch.Generator().manual_seed(9), privacy=rec)
    train_dpsgd(b, x, y, hp, generator=torch.Generator().manual_seed(9), privacy=rec)
    assert rec.noise_multiplier > 0
    assert torch.allclose(a.weight, b.weight, atol=1e-9)
    assert torch.allclose(a.bias, b.bias, atol=1e-9)


def _calibrate(eps: float, q: float, steps: int, accountant: str, tol: float) -> float:
    """DP-SGD's calibration (privacy_record's call): opacus' accountant and default orders."""
    return calibrate_noise_multiplier(
        eps,
        1e-5,
        steps,
        sampling_rate=q,
        method=accountant,  # type: ignore[arg-type]
        epsilon_tolerance=tol,
        rdp_orders=OPACUS_RDP_ORDERS,
    )


@pytest.mark.parametrize("eps,q,steps", [(1.0, 0.1, 400), (8.0, 0.1, 400)])
def test_prv_epsilon_of_run_within_target(eps, q, steps):
    sigma = _calibrate(eps, q, steps, "prv", 0.05)
    spent = spent_epsilon(sigma, q, steps, 1e-5, "prv")
    # the search stops within epsilon_tolerance = 0.05 below the target (upper end kept).
    assert eps - 0.0501 <= spent <= eps


@pytest.mark.parametrize(("eps", "q", "steps"), [(1.0, 0.1, 400), (8.0, 0.02, 2000)])
def test_rdp_calibration_is_opacus_get_noise_multiplier(eps, q, steps):
    """Reference: opacus' ``get_noise_multiplier`` (RDP, its default orders), bit for bit: the
    one calibration reproduces opacus' search step for step, and privacy_record uses it."""
    from opacus.accountants.utils import get_noise_multiplier

    want = get_noise_multiplier(
        target_epsilon=eps,
        target_delta=1e-5,
        sample_rate=q,
        steps=steps,
        accountant="rdp",
        epsilon_tolerance=0.01,
    )
    assert _calibrate(eps, q, steps, "rdp", 0.01) == want
    hp = DPSGDHyper(epochs=steps * q, batch_size=q * 1000, epsilon=eps, accountant="rdp")
    rec = privacy_record(1000, hp)
    assert (rec.sample_rate, rec.steps) == (q, steps)
    assert rec.noise_multiplier == want


def test_dpsgd_uses_opacus_default_orders():
    from opacus.accountants import RDPAccountant

    assert tuple(RDPAccountant.DEFAULT_ALPHAS) == OPACUS_RDP_ORDERS


@pytest.mark.parametrize("accountant", ["prv", "rdp"])
def test_spent_epsilon_equals_opacus_accountant(accountant):
    """The run's ε goes through privrepro.dp.accounting and is opacus' own number (reference:
    ``create_accountant(accountant).get_epsilon`` with its defaults)."""
    import warnings

    from opacus.accountants import create_accountant

    sigma, q, steps = 1.1, 0.05, 300
    acc = create_accountant(mechanism=accountant)
    acc.history = [(sigma, q, steps)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        want = acc.get_epsilon(delta=1e-5)
    assert spent_epsilon(sigma, q, steps, 1e-5, accountant) == pytest.approx(want, rel=1e-12)


def test_pld_reference_beside_prv():
    """dp_accounting's PLD ε of a calibrated run: both it and PRV's upper end bound the true ε;
    they agree within PRV's eps_error + PLD's discretisation (0.05 here), and the PLD number
    stays within the target (note §7 check 6 gives PLD < PRV < RDP for the same σ)."""
    for n, b, eps in ((500, 64.0, 1.0), (5000, 64.0, 8.0)):
        rec = privacy_record(n, DPSGDHyper(batch_size=b, epsilon=eps))
        ref = pld_epsilon(rec)
        assert abs(ref - rec.epsilon_spent) < 0.05
        assert ref <= eps
    assert math.isinf(pld_epsilon(privacy_record(100, DPSGDHyper(epsilon=None))))


def test_noise_multiplier_between_pld_and_rdp():
    # The note's §7 check 6: 40 epochs at q = 0.1, δ = 1e-5, ε = 8: PLD 1.423, RDP(int) 1.5147;
    # PRV must lie in [0.97·PLD, 1.0·RDP].
    sigma = _calibrate(8.0, 0.1, 400, "prv", 0.05)
    assert 0.97 * 1.423 <= sigma <= 1.5147


def test_privacy_record_parallel_and_nonprivate():
    rec = privacy_record(100, DPSGDHyper(epochs=4, batch_size=20, epsilon=1.0))
    assert rec.composition == "parallel" and rec.epsilon_spent <= 1.0
    assert rec.sample_rate == pytest.approx(0.2) and rec.steps == 20
    non = privacy_record(100, DPSGDHyper(epochs=4, batch_size=20, epsilon=None))
    assert non.noise_multiplier == 0.0 and math.isinf(non.epsilon_spent)


def test_poisson_batch_rate():
    # Binomial(20000, 0.05): mean 1000, sd ≈ 30.8; 5 sd tolerance.
    idx = poisson_batch(20000, 0.05, torch.Generator().manual_seed(0))
    assert abs(idx.numel() - 1000) < 5 * 30.8
    assert poisson_batch(0, 0.5, torch.Generator()).numel() == 0


@pytest.mark.parametrize(
    "field,value",
    [
        ("lr", 0.0),
        ("clip", -1.0),
        ("batch_size", 0.0),
        ("epsilon", -2.0),
        ("delta", 1.5),
        ("accountant", "x"),
    ],
)
def test_bad_hyper_raises_config_error(field, value):
    with pytest.raises(ConfigError, match=field):
        plan_steps(10, DPSGDHyper(**{field: value}))


def test_empty_data_still_returns_model():
    head = nn.Linear(4, 2)
    log = train_linear_head(
        head,
        torch.zeros(0, 4),
        torch.zeros(0, dtype=torch.long),
        DPSGDHyper(epsilon=1.0),
        generator=torch.Generator(),
    )
    assert log.steps == 0
