"""Tiny fake results trees in the runner's layout (docs/adding-a-figure.md) and reference files."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # report_fakes (pytest runs with --import-mode=importlib)

from report_fakes import WriteFigure, WriteRefs, tiny_png  # noqa: E402


@pytest.fixture
def write_figure(tmp_path: Path) -> WriteFigure:
    """Write ``results/<paper>/<figure>.{csv,summary.csv,meta.json}`` and a PNG under tmp_path."""

    def write(
        paper: str,
        figure: str,
        table: pd.DataFrame | None = None,
        summary: pd.DataFrame | None = None,
        profile: str = "smoke",
        meta: dict[str, Any] | None = None,
        png: bool = True,
    ) -> Path:
        res = tmp_path / "results" / paper
        res.mkdir(parents=True, exist_ok=True)
        base = {"paper": paper, "figure": figure, "profile": profile, "seed": 0, "unit_id": "u0"}
        if table is None:
            table = pd.DataFrame({"x": [1.0, 2.0], "y": [0.5, 0.25]})
        full = table.assign(**{k: v for k, v in base.items() if k not in table.columns})
        full.to_csv(res / f"{figure}.csv", index=False)
        if summary is not None:
            summary.to_csv(res / f"{figure}.summary.csv", index=False)
        m = {
            "paper": paper,
            "figure": figure,
            "title": f"{paper} {figure} title",
            "kind": "figure",
            "profile": profile,
            "seed": 0,
            "git_sha": "0123456789abcdef",
            "git_dirty": False,
            "started": "2026-01-01T00:00:00Z",
            "wall_time_s": 1.25,
            "device": "cpu",
            "params": {},
            "assumptions": {},
            "source": {"paper_file": "x.txt", "where": "Sec. 1", "equation": "eq. (1)"},
            "units": ["u0"],
            "versions": {"numpy": "2.0"},
        }
        m.update(meta or {})
        (res / f"{figure}.meta.json").write_text(json.dumps(m))
        if png:
            plots = tmp_path / "plots" / paper
            plots.mkdir(parents=True, exist_ok=True)
            (plots / f"{figure}.png").write_bytes(tiny_png())
        return res

    return write


@pytest.fixture
def write_refs(tmp_path: Path) -> WriteRefs:
    """Write ``references/<name>.yaml`` (dedented) under tmp_path; returns the folder."""

    def write(name: str, text: str) -> Path:
        folder = tmp_path / "references"
        folder.mkdir(exist_ok=True)
        (folder / f"{name}.yaml").write_text(textwrap.dedent(text))
        return folder

    return write
