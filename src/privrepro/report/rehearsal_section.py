"""The report's "cost of the paper profile" section, from ``results/rehearsal.csv``.

``make rehearsal`` runs every paper-profile figure on full-size stand-ins with a compute cap and
predicts the full run's wall time and memory (:mod:`privrepro.rehearsal.rehearse`). This section
shows that table and its totals (:mod:`privrepro.rehearsal.summary`): nothing in it is a reproduction (the data are stand-ins), so it stands apart from the
papers' sections and no value in it is compared with a paper's.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from privrepro.rehearsal.summary import FILM_TUNING, GPU_TARGET_H, gpu_totals
from privrepro.report.document import Block, Heading, Image, Para, Table

__all__ = ["rehearsal_section"]


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


def rehearsal_section(results: Path, plots: Path) -> list[Block]:
    """The section's blocks, or none when no rehearsal has been run."""
    path = results / "rehearsal.csv"
    if not path.is_file():
        return []
    table = pd.read_csv(path)
    devices = ", ".join(sorted({str(d) for d in table["device"].dropna()})) or "unknown device"
    total_h = gpu_totals(table)["cpu_h"]
    not_ok = table[table["status"] != "ok"]
    gpu = gpu_totals(table) if "predicted_gpu_h" in table else None
    blocks: list[Block] = [
        Heading(2, "Cost of the paper profile (rehearsal)", "rehearsal"),
        Para(
            "Every paper-profile figure run on full-size **rehearsal stand-ins** (synthetic files "
            "in the real formats and sizes; `make rehearsal-data`) with a compute cap: each long "
            "loop runs its first items, and its full time is predicted as total × seconds per "
            f"item (`make rehearsal`, `{path.as_posix()}`). Measured on {devices}. Predicted wall "
            f"time of the whole paper profile on this device: **{total_h:,.1f} h** "
            f"({len(table)} figures; {len(not_ok)} not `ok`, a timeout's prediction is a lower "
            "bound; a cache several figures share, an ip base model, counted once, as the run "
            "builds it once). Nothing here is a reproduction."
        ),
    ]
    if gpu is not None:
        verdict = "within" if gpu["rest_h"] <= GPU_TARGET_H else "over"
        model = next(iter(table["gpu_model"].dropna()), "an H100 roofline")
        blocks.append(
            Para(
                "**On one H100, predicted from operation counts** (no GPU ran: every torch "
                "operator of the rehearsed items counted, its FLOPs by "
                f"`torch.utils.flop_counter`'s formulas and its bytes, at the {model}; loading, "
                "Python and numpy as measured here): "
                f"**{gpu['rest_h']:,.1f} h** for every figure but cl FiLM tuning, {verdict} the "
                f"{GPU_TARGET_H:g} h target, and **{gpu['film_h']:,.1f} h** for cl FiLM tuning "
                f"({', '.join(FILM_TUNING)}); {gpu['lower_bounds']:.0f} rows are lower bounds "
                "(`lower bound` column). A prediction, not a measurement: `make rehearsal` on a "
                "GPU measures it."
            )
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
                "lower bound",
                "peak host (GB)",
                "peak device (GB)",
            ],
            rows,
            ["l", "l", "r", "r", "r", "r", "r", "l", "r", "r"],
        )
    )
    png = plots / "rehearsal.png"
    if png.is_file():
        blocks.append(Image(png, "predicted cost per figure", "Predicted wall time per figure."))
    return blocks
