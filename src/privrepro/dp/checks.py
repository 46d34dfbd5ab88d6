"""Argument checks shared by the DP modules: a clear error before any compute."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privrepro.config import ConfigError

__all__ = ["as_float_array", "check_range"]


def as_float_array(name: str, value: ArrayLike) -> NDArray[np.float64]:
    """``value`` as a float array; a NaN anywhere is an error naming ``name``."""
    arr = np.asarray(value, dtype=float)
    if np.any(np.isnan(arr)):
        raise ConfigError(name, value, "must not be NaN")
    return arr


def check_range(
    name: str,
    value: ArrayLike,
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
) -> NDArray[np.float64]:
    """``value`` as a float array, every element inside the stated bounds, else ``ConfigError``."""
    arr = as_float_array(name, value)
    ok = np.ones(arr.shape, dtype=bool)
    if gt is not None:
        ok &= arr > gt
    if ge is not None:
        ok &= arr >= ge
    if lt is not None:
        ok &= arr < lt
    if le is not None:
        ok &= arr <= le
    if not np.all(ok):
        lo = f"({gt!r}" if gt is not None else (f"[{ge!r}" if ge is not None else "(-inf")
        hi = f"{lt!r})" if lt is not None else (f"{le!r}]" if le is not None else "inf)")
        bad = arr[~ok] if arr.ndim else arr
        raise ConfigError(name, bad.tolist() if bad.ndim else float(bad), f"must lie in {lo}, {hi}")
    return arr
