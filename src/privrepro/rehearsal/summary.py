"""What the rehearsal hands to the report: ``results/rehearsal.csv``'s columns and its totals.

``make rehearsal`` (:mod:`privrepro.rehearsal.rehearse`) writes one row per paper-profile figure;
the report's section (:mod:`privrepro.report.rehearsal_section`) reads that file and these
totals. Pure functions of the table: nothing here runs a figure.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

__all__ = [
    "COLUMNS",
    "FILM_TUNING",
    "GPU_TARGET_H",
    "PROFILE_TARGET_H",
    "gpu_totals",
    "mark_shared_caches",
    "part_totals",
]

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
    "film_mpasses",
    "parts",
    "precision",
    "gpu_model",
    "peak_host_bytes",
    "peak_device_bytes",
    "estimated_host_bytes",
    "estimated_device_bytes",
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
    """Set ``cache_shared_s`` / ``cache_shared_gpu_s``: the part of each row's shared cost that
    an earlier row of the table already counts (equal keys in ``cache_keys``, ``"<part name> |
    <key>"``: the real run builds an ip base model or a feature array once, in
    ``<cache_dir>``, runs a tuning study once in its journal and trains an ensemble's members
    once, in ``<cache_dir>/cl/members``, for every figure). A row's ``predicted_*`` stays what
    its figure costs alone; the totals subtract these."""
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

#: the target of the whole paper profile on one H100, every figure included: the cl paper's own
#: budget ("of the order of 30 GPU days" on V100s, App. E.4), which the paper's protocol
#: (docs/cl-peft.md) fits in mixed precision; on an H100 SXM the same work at the datasheets'
#: BF16 rates (989 against the V100's 125 FP16 TFLOP/s) is well under 100 hours
PROFILE_TARGET_H = 100.0

#: the figures that tune and train FiLM ensembles (Optuna trials of DP-SGD through ViT-B/16,
#: every PEFT figure of the paper profile): stated apart from the target (their rows do not
#: split the tuning from the final training, so the whole rows are set apart)
FILM_TUNING = ("cl/fig3_peft", "cl/fig4_peft", "cl/fig5_peft", "cl/figA1", "cl/tA7_peft")


def _numeric(table: pd.DataFrame, column: str) -> pd.Series:
    col = table[column] if column in table else pd.Series(dtype=float)
    return pd.to_numeric(col, errors="coerce").reindex(table.index).fillna(0.0)


def gpu_totals(table: pd.DataFrame) -> dict[str, float]:
    """Predicted hours of the whole paper profile, each shared part counted once
    (:func:`mark_shared_caches`): on one H100, ``total_h`` (every figure), ``rest_h`` (every
    figure but the cl PEFT figures) and ``film_h`` (the cl PEFT figures, :data:`FILM_TUNING`);
    on the rehearsal's device, ``cpu_h``; and the count of rows that are lower bounds."""
    gpu = _numeric(table, "predicted_gpu_h") - _numeric(table, "cache_shared_gpu_s") / 3600
    cpu = _numeric(table, "predicted_h") - _numeric(table, "cache_shared_s") / 3600
    film = table["experiment"].isin(FILM_TUNING)
    lower = table.get("lower_bound", pd.Series(False, index=table.index))
    return {
        "total_h": float(gpu.sum()),
        "rest_h": float(gpu[~film].sum()),
        "film_h": float(gpu[film].sum()),
        "cpu_h": float(cpu.sum()),
        "lower_bounds": float(lower.fillna(False).astype(bool).sum()),
    }


def _json_dict(value: Any) -> dict[str, list[float]]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.startswith("{"):
        return dict(json.loads(value))
    return {}


def part_totals(table: pd.DataFrame) -> dict[str, dict[str, float]]:
    """The whole paper profile's predicted cost per part name (``parts`` column: features,
    FiLM tuning, FiLM final training, heads, evaluation, ...), a part several rows share
    (``cache_keys``) counted once: per name, ``cpu_h``, ``gpu_h`` (one H100, predicted) and
    ``tflop``; parts that cost nothing anywhere are left out. Rows without parts count whole
    under ``(not split)``."""
    out: dict[str, list[float]] = {}
    seen: set[str] = set()
    for _, row in table.iterrows():
        parts = _json_dict(row.get("parts"))
        split = bool(parts)
        if not split:
            cpu = pd.to_numeric(pd.Series([row.get("predicted_s")]), errors="coerce").fillna(0)
            gpu = pd.to_numeric(pd.Series([row.get("predicted_gpu_s")]), errors="coerce").fillna(0)
            parts = {"(not split)": [float(cpu.iloc[0]), float(gpu.iloc[0]), 0.0]}
        for name, values in parts.items():
            acc = out.setdefault(name, [0.0, 0.0, 0.0])
            for j, v in enumerate(values[:3]):
                acc[j] += float(v)
        for label, values in _json_dict(row.get("cache_keys")).items():
            if split and label in seen:  # counted by an earlier row
                acc = out.setdefault(label.split(" | ", 1)[0], [0.0, 0.0, 0.0])
                for j, v in enumerate(values[:3]):
                    acc[j] -= float(v)
            seen.add(label)
    return {
        name: {"cpu_h": v[0] / 3600, "gpu_h": v[1] / 3600, "tflop": v[2]}
        for name, v in sorted(out.items(), key=lambda kv: -kv[1][1])
        if any(abs(x) > 1e-9 for x in v)  # a part no figure spent anything on is left out
    }
