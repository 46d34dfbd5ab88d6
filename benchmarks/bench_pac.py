"""pac: batched Monte-Carlo training (Example 4's mechanism) against a loop of single trainings.

Rows (``python -m privrepro.benchmark_harness pac``; ``--device cuda`` on a GPU):

- digits MLP 64-16-16-10 (Example 4's ``smoke`` network), 898 of 1,797 images per model, the
  same full-batch GD steps: ``train_batched`` (``mode="auto"``: the layout its cost model picks,
  named in the row) against a loop of ``m`` ``train_single`` calls (torch.nn + autograd + SGD:
  the straw man a researcher would write), at m = 16, 128 and 1,000. The loop is timed on 16
  models and scaled by m/16 (each model costs the same); at m = 1,000 the batched run is timed
  on 20 of the steps and scaled by steps/20 (each step costs the same). At m = 128 also the other
  layouts (``wide``, ``gather``, ``mask``) and torch.func's ``vmap(grad)`` (timed on 8 models,
  scaled) against the chosen one.
- Example 4's size (MLP 784-30-30-10, 35,000 of 70,000 MNIST-shaped images, 1,500 steps): the
  seconds per model, batched (8 models at once on CPU, 64 on CUDA) against one single training,
  both extrapolated from a few steps (each step costs the same).
- The roofline of both (``pac_roofline``): the floating-point operations of one model-step,
  single (counted by ``torch.utils.flop_counter``, autograd's backward included) and batched
  (counted by hand: the counter does not see the fused in-place updates), this machine's attainable GEMM
  rate at the threads the run uses (the best of a 1024³ GEMM and the two trainers' own layer-1
  GEMMs, measured here), and each side's time split into compute at that rate and the rest
  (Python, autograd, optimizer, kernel launches, memory traffic, gathers). Batching removes the
  loop's per-model overhead, not its flops, so ``loop step / batched compute floor`` is the most
  any batched trainer can gain here: the ceiling row says whether the issue's 10× (3× at
  Example 4's size) fits under it.
- m = 1,000 of Example 4 on one GPU against the issue's 1-hour target: measured when CUDA is
  present; otherwise predicted from the floating-point operations of one step of the layout the
  cost model picks for CUDA (counted by hand) and its memory traffic (its activations,
  counted), at an H100's FP32 rate and bandwidth at half efficiency — said so in
  the row.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from privrepro.benchmark_harness import row
from privrepro.pac.training import (
    MLPSpec,
    choose_layout,
    init_mlp,
    train_batched,
    train_single,
    train_vmap,
)
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
    from privrepro.data.digits import load_digits

    d = load_digits(split="all")  # the library's loader: scikit-learn's digits in [0, 1]
    x = torch.as_tensor(d.x.reshape(len(d.x), -1), device=device)
    return x, torch.as_tensor(d.y, device=device)


def bench(device: str = "cpu", quick: bool = False) -> list[dict[str, Any]]:
    return _digits_rows(device, quick) + _example4_rows(device, quick)


def _digits_rows(device: str, quick: bool) -> list[dict[str, Any]]:
    steps = 2 if quick else 100
    ms = (2, 4) if quick else (16, 128, 1000)
    x, y = _digits(device)
    spec = MLPSpec((64, 16, 16, 10))
    init = init_mlp(spec, torch.Generator().manual_seed(0), device=device)
    rng = np.random.default_rng(0)
    n_sub = len(y) // 2
    all_subsets = torch.as_tensor(
        np.stack([rng.choice(len(y), n_sub, replace=False) for _ in range(max(ms))]),
        device=device,
    )
    lr = 0.3
    layout = choose_layout(len(y), n_sub, spec.sizes, device)
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
        f"digits MLP 64-16-16-10, {n_sub} of {len(y)} images per model, {steps} "
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
        timed[(layout, m)] = t
        loop = loop_per_model * m
        scaled = (
            "" if part == steps else f"; batched timed on {part} steps, scaled by {steps}/{part}"
        )
        rows.append(
            row(
                "pac_batched_training",
                f"m = {m} models, batched ({layout}, chosen by the cost model) vs a loop",
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
    for mode in ("wide", "gather", "mask"):
        if mode == layout:
            continue
        t = _timed(
            lambda mode=mode: train_batched(spec, init, x, y, subsets, steps, lr, m, mode), device
        )
        rows.append(
            row(
                "pac_batched_training",
                f"m = {m}, {layout} (chosen) vs the {mode} layout",
                timed[(layout, m)],
                "s",
                t,
                f"train_batched(mode={mode!r}): "
                + {
                    "wide": "layer 1 as one GEMM over the shared pool",
                    "gather": "each model's inputs copied out",
                    "mask": "every model on the whole pool",
                }[mode],
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
            f"m = {m}, {layout} vs torch.func",
            timed[(layout, m)],
            "s",
            t_vmap,
            "torch.func.vmap(grad(loss)) over stacked parameters (train_vmap)",
            "peer library",
            f"{note}; vmap timed on {vm} models and scaled by {m}/{vm}",
        )
    )
    rows += _roofline_rows(
        f"digits m = {m}",
        spec,
        x,
        y,
        subsets,
        layout,
        batched_step=timed[(layout, m)] / (m * steps),
        loop_step=loop_per_model / steps,
        device=device,
        quick=quick,
    )
    return rows


def _example4_rows(device: str, quick: bool) -> list[dict[str, Any]]:
    """Seconds per model of the full Example 4, extrapolated from a few steps."""
    n_pool, full_steps, full_m = (700, 1500, 1000) if quick else (70_000, 1500, 1000)
    n_sub = n_pool // 2
    cuda = device.startswith("cuda")
    models = 2 if quick else (64 if cuda else 8)
    steps = 1 if quick else (20 if cuda else 3)
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(n_pool, 784, generator=gen).to(device)
    y = torch.randint(0, 10, (n_pool,), generator=gen).to(device)
    spec = MLPSpec((784, 30, 30, 10))
    init = init_mlp(spec, torch.Generator().manual_seed(0), device=device)
    subsets = torch.stack([torch.randperm(n_pool, generator=gen)[:n_sub] for _ in range(models)])
    subsets = subsets.to(device)
    layout = choose_layout(n_pool, n_sub, spec.sizes, device)

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
            f"seconds per model, batched ({layout}, chosen by the cost model) vs single ({device})",
            per_model,
            "s",
            loop,
            "one train_single (torch.nn + autograd + SGD) training",
            "straw man",
            f"{note}; m = {full_m} costs {full_m * per_model / 3600:.1f} h here batched, "
            f"{full_m * loop / 3600:.1f} h as a loop",
        )
    ]
    rows += _roofline_rows(
        "Example 4's size",
        spec,
        x,
        y,
        subsets[:2],
        layout,
        batched_step=per_model / full_steps,
        loop_step=loop / full_steps,
        device=device,
        quick=quick,
    )
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


def _flops(fn: Callable[[], Any]) -> float:
    """Floating-point operations of ``fn()`` (matmuls, as ``torch.utils.flop_counter`` counts
    them; elementwise work aside)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return float(counter.get_total_flops())


