"""DP-SGD against non-private training of the same model on the same data and Poisson batches.

Every row: the seconds of a DP-SGD run (per-sample clipping and Gaussian noise, calibrated to
ε = 1 at δ = 1e-5) against the same run without privacy (the ``floor``: plain Adam on the same
batches, no per-sample gradients). The speed-up is ≤ 1 and measures the cost of privacy.

* a small convnet (2 conv + 1 linear layer, 28×28 inputs):
  :func:`privrepro.training.dpsgd.train_dpsgd` with the project's per-sample clipping
  (:class:`privrepro.training.per_sample.PerSampleClipper`, the default for this model) — the
  issue's target is ≥ 0.8 — and with opacus' per-sample gradients (``engine="opacus"``, what
  ``train_dpsgd`` ran before), and the two against each other (opacus as the peer library); the
  three runs are timed in alternation, best of 3 each, so a change of load hits all of them;
* a linear head on cached 768-d features (cl Tables A3–A7): the closed-form per-sample norms
  (:func:`~privrepro.training.dpsgd.train_linear_head`), and opacus on the same head;
* FiLM on the smoke profile's small ViT: opacus;
* the paper recipe's FiLM on ViT-B/16 at 224² (random weights): a few steps, scaled to one task
  (5,000 images × 40 epochs), on the benchmark device — on CUDA the images are gathered from a
  host uint8 pixel store (:class:`privrepro.continual.pixels.HostImages`) as ``profile=paper``
  runs them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from privrepro.benchmark_harness import row
from privrepro.training.dpsgd import (
    DPSGDHyper,
    PrivacyRecord,
    plan_steps,
    poisson_batch,
    privacy_record,
    train_dpsgd,
    train_linear_head,
)


def _plain(
    model: nn.Module, x: Any, y: torch.Tensor, hp: DPSGDHyper, seed: int, n: int | None = None
) -> None:
    """Non-private Adam on the same Poisson batches as DP-SGD with the same seed."""
    from privrepro.training.rows import gather_rows, num_rows

    n = num_rows(x) if n is None else n
    q, steps = plan_steps(n, hp)
    gen = torch.Generator(device=y.device).manual_seed(seed)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=hp.lr)
    for _ in range(steps):
        idx = poisson_batch(n, q, gen)
        loss = nn.functional.cross_entropy(model(gather_rows(x, idx)), y[idx], reduction="sum")
        (loss / (q * n)).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


def _seconds(fn: Callable[[], Any], device: str, repeats: int = 2, warm: bool = True) -> float:
    """Best of ``repeats`` timed calls after one warm-up call (lazy initialisation, caches)."""
    if warm:
        fn()
    best = float("inf")
    for _ in range(repeats):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def _interleaved(fns: dict[str, Callable[[], Any]], device: str, repeats: int) -> dict[str, float]:
    """Best of ``repeats`` timed calls of each function, taken in alternation after one warm-up
    call each (a change of load on a shared machine then hits every function alike)."""
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            best[name] = min(best[name], _seconds(fn, device, repeats=1, warm=False))
    return best


def small_convnet(classes: int = 10) -> nn.Module:
    """Conv(1→16, 3×3) → ReLU → max-pool 2 → Conv(16→32, 3×3) → ReLU → max-pool 2 → Linear:
    a small convnet for 28×28 images (26,474 parameters at 10 classes)."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 7 * 7, classes),
    )


def _dp_vs_plain(
    name: str,
    make: Callable[[], nn.Module],
    x: Any,
    y: torch.Tensor,
    hp: DPSGDHyper,
    rec: PrivacyRecord,
    device: str,
    note: str,
    physical_batch: int,
    dp: Callable[..., Any] = train_dpsgd,
    repeats: int = 2,
) -> dict[str, Any]:
    a, b = make(), make()

    def private() -> None:
        gen = torch.Generator(device=y.device).manual_seed(1)
        # train_dpsgd's rows here time opacus (engine="opacus"), as their names say
        kw = {"physical_batch": physical_batch, "engine": "opacus"} if dp is train_dpsgd else {}
        dp(a, x, y, hp, generator=gen, privacy=rec, **kw)

    t_dp = _seconds(private, device, repeats)
    t_plain = _seconds(lambda: _plain(b, x, y, hp, 1), device, repeats)
    return row(
        "dpsgd",
        f"{name} ({device})",
        t_dp,
        "s",
        t_plain,
        "non-private Adam on the same model, data and Poisson batches",
        "floor",
        f"{note}; ε = {rec.epsilon_target:g}, δ = {rec.delta:g}, σ = "
        f"{rec.noise_multiplier:.3f}, {rec.steps} steps of expected batch {hp.batch_size:g}",
    )


