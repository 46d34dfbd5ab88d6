"""One FiLM DP-SGD step: the project's per-sample clipper against opacus, time and peak memory.

A FiLM model (LayerNorm scale and shift and a linear head trainable, cl paper Sec. 6) on a small
random timm ViT (32 × 32 images, patches of 4: 65 tokens; width 192, 4 blocks, 3 heads) with a
head of 1,000 labels (CIFAR-100's ×10 dummy labels, cl paper Sec. 7.1): one physical chunk of
64 and of 256 samples, forward, per-sample norms, clipping and the clipped sum
(``clipped_sums`` of :func:`privrepro.training.dpsgd.train_dpsgd`'s two engines):

* ``privrepro`` — :class:`~privrepro.training.per_sample.PerSampleClipper`: one backward pass to
  the layer outputs, the LayerNorm rule, the head's norm ``‖b_i‖·‖a_i‖`` (no ``B × L × h``
  tensor);
* ``opacus`` (the baseline, peer library) — ``GradSampleModule``: ``loss.backward()``, a
  ``grad_sample`` of every trainable parameter, the head's ``B × L × (h + 1)``.

Time: best of 3 calls taken in alternation. Peak memory: the bytes of tensors alive at once
during the step above those alive before it — on CUDA ``torch.cuda.max_memory_allocated``; on a
CPU the allocations and frees torch's profiler records, summed in order (op granularity).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from privrepro.benchmark_harness import preserved_state, row


def _film(labels: int, quick: bool) -> nn.Module:
    from timm.models.vision_transformer import VisionTransformer

    from privrepro.continual.peft import make_film

    dim, depth = (32, 1) if quick else (192, 4)
    vit = VisionTransformer(
        img_size=32,
        patch_size=4,
        embed_dim=dim,
        depth=depth,
        num_heads=1 if quick else 3,
        num_classes=0,
    ).eval()
    model = make_film(vit, labels)
    with torch.no_grad():  # a head of small values: every parameter gets a gradient
        model.head.weight.normal_(0.0, 0.02)
    return model


def _step(engine: str, model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> Callable[[], Any]:
    from privrepro.training.dpsgd import _clipped_chunk, _clipper

    params = [p for p in model.parameters() if p.requires_grad]
    clipper = _clipper(engine, model, params, exact=False)

    def run() -> None:
        _clipped_chunk(clipper, lambda m, xb: m(xb), x, y, 1.0, "fp32", x.device)
        if x.is_cuda:  # the timing waits for the step's kernels, not only their launch
            torch.cuda.synchronize()

    return run


def _cpu_peak(fn: Callable[[], Any]) -> int:
    """Peak bytes of CPU tensors alive at once during ``fn()`` above those before it, from the
    profiler's per-op allocations and its free events, in time order."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    changes = sorted(
        (
            e.time_range.start,
            e.cpu_memory_usage if e.name == "[memory]" else e.self_cpu_memory_usage,
        )
        for e in prof.events()
        if e.name == "[memory]" or e.self_cpu_memory_usage
    )
    live = peak = 0
    for _, b in changes:
        live += b
        peak = max(peak, live)
    return peak


def _peak(fn: Callable[[], Any], device: str) -> int:
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        fn()
        torch.cuda.synchronize()
        return int(torch.cuda.max_memory_allocated() - before)
    return _cpu_peak(fn)


def bench(device: str = "cpu", quick: bool = False) -> list[dict[str, Any]]:
    with preserved_state():  # torch.manual_seed seeds the CUDA generators too: all given back
        torch.manual_seed(0)  # timm's initialiser draws from the global generator
        return _rows(device, quick)


def _rows(device: str, quick: bool) -> list[dict[str, Any]]:
    from privrepro.benchmark_harness import best_time

    dev = torch.device(device)
    labels = 50 if quick else 1000
    g = torch.Generator().manual_seed(1)
    rows: list[dict[str, Any]] = []
    for batch in (8,) if quick else (64, 256):
        x = torch.rand(batch, 3, 32, 32, generator=g).to(dev)
        y = torch.randint(0, labels, (batch,), generator=g).to(dev)
        models = {e: _film(labels, quick).to(dev) for e in ("privrepro", "opacus")}
        models["opacus"].load_state_dict(models["privrepro"].state_dict())
        steps = {e: _step(e, m, x, y) for e, m in models.items()}
        for fn in steps.values():
            fn()  # warm-up: lazy initialisation, caches
        best = dict.fromkeys(steps, float("inf"))
        for _ in range(1 if quick else 3):
            for e, fn in steps.items():
                best[e] = min(best[e], best_time(fn, repeats=1))
        peak = {e: _peak(fn, device) for e, fn in steps.items()}
        setting = (
            f"FiLM on a random ViT (32×32, 65 tokens, width {192 if not quick else 32}), "
            f"{labels} labels, one chunk of {batch}: forward, per-sample norms, clip, sum"
        )
        base = "opacus 1.5 GradSampleModule (train_dpsgd(engine='opacus')), same step"
        rows.append(
            row(
                "film_step",
                f"FiLM step time, batch {batch}, project's clipper ({device})",
                best["privrepro"],
                "s",
                best["opacus"],
                base,
                "peer library",
                f"{setting}; best of {1 if quick else 3} in alternation",
            )
        )
        rows.append(
            row(
                "film_step",
                f"FiLM step peak memory, batch {batch}, project's clipper ({device})",
                max(peak["privrepro"], 1),
                "bytes",
                max(peak["opacus"], 1),
                base,
                "peer library",
                f"{setting}; tensors alive at once above those before the step",
            )
        )
    return rows


if __name__ == "__main__":
    for r in bench():
        print(r)
