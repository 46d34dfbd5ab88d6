"""Predicted against measured peak device memory and time of one FiLM DP-SGD step at ViT-B/16 size.

    python benchmarks/film_memory_cuda.py --out results/film-memory-cuda.csv

Needs a CUDA device (without one it says so in one line and exits 0). For each case — the
clipping method, the head's labels (the cl paper's ×1000 dummy labels included, Sec. 7.1), the
physical chunk and the precision — it builds FiLM on a randomly initialised ViT-B/16 (224 × 224,
197 tokens; the weights do not change the memory or the time), runs one warm-up step (Adam's
moments are allocated there) and then one measured step of ``train_dpsgd``'s inner loop: the
forward under :func:`~privrepro.training.precision.compute_precision`, the per-sample clipped
sums, the noise and Adam's update. ``measured_bytes`` is ``torch.cuda.max_memory_allocated`` over
the measured step (everything the step holds, weights included); ``predicted_bytes`` is
:func:`~privrepro.training.memory.film_step_memory` without its fixed runtime term (the CUDA
context, which the allocator does not count). A case that runs out of memory is recorded as
such; the prediction is useful when it is above the measurement and of the same order.
``step_s`` is the measured step's wall time (synchronised); ``predicted_h100_s`` the same step
priced by the rehearsal's device model for an H100 SXM from its counted operators
(:class:`~privrepro.rehearsal.device_model.OperationCount`, a third step; the H200 has the H100's
arithmetic rates and 1.4 × its memory bandwidth).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import torch
from torch import nn

#: (engine, labels, chunk, precision): CIFAR-100 (100 labels), ×10 and ×1000 dummy labels
#: (Fig. 3: 100,000; ImageNet-R: 200,000), the project's clipper against opacus
CASES = [
    ("privrepro", 100, 256, "bf16"),
    ("privrepro", 100, 256, "fp32"),
    ("opacus", 100, 256, "bf16"),
    ("privrepro", 1_000, 256, "bf16"),
    ("opacus", 1_000, 256, "bf16"),
    ("privrepro", 100_000, 256, "bf16"),
    ("privrepro", 200_000, 256, "bf16"),
    ("opacus", 100_000, 64, "bf16"),
    ("opacus", 100_000, 256, "bf16"),
]
COLUMNS = [
    "engine",
    "labels",
    "chunk",
    "precision",
    "predicted_bytes",
    "measured_bytes",
    "predicted_over_measured",
    "largest_term",
    "step_s",
    "predicted_h100_s",
    "outcome",
]


def _film(labels: int, device: torch.device) -> nn.Module:
    from timm.models.vision_transformer import VisionTransformer

    from privrepro.continual.peft import make_film

    vit = VisionTransformer(img_size=224, patch_size=16, embed_dim=768, depth=12, num_heads=12)
    vit.reset_classifier(0)
    model = make_film(vit.eval(), labels).to(device)
    head = model.get_submodule("head")
    assert isinstance(head, nn.Linear)
    with torch.no_grad():  # a head of small values: every parameter gets a gradient
        head.weight.normal_(0.0, 0.02)
    return model


def measure(
    engine: str, labels: int, chunk: int, precision: str, device: str = "cuda"
) -> dict[str, object]:
    """One case's row (see the module docstring); ``device="cpu"`` runs the step unmeasured."""
    from privrepro.rehearsal.device_model import H100, OperationCount
    from privrepro.rehearsal.loop_record import LoopRecord
    from privrepro.training.dpsgd import _clipped_chunk, _clipper, noisy_mean_gradient
    from privrepro.training.memory import RUNTIME_BYTES, VIT_B16, film_step_memory

    dev = torch.device(device)
    cuda = dev.type == "cuda"
    predicted = film_step_memory(VIT_B16, labels, chunk, precision, engine)
    row: dict[str, object] = {
        "engine": engine,
        "labels": labels,
        "chunk": chunk,
        "precision": precision,
        "predicted_bytes": predicted.bytes - RUNTIME_BYTES,
        "largest_term": predicted.largest,
    }
    g = torch.Generator(device=dev).manual_seed(0)
    model = clipper = opt = None
    try:
        model = _film(labels, dev)
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.Adam(params, lr=1e-3)
        clipper = clip = _clipper(engine, model, params, exact=precision != "fp32")
        optim = opt
        x = torch.rand(chunk, 3, 224, 224, device=dev, generator=g)
        y = torch.randint(0, labels, (chunk,), device=dev, generator=g)

        def step() -> None:  # train_dpsgd's step on one chunk of a Poisson batch
            sums, _ = _clipped_chunk(clip, lambda m, xb: m(xb), x, y, 1.0, precision, dev)
            for p, s in zip(params, sums, strict=True):
                p.grad = noisy_mean_gradient(s, 1.0, float(chunk), g)
            del sums
            optim.step()
            optim.zero_grad(set_to_none=True)

        step()  # warm-up: Adam's moments, cuBLAS workspaces, autotuning
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        step()
        if cuda:
            torch.cuda.synchronize()
            measured = int(torch.cuda.max_memory_allocated())
            row["measured_bytes"] = measured
            row["predicted_over_measured"] = round(
                int(predicted.bytes - RUNTIME_BYTES) / measured, 3
            )
        row["step_s"] = round(time.perf_counter() - t0, 4)
        tally = LoopRecord("FiLM step", 0, None)  # what the operator count adds up
        with OperationCount(lambda: tally, H100, precision):
            step()
        row["predicted_h100_s"] = round(tally.device_s, 4)
        row["outcome"] = "ok"
    except torch.cuda.OutOfMemoryError as exc:
        row["outcome"] = f"out of memory ({str(exc).splitlines()[0][:120]})"
    finally:
        if clipper is not None:
            clipper.close()
        model = clipper = opt = None
        if cuda:
            torch.cuda.empty_cache()
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=Path("results/film-memory-cuda.csv"))
    args = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("film_memory_cuda: no CUDA device on this machine: nothing measured", flush=True)
        return 0
    total = torch.cuda.get_device_properties(0).total_memory
    print(f"{torch.cuda.get_device_name(0)}, {total / 1e9:.1f} GB; predicted excludes the context")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for case in CASES:
        r = measure(*case)
        rows.append(r)
        gb = {
            k: (f"{int(v) / 1e9:7.2f}" if isinstance(v, int) else "      -")
            for k, v in ((k, r.get(k)) for k in ("predicted_bytes", "measured_bytes"))
        }
        print(
            f"{r['engine']:>9} L={r['labels']:>7} B={r['chunk']:>4} {r['precision']:>4}: "
            f"predicted {gb['predicted_bytes']} GB, measured {gb['measured_bytes']} GB, "
            f"step {r.get('step_s', math.nan)} s (H100 model {r.get('predicted_h100_s', math.nan)} s), "
            f"{r['outcome']}",
            flush=True,
        )
    with args.out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
