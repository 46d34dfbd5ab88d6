"""Injected randomness: one root seed split into named, independent streams.

A stream is identified by ``(root seed, unit id, stream name)``. The three are hashed into a
``numpy.random.SeedSequence`` entropy, so streams never overlap, a unit's noise does not depend on
which other units run or in what order, and seed 0 is a seed like any other.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["numpy_stream", "python_random_kept", "stream_seed", "torch_stream"]


def stream_seed(seed: int, *names: str) -> int:
    """A 128-bit integer derived from the root seed and the stream's names (stable across runs)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed = {seed!r}: must be an integer >= 0")
    text = "\x1f".join([str(int(seed)), *names]).encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:16], "little")


def numpy_stream(seed: int, *names: str) -> np.random.Generator:
    """A PCG64 generator for the stream named by ``names`` under root ``seed``."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(stream_seed(seed, *names))))


def torch_stream(seed: int, *names: str, device: str = "cpu") -> Any:
    """A ``torch.Generator`` on ``device`` for the stream named by ``names`` under root ``seed``."""
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(stream_seed(seed, *names) % (2**63 - 1))
    return gen


@contextmanager
def python_random_kept() -> Iterator[None]:
    """Python's global ``random`` state as it was before the block, for imports of libraries that
    draw from it when first imported (rich, which scikit-learn imports when it is installed, draws
    from it to name its styles' links): no state of the caller depends on what was imported
    before (the library itself never draws from the global stream)."""
    state = random.getstate()
    try:
        yield
    finally:
        random.setstate(state)