def bench(device: str = "cpu", quick: bool = False) -> list[dict[str, Any]]:
    # building modules (nn.Linear, nn.Conv2d, timm) draws from torch's global generator: the
    # draws happen inside fork_rng, which gives the generator's state back
    with torch.random.fork_rng(devices=[]):
        return _rows(device, quick)


def _rows(device: str, quick: bool) -> list[dict[str, Any]]:
    from privrepro.continual.peft import make_film, small_vit

    dev = torch.device(device)
    g = torch.Generator().manual_seed(0)
    rows: list[dict[str, Any]] = []
    # --- a small convnet on 28×28 images
    rows += _convnet_rows(dev, device, quick)
    # --- head-only on cached features: one CIFAR task (5,000 × 768, 100 labels)
    n = 500 if quick else 5000
    x = torch.randn(n, 768, generator=g).to(dev)
    y = torch.randint(0, 100, (n,), generator=g).to(dev)
    hp = DPSGDHyper(epochs=1, batch_size=n / 10, lr=1e-3, clip=1.0, epsilon=1.0, accountant="rdp")
    rec = privacy_record(n, hp)
    for name, dp, pb in (
        ("linear head, closed-form per-sample norms", train_linear_head, 0),
        ("linear head, opacus per-sample gradients", train_dpsgd, 1000),
    ):
        rows.append(
            _dp_vs_plain(
                name,
                lambda: nn.Linear(768, 100).to(dev),
                x,
                y,
                hp,
                rec,
                device,
                f"{n} × 768 cached features, 100 labels",
                physical_batch=pb,
                dp=dp,
            )
        )
    # --- FiLM on the smoke ViT
    vit = small_vit(g).to(dev)
    n = 240 if quick else 1200
    xi = torch.rand(n, 3, 16, 16, generator=g).to(dev)
    yi = torch.randint(0, 20, (n,), generator=g).to(dev)
    hpf = DPSGDHyper(epochs=2, batch_size=n / 10, lr=1e-3, clip=1.0, epsilon=1.0, accountant="rdp")
    rows.append(
        _dp_vs_plain(
            "FiLM (LayerNorm + head) on the smoke ViT, opacus",
            lambda: make_film(vit, 20),
            xi,
            yi,
            hpf,
            privacy_record(n, hpf),
            device,
            f"{n} images 16×16, 20 labels",
            physical_batch=256,
        )
    )
    if not quick:
        rows.append(_paper_film_task(device))
    return rows


