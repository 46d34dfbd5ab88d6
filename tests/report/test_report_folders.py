"""The report reads only the papers' folders of ``results/``: a tool's folder there
(``results/gpu-check/`` of ``make gpu-check``) is not a fifth paper."""

from __future__ import annotations

from pathlib import Path

from report_fakes import WriteFigure

from privrepro.report.labels import PAPERS
from privrepro.report.make import generate_report
from privrepro.report.results import load_results


def test_a_tools_folder_in_results_is_not_a_paper(
    tmp_path: Path, write_figure: WriteFigure
) -> None:
    write_figure("pb", "fig2")
    write_figure("gpu-check", "rehearsal")  # a table in the form a figure's has: still not one
    assert ("gpu-check", "rehearsal") in load_results(tmp_path / "results", tmp_path / "plots")
    out = generate_report(
        tmp_path / "results", tmp_path / "plots", tmp_path / "REPORT.md", conf=None, html=False
    )
    assert ("pb", "fig2") in out.figures
    assert {paper for paper, _ in out.figures} <= set(PAPERS)
    assert set(out.counts["paper"]) - {"all"} <= set(PAPERS)
    assert "gpu-check" not in (tmp_path / "REPORT.md").read_text()
