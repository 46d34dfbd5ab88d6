"""The report's "cost of the paper profile" section, from ``results/rehearsal.csv``.

``make rehearsal`` runs every paper-profile figure on full-size stand-ins with a compute cap and
predicts the full run's wall time and memory (:mod:`privrepro.rehearsal.rehearse`). This section
shows that table and its totals (:mod:`privrepro.rehearsal.summary`): nothing in it is a reproduction (the data are stand-ins), so it stands apart from the
papers' sections and no value in it is compared with a paper's.
"""

from __future__ import annotations

import io
import logging
import math
import os
from pathlib import Path

import pandas as pd

from privrepro.bounded_read import TABLE_BYTES, read_bytes
from privrepro.rehearsal.summary import (
    FILM_TUNING,
    GPU_TARGET_H,
    PROFILE_TARGET_H,
    gpu_totals,
    part_totals,
)
from privrepro.report.document import Block, Heading, Image, Para, Table

__all__ = ["rehearsal_section"]

log = logging.getLogger("privrepro.report")

#: the columns the section reads from every row of ``rehearsal.csv``
_COLUMNS = ("experiment", "paper", "figure", "status", "device")


def _num(value: object, fmt: str) -> str:
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "—"
    return "—" if math.isnan(x) else format(x, fmt)


def _gb(value: object) -> str:
    try:
        x = float(value) / 1e9  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return "—"
    return "—" if math.isnan(x) else f"{x:.2f}"


#: what each part of the work is and what it shares, as the rehearsal names them
#: (:meth:`privrepro.figures.cost_model.CostModel.cost_parts`)
PART_MEANINGS = {
    "FiLM tuning": "Optuna trials of FiLM members by DP-SGD through ViT-B/16; once per study "
    "(benchmark, kind, scenario, ε, repeat): Naive, Non-CL and every label configuration share it",
    "FiLM final training": "the FiLM members (PEFT Ensemble, once per member key over Figs. 3, "
    "5 and A1), checkpoints (Naive) and single models (Non-CL, per unit)",
    "heads": "linear heads by DP-SGD on cached features: trials, training and evaluation",
    "features": "backbone features and FiLM pixel arrays, once per benchmark over all figures",
    "evaluation": "test-set predictions of each member or checkpoint, per unit",
    "cosine classifier": "the cosine classifier on cached features, per unit",
    "caches": "ip base models and tuned families, once per cache key over all figures",
    "training": "the rest of a unit's computation (ip evaluation, pac trainings, pb), per unit",
    "tuning": "tuning studies of other figures",
}


def _parts_cell(value: object) -> str:
    """A row's H100 hours per part, largest first (``FiLM tuning 12.3 h, features 0.2 h``)."""
    import json

    if not isinstance(value, str) or not value.startswith("{"):
        return ""
    parts = {k: float(v[1]) / 3600 for k, v in json.loads(value).items()}
    shown = [f"{k} {v:.3g} h" for k, v in sorted(parts.items(), key=lambda kv: -kv[1]) if v > 0]
    return ", ".join(shown[:3])


def _read(path: Path) -> pd.DataFrame:
    """``rehearsal.csv`` read bounded (a regular file of at most
    :data:`~privrepro.bounded_read.TABLE_BYTES`: never a pipe waited on or a device read).

    Raises:
        OSError: it cannot be read, or is no such file.
        ValueError: it is not a table of the rehearsal's columns.
    """
    table = pd.read_csv(io.BytesIO(read_bytes(path, TABLE_BYTES)))
    missing = [c for c in _COLUMNS if c not in table]
    if missing:
        raise ValueError(f"{path}: no column {', '.join(missing)}; not a rehearsal table")
    return table


