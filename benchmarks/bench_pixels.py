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

from privrepro.bench import best_time, row
from privrepro.continual.pixels import HostImages

N, SIDE, BATCH, BATCHES = 1000, 224, 256, 8


def bench() -> list[dict[str, Any]]:
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    idx = [np.sort(rng.choice(N, BATCH, replace=False)) for _ in range(BATCHES)]
    mean, std = (0.5, 0.5, 0.5), (0.5, 0.5, 0.5)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pixels.npy"
        out = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint8, shape=(N, 3, SIDE, SIDE))
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
    images = BATCH * BATCHES
    return [
        row(
            "pixels",
            "FiLM batch, host side at 224²: uint8 rows from the memmap cache",
            images / t_host,
            "images/s",
            images / t_tensor,
            "baseline: indexing a float32 tensor held in memory; 1 thread, batches of 256",
        ),
        row(
            "pixels",
            "FiLM batch gather on the CPU at 224²: memmap rows -> normalised float32",
            images / t_store,
            "images/s",
            images / t_tensor,
            "baseline: indexing a float32 tensor held in memory; 1 thread, batches of 256",
        ),
        row(
            "pixels",
            "bytes held per 224² image: host uint8 cache vs device float16 tensor",
            3 * SIDE * SIDE,
            "bytes",
            3 * SIDE * SIDE * 2,
            "host bytes live in the page cache; the device holds one batch only",
        ),
    ]


if __name__ == "__main__":
    for r in bench():
        print(r)