def _convnet_rows(dev: torch.device, device: str, quick: bool) -> list[dict[str, Any]]:
    """The small convnet: project's per-sample clipping, opacus, non-private, side by side."""
    g = torch.Generator().manual_seed(0)
    n = 256 if quick else 4096
    x = torch.rand(n, 1, 28, 28, generator=g).to(dev)
    y = torch.randint(0, 10, (n,), generator=g).to(dev)
    hp = DPSGDHyper(epochs=1, batch_size=n / 8, lr=1e-3, clip=1.0, epsilon=1.0, accountant="rdp")
    rec = privacy_record(n, hp)  # calibrated once, outside the timings (one-time setup)
    models = {k: small_convnet().to(dev) for k in ("privrepro", "opacus", "plain")}

    def private(engine: str) -> Callable[[], Any]:
        def run() -> None:
            gen = torch.Generator(device=y.device).manual_seed(1)
            train_dpsgd(
                models[engine],
                x,
                y,
                hp,
                generator=gen,
                privacy=rec,
                physical_batch=512,
                engine=engine,
            )

        return run

    t = _interleaved(
        {
            "privrepro": private("privrepro"),
            "opacus": private("opacus"),
            "plain": lambda: _plain(models["plain"], x, y, hp, 1),
        },
        device,
        repeats=1 if quick else 3,
    )
    setting = (
        f"{n} random 28×28 images, 10 classes; ε = {rec.epsilon_target:g}, δ = {rec.delta:g}, "
        f"σ = {rec.noise_multiplier:.3f}, {rec.steps} steps of expected batch {hp.batch_size:g}, "
        "physical batch 512 (Poisson batches above it are split in two chunks)"
    )
    floor = "non-private Adam on the same model, data and Poisson batches"
    return [
        row(
            "dpsgd",
            f"small convnet, project's per-sample clipping ({device})",
            t["privrepro"],
            "s",
            t["plain"],
            floor,
            "floor",
            "train_dpsgd's default for this model (PerSampleClipper: forward hooks, gradients "
            "to the layer outputs only, ghost norm for the linear layer, per-sample conv "
            f"gradients by one grouped convolution on CPU); {setting}; target ≥ 0.8",
        ),
        row(
            "dpsgd",
            f"small convnet, opacus per-sample gradients ({device})",
            t["opacus"],
            "s",
            t["plain"],
            floor,
            "floor",
            f"train_dpsgd(engine='opacus'): GradSampleModule, loss.backward(); {setting}",
        ),
        row(
            "dpsgd",
            f"small convnet, project's per-sample clipping against opacus ({device})",
            t["privrepro"],
            "s",
            t["opacus"],
            "opacus 1.5 GradSampleModule (train_dpsgd(engine='opacus')), same run",
            "peer library",
            f"the same clipped, noised updates (tests/training/test_per_sample.py); {setting}",
        ),
    ]


def _paper_film_task(device: str) -> dict[str, Any]:
    """ViT-B/16 FiLM at 224² (random weights): DP against plain seconds per task, from a few
    logical steps scaled to 5,000 images × 40 epochs; images from host uint8 pixels on CUDA."""
    import numpy as np
    import timm

    from privrepro.continual.peft import make_film
    from privrepro.continual.pixels import HostImages

    dev = torch.device(device)
    cuda = dev.type == "cuda"
    n, batch, physical = (512, 128, 64) if cuda else (16, 8, 8)
    torch.manual_seed(0)  # timm's initialiser draws from the global generator (forked)
    vitb = timm.create_model("vit_base_patch16_224", pretrained=False, num_classes=0)
    vitb = vitb.eval().to(dev)
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (n, 3, 224, 224), dtype=np.uint8)
    x = HostImages([pixels], (0.5, 0.5, 0.5), (0.5, 0.5, 0.5), dev)
    y = torch.as_tensor(rng.integers(0, 100, n), device=dev)
    hp = DPSGDHyper(epochs=1, batch_size=batch, lr=1e-3, clip=1.0, epsilon=1.0, accountant="rdp")
    rec = privacy_record(n, hp)
    film_dp, film_plain = make_film(vitb, 100), make_film(vitb, 100)

    def private() -> None:
        gen = torch.Generator(device=dev).manual_seed(4)
        train_dpsgd(film_dp, x, y, hp, generator=gen, privacy=rec, physical_batch=physical)

    t_dp = _seconds(private, device, repeats=1)
    t_plain = _seconds(lambda: _plain(film_plain, x, y, hp, 4, n), device, repeats=1)
    scale = 5000 * 40 / n
    name = torch.cuda.get_device_name(dev) if cuda else "CPU"
    return row(
        "dpsgd",
        f"paper recipe: ViT-B/16 FiLM at 224², one task ({device})",
        t_dp * scale / 3600,
        "h",
        t_plain * scale / 3600,
        "non-private Adam on the same FiLM parameters and batches",
        "floor",
        f"{n} images, {rec.steps} steps of expected batch {batch} timed on {name} and scaled "
        f"to 5,000 images × 40 epochs; tuning (20 trials) not included",
    )


if __name__ == "__main__":
    for r in bench():
        print(r)
