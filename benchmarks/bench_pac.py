"""Benchmarks of paper pac: batched Monte-Carlo training against a loop of single trainings.

Rows (``make bench`` → results/benchmarks.csv):

- ``train_batched`` (bmm, gather) and ``train_vmap`` (torch.func) against a loop of ``m``
  ``train_single`` calls (torch.nn + autograd), same ``m``, same steps, same data, same run:
  the digits MLP 64-16-16-10 of Example 4's ``smoke`` profile, ``m = 128`` by default.
- the cost per model of the full Example 4 (MLP 784-30-30-10, 35,000 images, 1,500 steps),
  measured on a few steps of a few models on synthetic MNIST-shaped data and extrapolated,
  on CPU, and on CUDA when a GPU is present.

Environment: ``PAC_BENCH_M`` (default 128), ``PAC_BENCH_STEPS`` (default 100).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import torch

from privrepro.pac.training import MLPSpec, init_mlp, train_batched, train_single, train_vmap


def _timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _digits() -> tuple[torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return torch.tensor(d.data / 16.0, dtype=torch.float32), torch.tensor(d.target)


def bench() -> list[dict[str, Any]]:
    m = int(os.environ.get("PAC_BENCH_M", "128"))
    steps = int(os.environ.get("PAC_BENCH_STEPS", "100"))
    threads = torch.get_num_threads()
    x, y = _digits()
    spec = MLPSpec((64, 16, 16, 10))
    init = init_mlp(spec, torch.Generator().manual_seed(0))
    rng = np.random.default_rng(0)
    subsets = torch.as_tensor(
        np.stack([rng.choice(len(y), len(y) // 2, replace=False) for _ in range(m)])
    )
    loop_s = _timed(lambda: [train_single(spec, init, x[s], y[s], steps, 0.3) for s in subsets])
    batched_s = _timed(lambda: train_batched(spec, init, x, y, subsets, steps, 0.3, chunk=m))
    mask_s = _timed(
        lambda: train_batched(spec, init, x, y, subsets, steps, 0.3, chunk=m, mode="mask")
    )
    vmap_m = min(m, 8)  # torch.func is slow on CPU: time 8 models and scale
    vmap_s = (
        _timed(lambda: train_vmap(spec, init, x, y, subsets[:vmap_m], steps, 0.3, chunk=vmap_m))
        * m
        / vmap_m
    )
    note = (
        f"digits MLP 64-16-16-10, {len(y) // 2} examples per model, m={m}, {steps} "
        f"full-batch steps, {threads} torch threads, CPU"
    )
    rows = [
        {
            "benchmark": "pac_batched_training",
            "metric": "loop_of_single_trainings_s",
            "value": loop_s,
            "unit": "s",
            "baseline": loop_s,
            "ratio": 1.0,
            "note": note,
        }
    ]
    for name, secs in (
        ("batched_bmm_gather_s", batched_s),
        ("batched_bmm_mask_s", mask_s),
        ("vmap_torch_func_s", vmap_s),
    ):
        rows.append(
            {
                "benchmark": "pac_batched_training",
                "metric": name,
                "value": secs,
                "unit": "s",
                "baseline": loop_s,
                "ratio": loop_s / secs,
                "note": note + ("; vmap timed on 8 models and scaled" if "vmap" in name else ""),
            }
        )
    rows += _example4_cost("cpu")
    if torch.cuda.is_available():
        rows += _example4_cost("cuda")
    return rows


def _example4_cost(device: str) -> list[dict[str, Any]]:
    """Seconds per model of the full Example 4 training, extrapolated from a few steps."""
    n_pool, n_sub, full_steps, full_m = 70_000, 35_000, 1500, 1000
    models = 4 if device == "cpu" else 64
    steps = 2 if device == "cpu" else 20
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(n_pool, 784, generator=gen).to(device)
    y = torch.randint(0, 10, (n_pool,), generator=gen).to(device)
    spec = MLPSpec((784, 30, 30, 10))
    init = init_mlp(spec, torch.Generator().manual_seed(0), device=device)
    subsets = torch.stack(
        [torch.randperm(n_pool, generator=gen)[:n_sub] for _ in range(models)]
    ).to(device)

    def run() -> None:
        train_batched(spec, init, x, y, subsets, steps, 0.05, chunk=models)
        if device == "cuda":
            torch.cuda.synchronize()

    run()  # warm-up
    batched = _timed(run) / (models * steps) * full_steps

    def single() -> None:
        train_single(spec, init, x[subsets[0]], y[subsets[0]], steps, 0.05)
        if device == "cuda":
            torch.cuda.synchronize()

    loop = _timed(single) / steps * full_steps
    note = (
        f"MLP 784-30-30-10 on {n_sub} of {n_pool} (synthetic MNIST-shaped), {full_steps} "
        f"steps extrapolated from {steps} steps of {models} models; {device}, "
        f"{torch.get_num_threads()} threads; m={full_m} costs {full_m} x this"
    )
    return [
        {
            "benchmark": "pac_example4_full_cost",
            "metric": f"seconds_per_model_{device}",
            "value": batched,
            "unit": "s",
            "baseline": loop,
            "ratio": loop / batched,
            "note": note + "; baseline: one train_single (torch.nn) model",
        }
    ]


if __name__ == "__main__":
    for row in bench():
        print(row)