def _batched_flops(spec: MLPSpec, n_pool: int, n: int, layout: str) -> float:
    """Floating-point operations of one model-step of ``train_batched`` in ``layout``, counted
    by hand (``torch.utils.flop_counter`` does not see the in-place ``baddbmm_``/``addmm_`` that
    fuse its weight updates): layer 1 with its bias row, ``[in+1] → h1``, forward and weight
    gradient over ``N`` rows (``wide``) or ``n`` (``gather``); every later layer ``a → b``
    forward, weight gradient and input gradient over ``n`` rows, ``2·rows·a·b`` each."""
    sizes = spec.sizes
    rows1 = n_pool if layout == "wide" else n
    later = sum(a * b for a, b in itertools.pairwise(sizes[1:]))
    return 4.0 * rows1 * (sizes[0] + 1) * sizes[1] + 6.0 * n * later


def _gemm_rate(a: int, b: int, c: int, device: str, batch: int = 1) -> float:
    """Measured flop/s of ``[batch ×] [a, b] @ [b, c]`` into a preallocated output (best of 3)."""
    gen = torch.Generator().manual_seed(0)
    left = torch.rand((batch, a, b), generator=gen).to(device)
    right = torch.rand((batch, b, c), generator=gen).to(device)
    out = torch.empty((batch, a, c), device=device)
    reps = max(1, min(50, int(2e9 / (2 * a * b * c * batch))))  # about 2 GFLOP per timing

    def run() -> None:
        for _ in range(reps):
            torch.bmm(left, right, out=out)

    run()  # warm-up
    best = min(_timed(run, device) for _ in range(3))
    return 2 * a * b * c * batch * reps / best


