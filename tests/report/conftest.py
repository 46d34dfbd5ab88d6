"""Tiny fake results trees in the runner's layout (docs/adding-a-figure.md) and reference files."""

from __future__ import annotations

import json
import struct
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest


def tiny_png() -> bytes:
    """A valid 1×1 white PNG (signature, IHDR, IDAT, IEND)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00\xff\xff\xff")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


WriteFigure = Callable[..., Path]


@pytest.fixture
def write_figure(tmp_path: Path) -> WriteFigure:
    """Write ``results/<paper>/<figure>.{csv,summary.csv,meta.json}`` and a PNG under tmp_path."""

    def write(paper: str, figure: str, table: pd.DataFrame | None = None,
              summary: pd.DataFrame | None = None, profile: str = "smoke",
              meta: dict[str, Any] | None = None, png: bool = True) -> Path:
        res = tmp_path / "results" / paper
        res.mkdir(parents=True, exist_ok=True)
        base = {"paper": paper, "figure": figure, "profile": profile, "seed": 0,
                "unit_id": "u0"}
        if table is None:
            table = pd.DataFrame({"x": [1.0, 2.0], "y": [0.5, 0.25]})
        full = table.assign(**{k: v for k, v in base.items() if k not in table.columns})
        full.to_csv(res / f"{figure}.csv", index=False)
        if summary is not None:
            summary.to_csv(res / f"{figure}.summary.csv", index=False)
        m = {"paper": paper, "figure": figure, "title": f"{paper} {figure} title",
             "kind": "figure", "profile": profile, "seed": 0, "git_sha": "0123456789abcdef",
             "git_dirty": False, "started": "2026-01-01T00:00:00Z", "wall_time_s": 1.25,
             "device": "cpu", "params": {}, "assumptions": {},
             "source": {"paper_file": "x.txt", "where": "Sec. 1", "equation": "eq. (1)"},
             "units": ["u0"], "versions": {"numpy": "2.0"}}
        m.update(meta or {})
        (res / f"{figure}.meta.json").write_text(json.dumps(m))
        if png:
            plots = tmp_path / "plots" / paper
            plots.mkdir(parents=True, exist_ok=True)
            (plots / f"{figure}.png").write_bytes(tiny_png())
        return res

    return write


WriteRefs = Callable[[str, str], Path]


@pytest.fixture
def write_refs(tmp_path: Path) -> WriteRefs:
    """Write ``references/<name>.yaml`` (dedented) under tmp_path; returns the folder."""

    def write(name: str, text: str) -> Path:
        folder = tmp_path / "references"
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.yaml").write_text(textwrap.dedent(text))
        return folder

    return write


#: The cl Fig. 2 reference entry of docs/adding-a-figure.md (value 12: the paper's Fig. 2 caption).
CL_FIG2 = """\
paper: cl
values:
  - id: cl-fig2-largest-k-dropped
    figure: fig2
    quantity: largest class size dropped with probability >= 0.99 at ε=1, δ=1e-7
    value: 12
    source: {where: "Fig. 2 caption", kind: printed}
    match: {table: summary, metric: largest_k_dropped_99, where: {epsilon: 1.0, delta: 1.0e-7}}
    tolerance: {abs: 0, reason: "integer from the closed form"}
    profiles: [smoke, paper]
errata:
  - id: cl-fig2-k-range
    title: "Fig. 2's k-range and (ε, δ) grid are not stated"
    detail: "Only ε=1, δ=1e-7 is given in the caption; the grid drawn is assumed."
    figure: fig2
    evidence: {figure: fig2, metric: largest_k_dropped_99, where: {epsilon: 1.0, delta: 1.0e-7}}
"""


def cl_fig2_summary(largest_k: int = 12) -> pd.DataFrame:
    """Summary rows as cl Fig. 2's recipe writes them (12 at ε=1, δ=1e-7: ln(1 + 0.01(e−1)/1e-7)
    = 12.05, floor 12, closed form of dp.group)."""
    return pd.DataFrame([
        {"metric": "largest_k_dropped_99", "epsilon": 1.0, "delta": 1e-7, "value": largest_k},
        {"metric": "largest_k_dropped_99", "epsilon": 2.0, "delta": 1e-7, "value": 6},
    ])
