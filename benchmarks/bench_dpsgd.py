"""DP-SGD throughput against non-private training on the same model, data and Poisson batches.

Rows:
* head-only on cached features (768-d, 100 labels): closed-form per-sample norms vs plain Adam;
  and the opacus per-sample path on the same head, for reference;
* FiLM on a small timm ViT (smoke model): opacus per-sample gradients vs plain Adam;
* the full recipe's time per task on this CPU (ViT-B/16 FiLM at 224², random weights, a few
  steps extrapolated to 5,000 images × 40 epochs; head-only measured on a full CIFAR task).
  On a machine with CUDA, the same per task on the GPU, images gathered from a host pixel
  store (:class:`privrepro.continual.pixels.HostImages`) as ``profile=paper`` runs them.
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch
from torch import nn

from privrepro.training.dpsgd import (
    DPSGDHyper,
    plan_steps,
    poisson_batch,
    train_dpsgd,
    train_linear_head,
)


def _plain(model: nn.Module, x: torch.Tensor, y: torch.Tensor, hp: DPSGDHyper, seed: int) -> int:
    """Non-private Adam on the same Poisson batches; returns the samples processed."""
    q, steps = plan_steps(x.shape[0], hp)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=hp.lr)
    seen = 0
    for _ in range(steps):
        idx = poisson_batch(x.shape[0], q, gen)
        seen += idx.numel()
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx], reduction="sum") / (q * len(x))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return seen


def _rate(fn: Any, repeats: int = 3) -> float:
    """Best of ``repeats`` timed calls after one warm-up call (lazy initialisation, caches)."""
    fn()
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        seen = fn()
        best = max(best, seen / (time.perf_counter() - t0))
    return best


def _row(metric: str, value: float, baseline: float, note: str) -> dict[str, Any]:
    return {
        "benchmark": "dpsgd",
        "metric": metric,
        "value": value,
        "unit": "samples/s",
        "baseline": baseline,
        "ratio": value / baseline,
        "note": note,
    }


def bench() -> list[dict[str, Any]]:
    torch.set_num_threads(1)
    from privrepro.continual.peft import make_film, small_vit

    rows: list[dict[str, Any]] = []
    g = torch.Generator().manual_seed(0)
    # --- head-only on cached features: one CIFAR task (5,000 × 768, 100 labels)
    x = torch.randn(5000, 768, generator=g)
    y = torch.randint(0, 100, (5000,), generator=g)
    hp = DPSGDHyper(epochs=1, batch_size=500, lr=1e-3, clip=1.0, epsilon=1.0, accountant="rdp")
    from privrepro.training.dpsgd import privacy_record

    rec = privacy_record(5000, hp)
    heads = [nn.Linear(768, 100) for _ in range(3)]

    def dp_head() -> int:
        return int(
            train_linear_head(
                heads[0], x, y, hp, generator=torch.Generator().manual_seed(1), privacy=rec
            ).mean_batch
            * rec.steps
        )

    def dp_head_opacus() -> int:
        return int(
            train_dpsgd(
                heads[2],
                x,
                y,
                hp,
                generator=torch.Generator().manual_seed(1),
                privacy=rec,
                physical_batch=1000,
            ).mean_batch
            * rec.steps
        )

    plain = _rate(lambda: _plain(heads[1], x, y, hp, 1))
    rows.append(
        _row(
            "head-only DP-SGD (closed-form norms), 5000x768, 100 labels",
            _rate(dp_head),
            plain,
            "baseline: non-private Adam, same batches",
        )
    )
    rows.append(
        _row(
            "head-only DP-SGD (opacus per-sample grads), 5000x768, 100 labels",
            _rate(dp_head_opacus, repeats=1),
            plain,
            "baseline: non-private Adam, same batches",
        )
    )
    # --- FiLM on the smoke ViT
    vit = small_vit(g)
    xi = torch.rand(1200, 3, 16, 16, generator=g)
    yi = torch.randint(0, 20, (1200,), generator=g)
    hpf = DPSGDHyper(epochs=2, batch_size=120, lr=1e-3, clip=1.0, epsilon=1.0, accountant="rdp")
    recf = privacy_record(1200, hpf)
    a, b = make_film(vit, 20), make_film(vit, 20)
    plain_f = _rate(lambda: _plain(b, xi, yi, hpf, 2))
    dp_f = _rate(
        lambda: int(
            train_dpsgd(
                a,
                xi,
                yi,
                hpf,
                generator=torch.Generator().manual_seed(2),
                privacy=recf,
                physical_batch=256,
            ).mean_batch
            * recf.steps
        )
    )
    rows.append(
        _row(
            "FiLM DP-SGD (opacus, LayerNorm+head), small ViT 16px",
            dp_f,
            plain_f,
            "baseline: non-private Adam on the same FiLM parameters",
        )
    )
    # --- full recipe on this CPU: ViT-B/16 FiLM at 224², extrapolated per task
    import timm

    torch.manual_seed(0)  # timm's initialiser draws from the global generator (random weights)
    vitb = timm.create_model("vit_base_patch16_224", pretrained=False, num_classes=0).eval()
    film = make_film(vitb, 100)
    xb = torch.rand(8, 3, 224, 224, generator=g)
    yb = torch.randint(0, 100, (8,), generator=g)
    hpb = DPSGDHyper(epochs=2, batch_size=4, lr=1e-3, clip=1.0, epsilon=None)
    t0 = time.perf_counter()
    log = train_dpsgd(
        film, xb, yb, hpb, generator=torch.Generator().manual_seed(3), physical_batch=8
    )
    rate_b = log.mean_batch * log.steps / (time.perf_counter() - t0)
    per_task_s = 5000 * 40 / rate_b
    rows.append(
        {
            "benchmark": "dpsgd",
            "metric": "paper recipe: ViT-B/16 FiLM time per task (CPU)",
            "value": per_task_s / 3600,
            "unit": "h",
            "baseline": math.nan,
            "ratio": math.nan,
            "note": f"{rate_b:.2f} img/s on 1 thread, 5000 images x 40 epochs; tuning "
            "(20 trials) not included",
        }
    )
    if torch.cuda.is_available():
        rows.append(_gpu_film_task(vitb))
    head_task = 5000 * 40 / _rate(dp_head)
    rows.append(
        {
            "benchmark": "dpsgd",
            "metric": "paper recipe: head-only time per task (CPU)",
            "value": head_task,
            "unit": "s",
            "baseline": math.nan,
            "ratio": math.nan,
            "note": "5000 cached 768-d features x 40 epochs, closed-form norms; GPU not measured",
        }
    )
    return rows


def _gpu_film_task(vitb: nn.Module, n: int = 512, physical_batch: int = 64) -> dict[str, Any]:
    """ViT-B/16 FiLM DP-SGD on CUDA, images gathered from host uint8 pixels batch by batch;
    a few logical steps after one warm-up step, extrapolated to 5,000 images × 40 epochs."""
    import numpy as np

    from privrepro.continual.pixels import HostImages
    from privrepro.training.dpsgd import privacy_record

    dev = torch.device("cuda")
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, (n, 3, 224, 224), dtype=np.uint8)
    x = HostImages([pixels], (0.5, 0.5, 0.5), (0.5, 0.5, 0.5), dev)
    y = torch.as_tensor(rng.integers(0, 100, n), device=dev)
    from privrepro.continual.peft import make_film

    film = make_film(vitb.to(dev), 100)
    hp = DPSGDHyper(epochs=1, batch_size=128, lr=1e-3, clip=1.0, epsilon=1.0, accountant="rdp")
    rec = privacy_record(n, hp)
    warm = privacy_record(n, DPSGDHyper(epochs=0.25, batch_size=128, epsilon=1.0))
    gen = torch.Generator(device=dev).manual_seed(4)
    train_dpsgd(film, x, y, hp, generator=gen, privacy=warm, physical_batch=physical_batch)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    log = train_dpsgd(film, x, y, hp, generator=gen, privacy=rec, physical_batch=physical_batch)
    torch.cuda.synchronize()
    rate = log.mean_batch * log.steps / (time.perf_counter() - t0)
    return {
        "benchmark": "dpsgd",
        "metric": "paper recipe: ViT-B/16 FiLM time per task (GPU)",
        "value": 5000 * 40 / rate / 3600,
        "unit": "h",
        "baseline": math.nan,
        "ratio": math.nan,
        "note": f"{rate:.1f} img/s on {torch.cuda.get_device_name(dev)}, physical batch "
        f"{physical_batch}, images from host uint8 pixels; tuning (20 trials) not included",
    }


if __name__ == "__main__":
    for r in bench():
        print(r)
