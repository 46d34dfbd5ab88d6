"""save_figure: one layout and one tight box shared by the PNG and the PDF."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

from privrepro.plotting.style import new_figure, save_figure


def _pdf_page_inches(path: Path) -> tuple[float, float]:
    box = re.search(rb"/MediaBox \[\s*([\d.\s-]+)\]", path.read_bytes())
    assert box, "no MediaBox in the PDF"
    x0, y0, x1, y1 = (float(v) for v in box.group(1).split())
    return (x1 - x0) / 72, (y1 - y0) / 72  # PDF points: 72 per inch


def _figure(tmp_path: Path, name: str, caption: str | None) -> list[Path]:
    fig, ax = new_figure(width=4.0, height=3.0)
    ax.plot(np.arange(10), np.arange(10) ** 2, label="x²")
    ax.set_title("a title")
    ax.legend()
    return save_figure(fig, tmp_path / name, caption=caption)


def test_png_and_pdf_share_the_tight_box_with_the_caption_below(tmp_path: Path) -> None:
    paths = _figure(tmp_path, "fig", "provenance footer under the axes")
    assert [p.suffix for p in paths] == [".png", ".pdf"]
    height, width = mpimg.imread(paths[0]).shape[:2]
    w_pdf, h_pdf = _pdf_page_inches(paths[1])
    # the caption sits below the figure (y = -0.02): the PDF's box holds it, so its page is
    # taller than the same figure's without a caption
    _, h_bare = _pdf_page_inches(_figure(tmp_path, "bare", None)[1])
    assert h_pdf > h_bare + 0.05
    # same box in both formats: PNG pixels at savefig.dpi (150) against PDF inches, within 2 %
    # (the PDF's box is measured with the screen renderer's text extents, the PNG's at 150 dpi)
    assert abs(width / 150 - w_pdf) / w_pdf < 0.02
    assert abs(height / 150 - h_pdf) / h_pdf < 0.02


def test_the_layout_runs_once_and_each_format_draws_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # savefig with bbox_inches="tight" or a live layout engine lays the figure out and draws it
    # once more before its real draw; save_figure measures one box and freezes the layout
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    calls = {"layout": 0, "draw": 0}
    execute, draw = ConstrainedLayoutEngine.execute, Figure.draw

    def counted_execute(self: ConstrainedLayoutEngine, fig: Figure) -> None:
        calls["layout"] += 1
        execute(self, fig)

    def counted_draw(self: Figure, renderer: object) -> None:
        calls["draw"] += 1
        draw(self, renderer)

    monkeypatch.setattr(ConstrainedLayoutEngine, "execute", counted_execute)
    monkeypatch.setattr(Figure, "draw", counted_draw)
    _figure(tmp_path, "once", "caption")
    assert calls == {"layout": 1, "draw": 3}  # the layout pass, then the PNG's and the PDF's
