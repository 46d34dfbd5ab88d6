"""The report reads its plots and the rehearsal's table bounded (:mod:`privrepro.bounded_read`):
a named pipe or an oversized file where a PNG or ``rehearsal.csv`` is expected is one line, and
the report goes on.

Were a check missing, a pipe would block the reader forever: each report is built under an alarm
(``tests/alarm.py``), so a regression fails the test instead of hanging it. Oversized files are
sparse (no disk is used, nothing is read).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from report_fakes import WriteFigure, tiny_png

from alarm import bounded
from privrepro.bounded_read import PLOT_BYTES, TABLE_BYTES
from privrepro.report.document import Image, Para, to_html
from privrepro.report.make import generate_report
from privrepro.report.rehearsal_section import rehearsal_section


def _special(path: Path, kind: str, bound: int) -> None:
    """A named pipe, or a sparse file one byte over ``bound``, at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    if kind == "pipe":
        os.mkfifo(path)
    else:
        with open(path, "wb") as fh:
            fh.truncate(bound + 1)


#: what the one line says of each
_SAYS = {"pipe": "a named pipe, not a regular file; not read", "oversized": "such a file may hold"}


@pytest.mark.parametrize("kind", ["pipe", "oversized"])
def test_a_figure_plot_that_is_not_a_plot_is_one_line(
    tmp_path: Path, write_figure: WriteFigure, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """cl Fig. 2's PNG a pipe or 64 MiB + 1 byte: the page says so beside the caption, pb Fig. 2's
    PNG is still embedded, and the report is written."""
    write_figure("cl", "fig2")
    write_figure("pb", "fig2")
    bad = tmp_path / "plots" / "cl" / "fig2.png"
    _special(bad, kind, PLOT_BYTES)
    with bounded(60):
        generate_report(
            tmp_path / "results",
            tmp_path / "plots",
            tmp_path / "REPORT.md",
            tmp_path / "references",
            None,
        )
    html = "\n".join(
        p.read_text() for p in [*tmp_path.glob("REPORT*.html"), *tmp_path.glob("REPORT/*.html")]
    )
    assert html.count('src="data:image/png;base64,iVBORw0KGgo') == 1  # pb Fig. 2's, inlined
    line = next(x for x in html.splitlines() if "plot not embedded:" in x)
    assert str(bad) in line and _SAYS[kind] in line
    assert len(html) < 1 << 20  # nothing of the oversized file was inlined
    assert any("plot not embedded:" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("kind", ["pipe", "oversized"])
def test_a_rehearsal_table_that_is_not_a_table_is_one_line(tmp_path: Path, kind: str) -> None:
    """``rehearsal.csv`` a pipe or 2 GiB + 1 byte: the section is its heading and one line."""
    _special(tmp_path / "rehearsal.csv", kind, TABLE_BYTES)
    with bounded(20):
        blocks = rehearsal_section(tmp_path, tmp_path)
    (para,) = [b for b in blocks if isinstance(b, Para)]
    assert para.text.startswith("**Not shown:** `") and _SAYS[kind] in para.text
    assert str(tmp_path / "rehearsal.csv") in para.text and "\n" not in para.text


def test_a_rehearsal_table_without_its_columns_is_one_line(tmp_path: Path) -> None:
    pd.DataFrame({"paper": ["pb"]}).to_csv(tmp_path / "rehearsal.csv", index=False)
    (para,) = [b for b in rehearsal_section(tmp_path, tmp_path) if isinstance(b, Para)]
    assert "no column experiment, figure, status, device; not a rehearsal table" in para.text


@pytest.mark.parametrize("kind", ["pipe", "oversized"])
def test_a_rehearsal_plot_that_is_not_a_plot_is_one_line(tmp_path: Path, kind: str) -> None:
    """The section's ``rehearsal.png`` a pipe or 64 MiB + 1 byte: the table is shown, the plot is
    one line in the page; a real PNG is embedded."""
    rows = {
        "experiment": ["pb/fig1"],
        "paper": ["pb"],
        "figure": ["fig1"],
        "status": ["ok"],
        "device": ["cpu"],
        "predicted_h": [0.1],
    }
    pd.DataFrame(rows).to_csv(tmp_path / "rehearsal.csv", index=False)
    (tmp_path / "rehearsal.png").write_bytes(tiny_png())
    blocks = rehearsal_section(tmp_path, tmp_path)
    assert 'src="data:image/png;base64,iVBORw0KGgo' in to_html(blocks, tmp_path, "r")
    _special(tmp_path / "rehearsal.png", kind, PLOT_BYTES)
    with bounded(20):
        blocks = rehearsal_section(tmp_path, tmp_path)
        page = to_html(blocks, tmp_path, "r")
    assert any(isinstance(b, Image) for b in blocks) and "data:image/png" not in page
    line = next(x for x in page.splitlines() if "plot not embedded:" in x)
    assert str(tmp_path / "rehearsal.png") in line and _SAYS[kind] in line
