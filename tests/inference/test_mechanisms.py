"""Samplers of Lap-Output, Gauss-Output and Gauss-Input (ip paper, Defs. 3–5) and the accuracy
evaluation on seeded draws."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from privrepro.inference.calibration import (
    gauss_input_sigma,
    gauss_output_sigma,
    lap_output_scale,
)
from privrepro.inference.evaluate import gauss_input_accuracy, gauss_output_accuracy
from privrepro.inference.mechanisms import gauss_input, gauss_output, lap_output, laplace_noise
from privrepro.inference.networks import NormalizedNet


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_laplace_moments() -> None:
    # Laplace(b): mean 0, variance 2b² (note §7: b = 0.1 → variance 0.02); 400k draws, the sample
    # variance's relative standard error is sqrt((μ4/σ⁴ − 1)/n) = sqrt(5/n) ≈ 0.0035 → tol 2 %
    z = laplace_noise((400_000,), 0.1, gen(0), dtype=torch.float64)
    assert float(z.mean()) == pytest.approx(0.0, abs=5 * (0.02 / 400_000) ** 0.5)
    assert float(z.var()) == pytest.approx(0.02, rel=0.02)
    # median |Z| = b ln 2
    assert float(z.abs().median()) == pytest.approx(0.1 * np.log(2), rel=0.01)


def test_laplace_log_density_ratio_bounded() -> None:
    # Thm 1 (App. A-E): for a linear C with ℓ1 norm μ and ‖x_a − x_b‖₁ ≤ α, the log density ratio
    # of C(x)+Lap(μα/ε)^k is ≤ ε everywhere; exact: Σ|y − C x_b|/b − Σ|y − C x_a|/b ≤ ‖C(x_a − x_b)‖₁/b
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 6))
    mu = np.abs(a).sum(0).max()  # ‖A‖_{1→1}: the largest column ℓ1 norm
    eps, alpha = 0.7, 0.3
    b = float(lap_output_scale(eps, alpha, mu))
    worst = 0.0
    for _ in range(2000):
        d = rng.normal(size=6)
        d *= alpha / np.abs(d).sum()
        xa = rng.normal(size=6)
        ya = torch.as_tensor(a @ xa)
        y = lap_output(ya, b, gen(int(rng.integers(1 << 30))), n_draws=20).numpy()
        ratio = (np.abs(y - a @ (xa + d)).sum(1) - np.abs(y - a @ xa).sum(1)) / b
        worst = max(worst, float(ratio.max()))
    assert worst <= eps + 1e-12


def test_samplers_shapes_and_seeds() -> None:
    logits = torch.randn(7, 3, generator=gen(1))
    out = gauss_output(logits, 0.5, gen(2), n_draws=4)
    assert out.shape == (4, 7, 3)
    assert torch.equal(out, gauss_output(logits, 0.5, gen(2), n_draws=4))
    assert torch.equal(gauss_output(logits, 0.0, gen(3)), logits)
    x = torch.rand(5, 1, 4, 4, generator=gen(4))
    lin = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 3))
    y = gauss_input(lin, x, 0.2, gen(5), n_draws=3)
    assert y.shape == (3, 5, 3)
    with pytest.raises(ValueError, match="sigma"):
        gauss_output(logits, -1.0, gen(0))


def _logits_task(n: int = 2000, k: int = 10) -> tuple[torch.Tensor, torch.Tensor]:
    g = gen(7)
    labels = torch.randint(0, k, (n,), generator=g)
    logits = torch.randn(n, k, generator=g) + 3.0 * torch.nn.functional.one_hot(labels, k)
    return logits, labels


def test_output_accuracy_zero_sigma_is_clean_and_huge_is_chance() -> None:
    logits, labels = _logits_task()
    clean = float((logits.argmax(1) == labels).double().mean())
    acc = gauss_output_accuracy(logits, labels, [0.0, 1e6], n_draws=6, generator=gen(0))
    assert acc.shape == (2, 6)
    assert np.all(acc[0] == clean)
    # chance 1/10; the mean of 6 × 2000 Bernoulli(0.1) has sd 0.0027 → 5 sd
    assert acc[1].mean() == pytest.approx(0.1, abs=0.014)


def test_output_accuracy_depends_on_alpha_over_eps_only() -> None:
    # Fig. 5 remark: σ ∝ α/ε, and with common noise draws the accuracy is a function of σ
    logits, labels = _logits_task()
    pts = [(0.05, 0.5), (0.1, 1.0), (0.2, 2.0), (0.1, 0.5)]
    sig = [float(gauss_output_sigma(e, 1e-5, a)) for a, e in pts]
    acc = gauss_output_accuracy(logits, labels, sig, n_draws=5, generator=gen(3))
    assert np.array_equal(acc[0], acc[1]) and np.array_equal(acc[1], acc[2])
    assert acc[3].mean() < acc[1].mean()  # twice the noise costs accuracy
    # the same seed reproduces bit-identically; draws differ from each other
    again = gauss_output_accuracy(logits, labels, sig, n_draws=5, generator=gen(3))
    assert np.array_equal(acc, again)
    assert len(set(acc[1])) > 1


def _tiny_net() -> NormalizedNet:
    torch.manual_seed(0)  # test-local construction of a fixed toy model
    body = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 4))
    with torch.no_grad():
        body[1].weight.copy_(torch.eye(4, 16) * 5.0)
        body[1].bias.zero_()
    return NormalizedNet(body, [0.5], [0.25])


def test_input_accuracy_clean_chance_and_spaces() -> None:
    net = _tiny_net()
    x = torch.zeros(400, 1, 4, 4)
    labels = torch.randint(0, 4, (400,), generator=gen(1))
    x[torch.arange(400), 0, 0, labels] = 1.0
    clean = float((net(x).argmax(1) == labels).float().mean())
    assert clean == 1.0
    acc = gauss_input_accuracy(net, x, labels, [0.0, 1e5], 4, gen(2), "pixel", batch_size=150)
    assert np.all(acc[0] == 1.0)
    assert acc[1].mean() == pytest.approx(0.25, abs=0.06)  # 4 classes; sd 0.011 → ~5 sd
    # normalised-space noise σ equals pixel-space noise σ·std (std = 0.25): same draws, same result
    a_norm = gauss_input_accuracy(net, x, labels, [0.3], 3, gen(5), "normalized")
    a_pix = gauss_input_accuracy(net, x, labels, [0.3 * 0.25], 3, gen(5), "pixel")
    assert np.allclose(a_norm, a_pix)
    # α/ε invariance of Gauss-Input (ip paper, Sec. V on Table 6: "the accuracy for α=0.01 and
    # ε=0.1 precisely corresponds to the accuracy for α=0.1 and ε=1"): σ = sqrt(2 ln(1.25/δ))·α/ε
    # depends on α/ε only, so the same draws give the same accuracies; another ratio does not
    s_small = float(gauss_input_sigma(0.1, 1e-5, 0.01))
    s_large = float(gauss_input_sigma(1.0, 1e-5, 0.1))
    s_other = float(gauss_input_sigma(1.0, 1e-5, 0.2))
    assert s_small == pytest.approx(0.4844805262605389, rel=1e-12)  # √(2 ln 125000)·0.1
    assert s_large == pytest.approx(s_small, rel=1e-12)
    assert s_other == pytest.approx(2 * s_small, rel=1e-12)
    a_small = gauss_input_accuracy(net, x, labels, [s_small], 3, gen(9))
    a_large = gauss_input_accuracy(net, x, labels, [s_large], 3, gen(9))
    a_other = gauss_input_accuracy(net, x, labels, [s_other], 3, gen(9))
    assert np.array_equal(a_small, a_large)
    assert a_other.mean() < a_small.mean() - 0.05  # twice the noise costs accuracy


def test_interval_method_equals_direct_argmax() -> None:
    # the σ-interval evaluation is exact: the same draws give the same accuracies as computing
    # every argmax (ties have probability zero)
    g = gen(11)
    labels = torch.randint(0, 7, (3000,), generator=g)
    logits = torch.randn(3000, 7, generator=g) + 1.5 * torch.nn.functional.one_hot(labels, 7)
    sig = np.concatenate([[0.0], np.geomspace(1e-3, 50, 40)])
    fast = gauss_output_accuracy(logits, labels, sig, 4, gen(12), method="interval")
    slow = gauss_output_accuracy(logits, labels, sig, 4, gen(12), method="direct")
    assert np.array_equal(fast, slow)
