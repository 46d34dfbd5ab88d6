"""The arithmetic a model's forward and backward run in: ``fp32``, ``tf32`` or ``bf16``.

A GPU runs ViT-B/16's matmuls on its tensor cores only in reduced precision (an H100 SXM: 67
TFLOP/s dense in FP32, 494 in TF32 or BF16). :func:`compute_precision` puts the *model's*
computation in the precision asked for (more in ``docs/modules.md``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from privrepro.config import ConfigError

if TYPE_CHECKING:  # torch is imported where a context runs (the constants need none)
    import torch

__all__ = [
    "PRECISIONS",
    "backward_precision",
    "check_precision",
    "compute_precision",
    "exact_arithmetic",
    "unit_precision",
    "widened",
]

PRECISIONS = ("fp32", "tf32", "bf16")


def check_precision(value: Any, key: str = "precision") -> str:
    """``value`` if it names a precision, else a one-line :class:`ConfigError` naming ``key``."""
    if value not in PRECISIONS:
        raise ConfigError(key, value, f"must be one of {list(PRECISIONS)}")
    return str(value)


def widened(t: torch.Tensor) -> torch.Tensor:
    """``t`` in float32 if it is a 16-bit float (a reduced-precision forward's output or
    per-sample gradient), else unchanged (float32 and float64 stay as they are)."""
    import torch

    return t.float() if t.dtype in (torch.bfloat16, torch.float16) else t


@contextlib.contextmanager
def _tf32(enabled: bool) -> Iterator[None]:
    import torch

    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = matmul
        torch.backends.cudnn.allow_tf32 = cudnn


@contextlib.contextmanager
def compute_precision(precision: str, device: str | torch.device = "cpu") -> Iterator[None]:
    """Run the block's model computation in ``precision`` on ``device`` (see ``docs/modules.md``); the global flags it sets are given back on exit."""
    check_precision(precision)
    if precision == "fp32":
        yield
    elif precision == "tf32":
        with _tf32(True):
            yield
    else:
        import torch

        with torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16):
            yield


@contextlib.contextmanager
def backward_precision(precision: str) -> Iterator[None]:
    """The backward pass of a forward run under :func:`compute_precision`: TF32 for ``tf32``
    (the backward's matmuls); nothing otherwise (autocast's backward follows the forward's
    dtypes by itself and is not run under autocast)."""
    check_precision(precision)
    if precision == "tf32":
        with _tf32(True):
            yield
    else:
        yield


@contextlib.contextmanager
def exact_arithmetic(enabled: bool = True) -> Iterator[None]:
    """float32 without TF32 and without autocast for the block (DP-SGD's norms, clipping, sums
    and noise); ``enabled=False`` changes nothing (the ``fp32`` path, bit for bit as before)."""
    if not enabled:
        yield
        return
    import torch

    with (
        _tf32(False),
        torch.autocast(device_type="cpu", enabled=False),
        torch.autocast(device_type="cuda", enabled=False),
    ):
        yield


def unit_precision(unit: Mapping[str, Any]) -> str:
    """The precision a run unit computes in: the least precise of the ``precision`` entries of
    its settings groups (``train``, ``features``), ``fp32`` when it has none."""
    found = {"fp32"}
    for value in unit.values():
        if isinstance(value, Mapping) and value.get("precision") is not None:
            found.add(str(value["precision"]))
    if isinstance(unit.get("precision"), str):
        found.add(str(unit["precision"]))
    return max(found, key=PRECISIONS.index)
