"""Every CUDA code path of the library, run on the GPU and compared with the same call on the CPU.

Marked ``gpu``: where no CUDA device is present they are collected and skipped with one line
(``tests/conftest.py``). Where the two devices draw different random numbers (Poisson batches,
noise), the comparison removes the randomness (sampling rate 1, no noise) or draws it on the
CPU and moves it, so the results must agree to floating-point tolerance:

* DP-SGD: the closed-form head (``train_linear_head``), opacus' per-sample path on FiLM and the
  project's per-sample clipping of a convnet (``train_dpsgd``: unfold on CUDA, grouped
  convolution on the CPU), float64, clipping active — equal to 1e-9; a private run on CUDA (noise
  on the device) keeps the CPU's privacy record;
* pac batched training, every layout, float64 — equal to 1e-10;
* ip mechanisms on logits: Gauss-Output's accuracy grid (interval and direct methods) from the
  same noise — equal; Gauss-/Lap-Output releases from CPU-drawn noise — equal to 1e-12;
* the FiLM pixel cache (``HostImages``): batches gathered to CUDA equal the CPU's to 1e-6
  (float32 normalisation).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch import nn

pytestmark = pytest.mark.gpu

CUDA = torch.device("cuda")


def test_dpsgd_linear_head_on_cuda_equals_cpu() -> None:
    from privrepro.training.dpsgd import DPSGDHyper, train_linear_head

    g = torch.Generator().manual_seed(0)
    x = torch.randn(200, 32, generator=g, dtype=torch.float64)
    y = torch.randint(0, 5, (200,), generator=g)
    hp = DPSGDHyper(epochs=5, batch_size=200, lr=1e-2, clip=0.5, epsilon=None)  # q = 1, σ = 0
    heads = []
    for dev in ("cpu", CUDA):
        head = nn.Linear(32, 5, dtype=torch.float64)
        with torch.no_grad():
            head.weight.copy_(torch.linspace(-0.1, 0.1, 160, dtype=torch.float64).reshape(5, 32))
            head.bias.zero_()
        head.to(dev)
        gen = torch.Generator(device=dev).manual_seed(1)
        train_linear_head(head, x.to(dev), y.to(dev), hp, generator=gen)
        heads.append(torch.cat([head.weight.detach().cpu().flatten(), head.bias.detach().cpu()]))
    torch.testing.assert_close(heads[1], heads[0], rtol=1e-9, atol=1e-12)


def test_dpsgd_film_on_cuda_equals_cpu() -> None:
    from privrepro.continual.peft import make_film, small_vit
    from privrepro.training.dpsgd import DPSGDHyper, privacy_record, train_dpsgd

    g = torch.Generator().manual_seed(0)
    vit = small_vit(g).double()
    x = torch.rand(64, 3, 16, 16, generator=g, dtype=torch.float64)
    y = torch.randint(0, 4, (64,), generator=g)
    hp = DPSGDHyper(epochs=3, batch_size=64, lr=1e-3, clip=0.1, epsilon=None)  # q = 1, σ = 0
    trained = []
    for dev in ("cpu", CUDA):
        film = make_film(vit, 4).to(dev)
        gen = torch.Generator(device=dev).manual_seed(2)
        train_dpsgd(film, x.to(dev), y.to(dev), hp, generator=gen, physical_batch=16)
        trained.append(
            torch.cat([p.detach().cpu().flatten() for p in film.parameters() if p.requires_grad])
        )
    torch.testing.assert_close(trained[1], trained[0], rtol=1e-9, atol=1e-12)
    # a private run: noise drawn on the device, the same calibrated record as on the CPU
    private = DPSGDHyper(epochs=1, batch_size=16, lr=1e-3, clip=1.0, epsilon=2.0, accountant="rdp")
    film = make_film(vit, 4).to(CUDA)
    log = train_dpsgd(
        film, x.to(CUDA), y.to(CUDA), private, generator=torch.Generator(device=CUDA).manual_seed(3)
    )
    assert log.privacy == privacy_record(64, private)
    assert all(torch.isfinite(p).all() for p in film.parameters())


def test_dpsgd_convnet_per_sample_clipping_on_cuda_equals_cpu() -> None:
    from privrepro.training.dpsgd import DPSGDHyper, train_dpsgd

    g = torch.Generator().manual_seed(0)
    x = torch.rand(48, 1, 12, 12, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (48,), generator=g)
    hp = DPSGDHyper(epochs=3, batch_size=48, lr=1e-2, clip=0.1, epsilon=None)  # q = 1, σ = 0
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, stride=2),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(24, 3),
    ).double()
    trained = []
    for dev, engine in (("cpu", "privrepro"), (CUDA, "privrepro"), (CUDA, "opacus")):
        model = copy.deepcopy(net).to(dev)
        gen = torch.Generator(device=dev).manual_seed(2)
        train_dpsgd(
            model, x.to(dev), y.to(dev), hp, generator=gen, physical_batch=16, engine=engine
        )
        trained.append(torch.cat([p.detach().cpu().flatten() for p in model.parameters()]))
    torch.testing.assert_close(trained[1], trained[0], rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(trained[2], trained[0], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode", ["auto", "wide", "gather", "mask"])
def test_pac_batched_training_on_cuda_equals_cpu(mode: str) -> None:
    from privrepro.pac.training import MLPSpec, init_mlp, train_batched

    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((150, 12)))
    y = torch.tensor(rng.integers(0, 4, 150))
    spec = MLPSpec((12, 8, 6, 4))
    init = init_mlp(spec, torch.Generator().manual_seed(1), dtype=torch.float64)
    subsets = torch.tensor(np.stack([rng.choice(150, 70, replace=False) for _ in range(5)]))
    cpu = train_batched(spec, init, x, y, subsets, 25, 0.3, chunk=2, mode=mode)
    gpu = train_batched(
        spec, init.to(CUDA), x.to(CUDA), y.to(CUDA), subsets.to(CUDA), 25, 0.3, chunk=2, mode=mode
    )
    assert gpu.device.type == "cuda"
    torch.testing.assert_close(gpu.cpu(), cpu, rtol=0, atol=1e-10)


def test_ip_gauss_output_accuracy_on_cuda_equals_cpu_on_the_same_noise() -> None:
    from privrepro.inference import evaluate

    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 10, (2000,), generator=g)
    logits = torch.randn(2000, 10, generator=g) + 2.0 * nn.functional.one_hot(labels, 10)
    sigmas = [0.0, 0.3, 1.0, 3.0, 10.0]
    z = torch.randn(logits.shape, generator=g, dtype=torch.float64)
    cpu = evaluate._correct_intervals(logits.double(), labels, z)
    gpu = evaluate._correct_intervals(logits.double().to(CUDA), labels.to(CUDA), z.to(CUDA))
    for a, b in zip(cpu, gpu, strict=True):
        torch.testing.assert_close(b.cpu(), a, rtol=1e-12, atol=0)
    # on the device, the interval method equals the direct argmax from the same draws
    gen = lambda: torch.Generator().manual_seed(5)  # noqa: E731
    d_cuda = logits.to(CUDA)
    fast = evaluate.gauss_output_accuracy(d_cuda, labels.to(CUDA), sigmas, 4, gen())
    direct = evaluate.gauss_output_accuracy(d_cuda, labels.to(CUDA), sigmas, 4, gen(), "direct")
    # the same correct counts (the two methods divide by the count in different orders)
    np.testing.assert_array_equal(np.rint(fast * len(labels)), np.rint(direct * len(labels)))


def test_ip_noise_draws_take_the_units_generator_on_cuda() -> None:
    """The ip figures pass the unit's generator on the unit's device
    (``UnitContext.torch_generator``): the draws' seeds come from it there, reproducibly, and the
    interval method still equals the direct argmax on those draws."""
    from privrepro.inference import evaluate

    gen = lambda: torch.Generator(device=CUDA).manual_seed(5)  # noqa: E731
    assert evaluate.draw_seeds(gen(), 4) == evaluate.draw_seeds(gen(), 4)
    g = torch.Generator().manual_seed(1)
    labels = torch.randint(0, 10, (500,), generator=g).to(CUDA)
    logits = torch.randn(500, 10, generator=g).to(CUDA) + 2.0 * nn.functional.one_hot(labels, 10)
    fast = evaluate.gauss_output_accuracy(logits, labels, [0.5, 2.0], 3, gen())
    direct = evaluate.gauss_output_accuracy(logits, labels, [0.5, 2.0], 3, gen(), "direct")
    np.testing.assert_array_equal(np.rint(fast * 500), np.rint(direct * 500))


def test_ip_output_mechanisms_on_cuda_equal_cpu() -> None:
    from privrepro.inference import mechanisms

    g = torch.Generator().manual_seed(0)
    logits = torch.randn(50, 10, generator=g, dtype=torch.float64)
    for name in ("gauss_output", "lap_output"):
        fn = getattr(mechanisms, name)
        out = {}
        for dev in ("cpu", CUDA):
            # the release is C(x) + Z with Z drawn by the device's generator: same seed, same
            # device-independent statistics; the equality test uses Z from a CPU draw below
            out[str(dev)] = fn(logits.to(dev), 0.7, torch.Generator(device=dev).manual_seed(1), 200)
        for o in out.values():
            assert o.shape == (200, 50, 10)
        diff = out["cuda"].cpu() - logits
        assert abs(float(diff.std()) - (0.7 if name == "gauss_output" else 0.7 * 2**0.5)) < 0.02
    noise = mechanisms.laplace_noise((50, 10), 0.7, torch.Generator().manual_seed(3), torch.float64)
    torch.testing.assert_close((logits.to(CUDA) + noise.to(CUDA)).cpu(), logits + noise)


def test_pixel_cache_gathers_to_cuda_as_on_cpu() -> None:
    from privrepro.continual.pixels import HostImages

    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (40, 3, 8, 8), dtype=np.uint8)
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    idx = np.sort(rng.choice(40, 17, replace=False))
    cpu = HostImages([pixels[:25], pixels[25:]], mean, std).gather(idx)
    gpu = HostImages([pixels[:25], pixels[25:]], mean, std, CUDA).gather(idx)
    assert gpu.device.type == "cuda"
    torch.testing.assert_close(gpu.cpu(), cpu, rtol=1e-6, atol=1e-6)
