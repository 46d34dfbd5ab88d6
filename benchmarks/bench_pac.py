"""pac: batched Monte-Carlo training (Example 4's mechanism) against a loop of single trainings.

Rows (``python -m privrepro.bench pac``; ``--device cuda`` on a GPU):

- digits MLP 64-16-16-10 (Example 4's ``smoke`` network), 898 of 1,797 images per model, the
  same full-batch GD steps: ``train_batched`` (one wide model over the shared pool) against a
  loop of ``m`` ``train_single`` calls (torch.nn + autograd + SGD: the straw man a researcher
  would write), at m = 16, 128 and 1,000. The loop is timed on 16 models and scaled by m/16
  (each model costs the same); at m = 1,000 the batched run is timed on 20 of the steps and
  scaled by steps/20 (each step costs the same). At m = 128 also the older layouts (``gather``,
  ``mask``) and torch.func's ``vmap(grad)`` (timed on 8 models, scaled) against ``wide``.
- Example 4's size (MLP 784-30-30-10, 35,000 of 70,000 MNIST-shaped images, 1,500 steps): the
  seconds per model, batched (16 models at once on CPU, 64 on CUDA) against one single training,
  both extrapolated from a few steps (each step costs the same).
- m = 1,000 of Example 4 on one GPU against the issue's 1-hour target: measured when CUDA is
  present; otherwise predicted from the floating-point operations of one wide step (counted by
  ``torch.utils.flop_counter``) and its memory traffic (its activations, counted), at an H100's
  FP32 rate and bandwidth at half efficiency — said so in the row.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from privrepro.bench import row
from privrepro.pac.training import MLPSpec, init_mlp, train_batched, train_single, train_vmap
from privrepro.rehearsal.device_model import H100

# the project's one H100 model (NVIDIA H100 SXM, FP32 non-tensor peak, HBM3 bandwidth, the
# assumed fraction of both reached), shared with the rehearsal's GPU predictions
H100_FP32_FLOPS = H100.flops
H100_BANDWIDTH = H100.bandwidth
EFFICIENCY = H100.efficiency


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(fn: Any, device: str) -> float:
    _sync(device)
    t0 = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - t0


def _digits(device: str) -> tuple[torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.data / 16.0, dtype=torch.float32, device=device)
    return x, torch.tensor(d.target, device=device)


def bench(device: str = "cpu", quick: bool = False) -> list[dict[str, Any]]:
    return _digits_rows(device, quick) + _example4_rows(device, quick)


def _digits_rows(device: str, quick: bool) -> list[dict[str, Any]]:
    steps = 2 if quick else 100
    ms = (2, 4) if quick else (16, 128, 1000)
    x, y = _digits(device)
    spec = MLPSpec((64, 16, 16, 10))
    init = init_mlp(spec, torch.Generator().manual_seed(0), device=device)
    rng = np.random.default_rng(0)
    all_subsets = torch.as_tensor(
        np.stack([rng.choice(len(y), len(y) // 2, replace=False) for _ in range(max(ms))]),
        device=device,
    )
    lr = 0.3
    loop_models = min(16, ms[0])
    train_single(spec, init, x[all_subsets[0]], y[all_subsets[0]], 2, lr)  # warm-up (imports)
    loop_per_model = (
        _timed(
            lambda: [
                train_single(spec, init, x[s], y[s], steps, lr) for s in all_subsets[:loop_models]
            ],
            device,
        )
        / loop_models
    )
    note = (
        f"digits MLP 64-16-16-10, {len(y) // 2} of {len(y)} images per model, {steps} "
        f"full-batch GD steps; loop timed on {loop_models} models and scaled by m/{loop_models}"
    )
    rows = []
    timed: dict[tuple[str, int], float] = {}
    train_batched(spec, init, x, y, all_subsets[:2], 2, lr)  # warm-up (allocator, kernels)
    for m in ms:
        subsets = all_subsets[:m]
        part = steps if m < 1000 else 20  # m = 1,000: 20 steps timed, scaled to all
        t = _timed(
            lambda s=subsets, k=part, c=m: train_batched(spec, init, x, y, s, k, lr, chunk=c),
            device,
        )
        t *= steps / part
        timed[("wide", m)] = t
        loop = loop_per_model * m
        scaled = (
            "" if part == steps else f"; batched timed on {part} steps, scaled by {steps}/{part}"
        )
        rows.append(
            row(
                "pac_batched_training",
                f"m = {m} models, batched (wide) vs a loop",
                t,
                "s",
                loop,
                f"a loop of {m} train_single calls (torch.nn + autograd + SGD)",
                "straw man",
                f"{note}{scaled}; {m / t:.0f} vs {m / loop:.1f} models/s",
            )
        )
    m = ms[1]
    subsets = all_subsets[:m]
    for mode in ("gather", "mask"):
        t = _timed(
            lambda mode=mode: train_batched(spec, init, x, y, subsets, steps, lr, m, mode), device
        )
        rows.append(
            row(
                "pac_batched_training",
                f"m = {m}, wide vs the {mode} layout",
                timed[("wide", m)],
                "s",
                t,
                f"train_batched(mode={mode!r}): "
                + (
                    "each model's inputs copied out"
                    if mode == "gather"
                    else "every model on the whole pool"
                ),
                "variant",
                note,
            )
        )
    vm = min(m, 8)
    t_vmap = (
        _timed(lambda: train_vmap(spec, init, x, y, subsets[:vm], steps, lr, chunk=vm), device)
        * m
        / vm
    )
    rows.append(
        row(
            "pac_batched_training",
            f"m = {m}, wide vs torch.func",
            timed[("wide", m)],
            "s",
            t_vmap,
            "torch.func.vmap(grad(loss)) over stacked parameters (train_vmap)",
            "peer library",
            f"{note}; vmap timed on {vm} models and scaled by {m}/{vm}",
        )
    )
    return rows


def _example4_rows(device: str, quick: bool) -> list[dict[str, Any]]:
    """Seconds per model of the full Example 4, extrapolated from a few steps."""
    n_pool, full_steps, full_m = (700, 1500, 1000) if quick else (70_000, 1500, 1000)
    n_sub = n_pool // 2
    cuda = device.startswith("cuda")
    models = 2 if quick else (64 if cuda else 16)
    steps = 1 if quick else (20 if cuda else 3)
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(n_pool, 784, generator=gen).to(device)
    y = torch.randint(0, 10, (n_pool,), generator=gen).to(device)
    spec = MLPSpec((784, 30, 30, 10))
    init = init_mlp(spec, torch.Generator().manual_seed(0), device=device)
    subsets = torch.stack([torch.randperm(n_pool, generator=gen)[:n_sub] for _ in range(models)])
    subsets = subsets.to(device)

    def batched() -> None:
        train_batched(spec, init, x, y, subsets, steps, 0.05, chunk=models)

    def single() -> None:
        train_single(spec, init, x[subsets[0]], y[subsets[0]], steps, 0.05)

    train_batched(spec, init, x, y, subsets[:2], 1, 0.05)  # warm-up
    single()
    per_model = min(_timed(batched, device) for _ in range(2)) / (models * steps) * full_steps
    loop = min(_timed(single, device) for _ in range(2)) / steps * full_steps
    note = (
        f"MLP 784-30-30-10 on {n_sub} of {n_pool} images (synthetic, MNIST-shaped), "
        f"{full_steps} steps extrapolated from {steps} steps ({models} models batched)"
    )
    rows = [
        row(
            "pac_example4",
            f"seconds per model, batched (wide) vs single ({device})",
            per_model,
            "s",
            loop,
            "one train_single (torch.nn + autograd + SGD) training",
            "straw man",
            f"{note}; m = {full_m} costs {full_m * per_model / 3600:.1f} h here batched, "
            f"{full_m * loop / 3600:.1f} h as a loop",
        )
    ]
    if cuda:
        rows.append(
            row(
                "pac_example4",
                f"m = {full_m} on one GPU (measured, extrapolated)",
                full_m * per_model,
                "s",
                3600.0,
                "the issue's target: 1 hour",
                "target",
                f"{note}; {torch.cuda.get_device_name()}",
            )
        )
    else:
        predicted, detail = _gpu_prediction(spec, n_pool, n_sub, full_steps, full_m)
        rows.append(
            row(
                "pac_example4",
                f"m = {full_m} on one GPU (predicted: no GPU here)",
                predicted,
                "s",
                3600.0,
                "the issue's target: 1 hour",
                "target",
                detail,
            )
        )
    return rows


def _gpu_prediction(
    spec: MLPSpec, n_pool: int, n_sub: int, steps: int, m: int
) -> tuple[float, str]:
    """Seconds for ``m`` models × ``steps`` wide steps on an H100 from one counted step."""
    from torch.utils.flop_counter import FlopCounterMode

    k = 2
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(n_pool, spec.sizes[0], generator=gen)
    y = torch.randint(0, spec.sizes[-1], (n_pool,), generator=gen)
    subsets = torch.stack([torch.randperm(n_pool, generator=gen)[:n_sub] for _ in range(k)])
    init = init_mlp(spec, torch.Generator().manual_seed(0))
    with FlopCounterMode(display=False) as counter:
        train_batched(spec, init, x, y, subsets, 1, 0.05, chunk=k)
    flops = counter.get_total_flops() / k  # per model and step (matmuls; elementwise aside)
    # memory traffic per model and step: layer 1's wide output and gradient over the pool
    # (written and read once each), the gathered activations of every layer read and written
    # about 6 times (forward, ReLU, backward, ReLU', gradient sums), float32
    hidden = sum(spec.sizes[1:])
    traffic = 4 * (4 * n_pool * spec.sizes[1] + 6 * n_sub * hidden)
    seconds = m * steps * (flops / H100_FP32_FLOPS + traffic / H100_BANDWIDTH) / EFFICIENCY
    detail = (
        f"predicted, not measured (no GPU): {flops / 1e9:.2f} GFLOP per model-step counted by "
        f"torch.utils.flop_counter on one wide step, {traffic / 1e6:.0f} MB of activations "
        f"moved per model-step (counted), × {m} models × {steps} steps, at an H100 SXM's FP32 "
        f"67 TFLOP/s and 3.35 TB/s with {EFFICIENCY:.0%} efficiency on both"
    )
    return seconds, detail


if __name__ == "__main__":
    for r in bench():
        print(r)
