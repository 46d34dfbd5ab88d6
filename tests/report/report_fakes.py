"""Helpers for the report tests: a tiny PNG, the cl Fig. 2 reference entry and its summary rows.

(A uniquely named module, so ``from report_fakes import ...`` never picks up another folder's
``conftest``.)
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pandas as pd

WriteFigure = Callable[..., Path]
WriteRefs = Callable[[str, str], Path]


def tiny_png() -> bytes:
    """A valid 1×1 white PNG (signature, IHDR, IDAT, IEND)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00\xff\xff\xff")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


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
    return pd.DataFrame(
        [
            {"metric": "largest_k_dropped_99", "epsilon": 1.0, "delta": 1e-7, "value": largest_k},
            {"metric": "largest_k_dropped_99", "epsilon": 2.0, "delta": 1e-7, "value": 6},
        ]
    )
