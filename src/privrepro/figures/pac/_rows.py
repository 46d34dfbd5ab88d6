"""Rows shared by the pac noise-calibration tables (Examples 2–4): one row per noise method."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from privrepro.pac.algorithms import Algorithm1Result

__all__ = ["DATA_LABELS", "algorithm1_rows", "clean_log_axis", "exact_rows"]

DATA_LABELS = {
    "cifar10": "CIFAR-10 (60,000 × 3,072)",
    "mnist": "MNIST",
    "digits": "scikit-learn digits (stand-in)",
    "synthetic_images": "synthetic images (stand-in)",
}


def algorithm1_rows(res: Algorithm1Result, dp_norm: float | None) -> list[dict[str, Any]]:
    """Algorithm 1 as stated (its branch), and Theorem 3's anisotropic noise on its ``λ̂``."""
    base = res.summary()
    rows = [
        {
            "method": f"pac_algorithm1_{res.branch}",
            "noise_norm": res.noise.expected_norm_upper,
            **base,
        },
        {"method": "pac_theorem3_estimated", "noise_norm": float(np.sqrt(res.ideal_trace)), **base},
    ]
    for r in rows:
        r["dp_over_pac"] = dp_norm / float(r["noise_norm"]) if dp_norm else np.nan
    return rows


def exact_rows(lam: NDArray[np.float64], v: float, dp_norm: float | None) -> list[dict[str, Any]]:
    """Theorem 3 (anisotropic) and the isotropic trace rule on the exact spectrum."""
    aniso = float(np.sqrt(lam).sum() / np.sqrt(2 * v))
    iso = float(np.sqrt(lam.size * lam.sum() / (2 * v)))
    rows: list[dict[str, Any]] = [
        {
            "method": "pac_theorem3_exact",
            "noise_norm": aniso,
            "sum_sqrt_lambda": float(np.sqrt(lam).sum()),
            "trace_sigma": float(lam.sum()),
        },
        {
            "method": "pac_isotropic_exact",
            "noise_norm": iso,
            "sum_sqrt_lambda": float(np.sqrt(lam).sum()),
            "trace_sigma": float(lam.sum()),
        },
    ]
    for r in rows:
        r["dp_over_pac"] = dp_norm / float(r["noise_norm"]) if dp_norm else np.nan
    return rows


def clean_log_axis(ax: Any, axis: str = "x") -> None:
    """A log axis with plain major labels and no minor labels (they overlap on short ranges)."""
    import matplotlib.ticker as mticker

    target = ax.xaxis if axis == "x" else ax.yaxis
    (ax.set_xscale if axis == "x" else ax.set_yscale)("log")
    target.set_major_formatter(mticker.FormatStrFormatter("%g"))
    target.set_minor_formatter(mticker.NullFormatter())
