"""What the rehearsal hands to the report: ``results/rehearsal.csv``'s columns and its totals.

``make rehearsal`` (:mod:`privrepro.rehearsal.rehearse`) writes one row per paper-profile figure;
the report's section (:mod:`privrepro.report.rehearsal_section`) reads that file and these
totals. Pure functions of the table: nothing here runs a figure.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

__all__ = ["COLUMNS", "FILM_TUNING", "GPU_TARGET_H", "gpu_totals", "mark_shared_caches"]

#: the columns of ``results/rehearsal.csv``, in order
COLUMNS = [
    "paper",
    "figure",
    "experiment",
    "profile",
    "data",
    "device",
    "status",
    "n_units",
    "units_run",
    "capped_wall_s",
    "load_s",
    "s_per_step",
    "n_steps",
    "s_per_epoch",
    "n_epochs",
    "s_per_task",
    "n_tasks",
    "s_per_trial",
    "n_trials",
    "s_per_unit",
    "cost_classes",
    "n_caches",
    "cache_s",
    "cache_shared_s",
    "predicted_s",
    "predicted_h",
    "lower_bound",
    "cache_gpu_s",
    "cache_shared_gpu_s",
    "predicted_gpu_s",
    "predicted_gpu_h",
    "predicted_tflop",
    "gpu_model",
    "peak_host_bytes",
    "peak_device_bytes",
    "estimated_host_bytes",
    "fits_host",
    "fits_device",
    "prediction",
    "loops",
    "cache_keys",
    "overrides",
    "note",
    "rehearsal_wall_s",
]


def _cache_keys(value: Any) -> dict[str, list[float]]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.startswith("{"):
        return dict(json.loads(value))
    return {}


def mark_shared_caches(table: pd.DataFrame) -> pd.DataFrame:
    """Set ``cache_shared_s`` / ``cache_shared_gpu_s``: the part of each row's cache-building
    cost that an earlier row of the table already counts (equal keys in ``cache_keys``: the real
    run builds an ip base model or a feature array once, in ``<cache_dir>``, for every figure).
    A row's ``predicted_*`` stays what its figure costs alone; the totals subtract these."""
    out = table.copy()
    seen: set[str] = set()
    shared_cpu, shared_gpu = [], []
    for value in out["cache_keys"] if "cache_keys" in out else [None] * len(out):
        keys = _cache_keys(value)
        shared_cpu.append(sum(float(v[0]) for k, v in keys.items() if k in seen))
        shared_gpu.append(sum(float(v[1]) for k, v in keys.items() if k in seen))
        seen |= set(keys)
    out["cache_shared_s"] = shared_cpu
    out["cache_shared_gpu_s"] = shared_gpu
    return out


#: the target: every figure but cl FiLM tuning within this many hours on one H100
GPU_TARGET_H = 24.0

#: the figures that tune and train FiLM ensembles (Optuna trials of DP-SGD through ViT-B/16,
#: every PEFT figure of the paper profile): stated apart from the target (their rows do not
#: split the tuning from the final training, so the whole rows are set apart)
FILM_TUNING = ("cl/fig3_peft", "cl/fig4_peft", "cl/fig5_peft", "cl/figA1", "cl/tA7_peft")


def _numeric(table: pd.DataFrame, column: str) -> pd.Series:
    col = table[column] if column in table else pd.Series(dtype=float)
    return pd.to_numeric(col, errors="coerce").reindex(table.index).fillna(0.0)


def gpu_totals(table: pd.DataFrame) -> dict[str, float]:
    """Predicted hours of the whole paper profile, each shared cache counted once
    (:func:`mark_shared_caches`): on one H100, ``rest_h`` (every figure but cl FiLM tuning) and
    ``film_h`` (cl FiLM tuning, :data:`FILM_TUNING`); on the rehearsal's device, ``cpu_h``; and
    the count of rows that are lower bounds."""
    gpu = _numeric(table, "predicted_gpu_h") - _numeric(table, "cache_shared_gpu_s") / 3600
    cpu = _numeric(table, "predicted_h") - _numeric(table, "cache_shared_s") / 3600
    film = table["experiment"].isin(FILM_TUNING)
    lower = table.get("lower_bound", pd.Series(False, index=table.index))
    return {
        "rest_h": float(gpu[~film].sum()),
        "film_h": float(gpu[film].sum()),
        "cpu_h": float(cpu.sum()),
        "lower_bounds": float(lower.fillna(False).astype(bool).sum()),
    }