def _roofline_rows(
    label: str,
    spec: MLPSpec,
    x: torch.Tensor,
    y: torch.Tensor,
    subsets: torch.Tensor,
    layout: str,
    batched_step: float,
    loop_step: float,
    device: str,
    quick: bool,
) -> list[dict[str, Any]]:
    """Each side's measured seconds per model-step against its flops at the attainable GEMM
    rate, and the ceiling that puts on the batched / loop ratio."""
    k = min(2, subsets.shape[0])
    idx = subsets[:k]
    n_pool, n = x.shape[0], idx.shape[1]
    xs, ys = x[idx[0]], y[idx[0]]
    f_single = _flops(
        lambda: train_single(spec, torch.zeros(spec.n_params, device=x.device), xs, ys, 1, 0.1)
    )
    f_batched = _batched_flops(spec, n_pool, n, layout)
    d, h1 = spec.sizes[0], spec.sizes[1]
    side = 256 if quick else 1024
    rates = {
        f"{side}³": _gemm_rate(side, side, side, device),
        f"the loop's layer 1 [{n}, {d}] @ [{d}, {h1}]": _gemm_rate(n, d, h1, device),
    }
    if layout == "wide":
        m_wide = 16  # 16 models: [70,000, 785] @ [785, 480] at Example 4, 53 GFLOP a call
        rates[f"wide layer 1 [{n_pool}, {d + 1}] @ [{d + 1}, {m_wide}·{h1}]"] = _gemm_rate(
            n_pool, d + 1, m_wide * h1, device
        )
    else:
        batch = 16 if d > 100 else 128
        rates[f"gather layer 1, {batch} × [{n}, {d + 1}] @ [{d + 1}, {h1}]"] = _gemm_rate(
            n, d + 1, h1, device, batch=batch
        )
    best = max(rates, key=rates.__getitem__)
    rate = rates[best]
    floor_single, floor_batched = f_single / rate, f_batched / rate
    threads = torch.get_num_threads()
    measured = "; ".join(f"{k_}: {r / 1e9:.0f} GFLOP/s" for k_, r in rates.items())
    common = (
        f"{label}, {threads} threads on {device}: GEMM rates measured here ({measured}); "
        f"attainable = the best, {rate / 1e9:.0f} GFLOP/s ({best})"
    )
    return [
        row(
            "pac_roofline",
            f"{label}: batched ({layout}) model-step vs its compute floor",
            batched_step,
            "s",
            floor_batched,
            "its flops at the attainable GEMM rate",
            "floor",
            f"{common}; {f_batched / 1e6:.2f} MFLOP per model-step (counted by hand) = "
            f"{floor_batched * 1e6:.0f} µs of compute; measured {batched_step * 1e6:.0f} µs, so "
            f"{max(0.0, batched_step - floor_batched) * 1e6:.0f} µs is the rest (memory traffic, "
            "gathers, elementwise passes, GEMMs below the attainable rate)",
        ),
        row(
            "pac_roofline",
            f"{label}: loop (train_single) model-step vs its compute floor",
            loop_step,
            "s",
            floor_single,
            "its flops at the attainable GEMM rate",
            "floor",
            f"{common}; {f_single / 1e6:.2f} MFLOP per step (flop_counter, autograd's "
            f"included) = {floor_single * 1e6:.0f} µs of compute; measured "
            f"{loop_step * 1e6:.0f} µs, so {max(0.0, loop_step - floor_single) * 1e6:.0f} µs "
            "is the per-model overhead batching can remove (Python, autograd, optimizer, "
            "narrow GEMMs)",
        ),
        row(
            "pac_roofline",
            f"{label}: ceiling, batched at its compute floor vs the loop",
            floor_batched,
            "s",
            loop_step,
            "one train_single step (measured above)",
            "straw man",
            f"{common}; the most a batched trainer doing {f_batched / 1e6:.2f} MFLOP per "
            f"model-step can gain over this loop on this machine: "
            f"{loop_step / floor_batched:.1f}× (measured now "
            f"{loop_step / batched_step:.1f}×; batching removes the loop's overhead, not its "
            "flops)",
        ),
    ]


def _gpu_prediction(
    spec: MLPSpec, n_pool: int, n_sub: int, steps: int, m: int
) -> tuple[float, str]:
    """Seconds for ``m`` models × ``steps`` steps on an H100 from one counted step of the
    layout the cost model picks for CUDA."""
    layout = choose_layout(n_pool, n_sub, spec.sizes, "cuda")
    flops = _batched_flops(spec, n_pool, n_sub, layout)
    # memory traffic per model and step: layer 1's input rows (gather: read twice) or its wide
    # output and gradient over the pool (written and read once each), the activations of every
    # later layer read and written about 6 times (forward, ReLU, backward, ReLU', sums), float32
    hidden = sum(spec.sizes[1:])
    if layout == "wide":
        layer1 = 4 * n_pool * spec.sizes[1]
    else:
        layer1 = 2 * n_sub * (spec.sizes[0] + 1)
    traffic = 4 * (layer1 + 6 * n_sub * hidden)
    seconds = m * steps * (flops / H100_FP32_FLOPS + traffic / H100_BANDWIDTH) / EFFICIENCY
    detail = (
        f"predicted, not measured (no GPU): {flops / 1e9:.2f} GFLOP per model-step of the "
        f"{layout} layout (chosen for CUDA by the cost model; counted by hand), "
        f"{traffic / 1e6:.0f} MB moved per model-step (counted), × {m} models × {steps} steps, "
        f"at an H100 SXM's FP32 67 TFLOP/s and 3.35 TB/s with {EFFICIENCY:.0%} efficiency on both"
    )
    return seconds, detail


if __name__ == "__main__":
    for r in bench():
        print(r)
