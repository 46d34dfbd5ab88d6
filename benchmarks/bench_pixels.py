"""The FiLM input pipeline: batches gathered from the host pixel cache against a device tensor.

FiLM on full-size benchmarks keeps images as a memory-mapped ``uint8`` cache on the host and
normalises each gathered batch (:mod:`privrepro.continual.pixels`); the alternative holds the
whole benchmark as a float tensor on the device (78 GB in float16 for 5-Datasets at 224²).

Rows (one CPU thread, 224² images, sorted random batches of 256 from 1,000 images, as Poisson
sampling returns them; the cache is in the page cache after the first pass, as in every epoch
after the first), each against indexing a float32 tensor already in memory:
* the host side of a gather (uint8 rows out of the memory map): all the CPU does per batch when
  the device is a GPU, which normalises the batch itself;
* a whole gather on the CPU (rows + ``(x/255 − mean)/std`` in float32);
* bytes held per image: uint8 on the host vs the float16 tensor on the device.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from privrepro.benchmark_harness import best_time, row, torch_threads
from privrepro.continual.pixels import HostImages


def bench(device: str = "cpu", quick: bool = False) -> list[dict[str, Any]]:
    n, side, batch, batches = (64, 32, 16, 4) if quick else (1000, 224, 256, 8)
    rng = np.random.default_rng(0)
    idx = [np.sort(rng.choice(n, batch, replace=False)) for _ in range(batches)]
    mean, std = (0.5, 0.5, 0.5), (0.5, 0.5, 0.5)
    rows = []
    with torch_threads(1), tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pixels.npy"
        out = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint8, shape=(n, 3, side, side))
        out[:] = rng.integers(0, 256, out.shape, dtype=np.uint8)
        out.flush()
        del out
        store = HostImages([np.load(path, mmap_mode="r")], mean, std)
        dense = store.gather()  # the float32 tensor the device path would index

        def host_side() -> None:
            for i in idx:
                store.pixels(i)

        def from_store() -> None:
            for i in idx:
                store.gather(i)

        def from_tensor() -> None:
            for i in idx:
                dense[torch.as_tensor(i)]

        from_store()  # first pass: pages into the page cache, as in any epoch after the first
        t_host, t_store = best_time(host_side), best_time(from_store)
        t_tensor = best_time(from_tensor)
        images = batch * batches
        note = f"1 thread, {images} images in batches of {batch} at {side}²"
        base = "indexing a float32 tensor already in memory (the whole benchmark held as floats)"
        rows += [
            row(
                "pixels",
                "FiLM batches, host side: uint8 rows from the memmap cache",
                t_host,
                "s",
                t_tensor,
                base,
                "variant",
                note,
            ),
            row(
                "pixels",
                "FiLM batches gathered on the CPU: memmap rows -> normalised float32",
                t_store,
                "s",
                t_tensor,
                base,
                "variant",
                note,
            ),
        ]
        if device.startswith("cuda"):
            on_gpu = HostImages([np.load(path, mmap_mode="r")], mean, std, torch.device(device))
            dense_gpu = dense.to(device)

            def to_gpu() -> None:
                for i in idx:
                    on_gpu.gather(i)
                torch.cuda.synchronize()

            def gpu_tensor() -> None:
                for i in idx:
                    dense_gpu[torch.as_tensor(i, device=device)]
                torch.cuda.synchronize()

            to_gpu()
            rows.append(
                row(
                    "pixels",
                    f"FiLM batches gathered to {device}: uint8 rows, normalised there",
                    best_time(to_gpu),
                    "s",
                    best_time(gpu_tensor),
                    "indexing a float32 tensor held on the GPU",
                    "variant",
                    note,
                )
            )
    rows.append(
        row(
            "pixels",
            f"bytes held per {side}² image: host uint8 cache vs device float16 tensor",
            3 * side * side,
            "bytes",
            3 * side * side * 2,
            "the benchmark held on the device in float16",
            "variant",
            "host bytes live in the page cache; the device holds one batch only",
        )
    )
    return rows


if __name__ == "__main__":
    for r in bench():
        print(r)
