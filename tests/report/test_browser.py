"""REPORT.html and REPORT/*.html in a real headless Chromium (Debian's, driven by Playwright):
every image loads, every internal link resolves, no console error, the front page's tables fit; a screenshot of the summary is kept in
``results/browser/REPORT.summary.png`` for a person to look at. The checker is shown to catch
each kind of fault on a page built to have them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from page_check import check_page, find_chromium
from report_fakes import tiny_png

from components import missing
from privrepro.report.make import generate_report
from privrepro.runner.run import run_experiment

REPO = Path(__file__).resolve().parents[2]
ARTEFACT = REPO / "results" / "browser" / "REPORT.summary.png"


@pytest.fixture
def chromium() -> str:
    exe = find_chromium()
    if exe is None:
        missing("chromium", "no Chromium to open the report in")
    assert exe is not None
    return exe


def test_report_opens_in_chromium_with_every_image_and_link(
    chromium: str, store_overrides: list[str], tmp_path: Path
) -> None:
    for experiment in ("cl/fig2", "pb/fig1"):  # two real figures, tiny profile
        run_experiment(experiment, [*store_overrides, "profile=tiny"])
    pngs = sorted((tmp_path / "plots").rglob("*.png"))
    assert len(pngs) >= 2
    generate_report(
        tmp_path / "results",
        tmp_path / "plots",
        tmp_path / "REPORT.md",
        conf=REPO / "conf/experiment",
    )
    shot = tmp_path / "summary.png"
    # the front page: its summary table fits the 1280 px window whole
    front = check_page(
        tmp_path / "REPORT.html", screenshot=shot, chromium=chromium, tables_fit=True
    )
    assert front.ok, "\n".join(front.problems)
    assert front.internal_links > 0 and front.images == 0  # the plots are one click away
    images = 0
    for page in sorted((tmp_path / "REPORT").glob("*.html")):
        result = check_page(page, chromium=chromium)
        assert result.ok, f"{page.name}: " + "\n".join(result.problems)
        assert result.internal_links > 0  # and no element wider than the 1280 px window
        images += result.images
    assert images >= len(pngs)  # every plot of the run is on a page, decoded
    assert shot.stat().st_size > 10_000  # a rendered page, not a blank
    ARTEFACT.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, ARTEFACT)


BROKEN = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>broken</title></head><body>
<h1 id="top">broken page</h1>
<img alt="fine" src="data:image/png;base64,{png}">
<img alt="gone" src="missing.png">
<a href="#top">ok</a> <a href="#nowhere">bad anchor</a> <a href="absent.csv">bad file</a>
<a href="present.csv">ok file</a> <a href="https://example.org/">external</a>
<table><tr><td style="min-width:1500px">a table wider than the window</td></tr></table>
<div style="overflow-x:auto"><table><tr><td style="min-width:1500px">scrolls inside</td></tr>
</table></div>
<a href="present.html#top">ok on another page</a> <a href="present.html#gone">bad anchor there</a>
<script>console.error("boom"); throw new Error("uncaught");</script>
</body></html>"""


def test_checker_finds_each_kind_of_fault(chromium: str, tmp_path: Path) -> None:
    import base64

    png = base64.b64encode(tiny_png()).decode()
    (tmp_path / "present.csv").write_text("x\n1\n")
    (tmp_path / "present.html").write_text('<html><body><h1 id="top">there</h1></body></html>')
    page = tmp_path / "broken.html"
    page.write_text(BROKEN.format(png=png))
    result = check_page(page, chromium=chromium, tables_fit=True)
    text = "\n".join(result.problems)
    assert "'present.html#gone': no element with id 'gone' in present.html" in text
    assert "scrolls sideways: scrolls inside" in text
    assert "image not loaded: 'gone'" in text
    assert "'#nowhere'" in text and "'absent.csv'" in text
    assert "boom" in text and "uncaught" in text
    assert "missing.png" in text  # the failed request
    assert "the page is wider than the window" in text and "table a table wider" in text
    assert result.images == 1 and result.internal_links == 3
    assert result.external_links == ["https://example.org/"]
    assert not result.ok