def rehearsal_section(results: Path, plots: Path) -> list[Block]:
    """The section's blocks, or none when no rehearsal has been run; a ``rehearsal.csv`` that
    cannot be read is one line, there and in the log, and the report goes on."""
    path = results / "rehearsal.csv"
    if not os.path.lexists(path):
        return []
    try:
        table = _read(path)
    except (OSError, ValueError) as exc:
        line = " ".join((str(exc) if str(path) in str(exc) else f"{path}: {exc}").split())
        log.warning("rehearsal not shown: %s", line)
        return [
            Heading(2, "Cost of the paper profile (rehearsal)", "rehearsal"),
            Para(f"**Not shown:** `{line}`. Run `make rehearsal` again."),
        ]
    devices = ", ".join(sorted({str(d) for d in table["device"].dropna()})) or "unknown device"
    total_h = gpu_totals(table)["cpu_h"]
    priced = table["status"] == "priced"  # the cl PEFT rows: priced, not run, no device
    not_ok = table[~priced & (table["status"] != "ok")]
    gpu = gpu_totals(table) if "predicted_gpu_h" in table else None
    blocks: list[Block] = [
        Heading(2, "Cost of the paper profile (rehearsal)", "rehearsal"),
        Para(
            "Every paper-profile figure run on full-size **rehearsal stand-ins** (synthetic files "
            "in the real formats and sizes; `make rehearsal-data`) with a compute cap: each long "
            "loop runs its first items, and its full time is predicted as total × seconds per "
            f"item (`make rehearsal`, `{path.as_posix()}`). Measured on {devices}. Predicted wall "
            f"time of the whole paper profile on this device: **{total_h:,.1f} h** "
            f"({len(table)} figures, {int(priced.sum())} priced from their image-passes, not run; "
            f"{len(not_ok)} not `ok`, a timeout's prediction is a lower "
            "bound; what several units or figures compute alike — a cache, a tuning study, an "
            "ensemble's members — counted once, as the run computes it once). Nothing here is a "
            "reproduction."
        ),
    ]
    if gpu is not None:
        verdict = "within" if gpu["rest_h"] <= GPU_TARGET_H else "over"
        whole = "within" if gpu["total_h"] <= PROFILE_TARGET_H else "over"
        model = next(iter(table["gpu_model"].dropna()), "an H100 roofline")
        blocks.append(
            Para(
                "**On one H100, predicted from operation counts** (no GPU ran: every torch "
                "operator of the rehearsed items counted, its FLOPs by "
                f"`torch.utils.flop_counter`'s formulas and its bytes, at the {model}; loading, "
                "Python and numpy as measured here): "
                f"**{gpu['total_h']:,.1f} h** for the whole paper profile, {whole} the "
                f"{PROFILE_TARGET_H:g} h target (about the cl paper's own budget); of it "
                f"**{gpu['rest_h']:,.1f} h** for every figure but the cl PEFT figures, {verdict} "
                f"the {GPU_TARGET_H:g} h target, and **{gpu['film_h']:,.1f} h** for the cl PEFT "
                f"figures ({', '.join(FILM_TUNING)}); {gpu['lower_bounds']:.0f} rows are lower "
                "bounds (`lower bound` column). A prediction, not a measurement: `make "
                "rehearsal` on a GPU measures it."
            )
        )
    parts = part_totals(table) if gpu is not None else {}
    parts_table = None
    if set(parts) - {"(not split)"}:
        parts_table = Table(
            ["part", "what it is and what is shared", "H100 predicted (h)", "TFLOP"],
            [
                [
                    name,
                    PART_MEANINGS.get(name, ""),
                    _num(v["gpu_h"], ",.3g"),
                    _num(v["tflop"], ".3g"),
                ]
                for name, v in parts.items()
            ],
            ["l", "l", "r", "r"],
        )
    rows = []
    for _, r in table.sort_values(["paper", "figure"]).iterrows():
        rows.append(
            [
                f"{r['paper']}/{r['figure']}",
                str(r["status"]),
                _num(r.get("n_units"), ".0f"),
                _num(r.get("load_s"), ".1f"),
                _num(r.get("s_per_unit"), ".3g"),
                _num(r.get("predicted_h"), ".3g"),
                _num(r.get("predicted_gpu_h"), ".3g"),
                _parts_cell(r.get("parts")),
                "yes" if str(r.get("lower_bound")) == "True" else "",
                _gb(r.get("peak_host_bytes")),
                _gb(r.get("peak_device_bytes")),
            ]
        )
    blocks.append(
        Table(
            [
                "figure",
                "status",
                "units",
                "load (s)",
                "s / unit",
                "predicted (h)",
                "H100 predicted (h)",
                "largest parts (H100)",
                "lower bound",
                "peak host (GB)",
                "peak device (GB)",
            ],
            rows,
            ["l", "l", "r", "r", "r", "r", "r", "l", "l", "r", "r"],
        )
    )
    if parts_table is not None:
        blocks.append(
            Para(
                "**The parts of the work** over the whole paper profile, on one H100 (predicted), "
                "each part that several units or figures compute alike counted once:"
            )
        )
        blocks.append(parts_table)
    png = plots / "rehearsal.png"
    if os.path.lexists(png):  # not a plot: refused in one line when embedded
        blocks.append(Image(png, "predicted cost per figure", "Predicted wall time per figure."))
    return blocks
