"""The report end to end on tiny fake results: summary, figures, verdicts, errata, provenance."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from report_fakes import CL_FIG2, WriteFigure, WriteRefs, cl_fig2_summary

from privrepro.report.__main__ import main
from privrepro.report.document import inline_html
from privrepro.report.labels import figure_label, fmt_duration, fmt_num, significant_digits
from privrepro.report.make import generate_report

PB_FAIL = """\
paper: pb
values:
  - id: pb-fig2-eps
    figure: fig2
    quantity: boosted ε at ρ=0.9
    value: 1.0
    source: {where: "Fig. 2(c)", kind: printed}
    match: {table: main, column: eps, where: {rho: 0.9}}
    tolerance: {abs: 0.05, reason: "printed to one decimal"}
errata:
  - id: pb-formula-understates
    title: "The paper's formula understates the loss"
    detail: "The exact hockey-stick divergence exceeds the formula's δ."
    figure: fig2
    used: "the exact profile; the paper's formula is drawn dashed"
    evidence:
      - {figure: fig2, column: exact_delta, where: {rho: 0.9}, label: "exact δ at ρ=0.9"}
      - {figure: fig2, column: exact_delta}
      - {figure: fig9, metric: m}
"""


@pytest.fixture
def tree(tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs) -> Path:
    """cl Fig. 2 (passes), pb Fig. 2 (fails: 1.3 vs 1.0 ± 0.05), an ip config never run."""
    write_figure(
        "cl",
        "fig2",
        summary=cl_fig2_summary(12),
        meta={
            "assumptions": {"params.k_max": {"value": 100, "why": "the k-range is not stated"}},
            "git_sha": "feedc0ffee0123456789",
            "git_dirty": True,
            "wall_time_s": 125.0,
            "device": "cuda",
            "device_name": "NVIDIA H200",
        },
    )
    write_figure(
        "pb",
        "fig2",
        pd.DataFrame({"rho": [0.9, 0.5], "eps": [1.3, 0.7], "exact_delta": [2.5e-5, 1e-6]}),
        profile="paper",
    )
    conf = tmp_path / "conf" / "experiment" / "ip"
    conf.mkdir(parents=True)
    (conf / "fig3.yaml").write_text("# @package _global_\n# ip Fig. 3 — accuracy against ε\n")
    write_refs("cl", CL_FIG2)
    write_refs("pb", PB_FAIL)
    return tmp_path


def run(tree: Path, **kw: object) -> tuple[str, str, pd.DataFrame]:
    out = generate_report(
        tree / "results",
        tree / "plots",
        tree / "REPORT.md",
        tree / "references",
        tree / "conf" / "experiment",
        **kw,
    )  # type: ignore[arg-type]
    return pages(tree, ".md"), pages(tree, ".html"), out.scorecard


def pages(tree: Path, suffix: str) -> str:
    """The front page, then the detail pages in ``REPORT/`` (by name), one after the other."""
    front = tree / f"REPORT{suffix}"
    if not front.exists():
        return ""
    rest = sorted((tree / "REPORT").glob(f"*{suffix}"))
    return "\n".join(p.read_text() for p in [front, *rest])


def section(md: str, anchor: str) -> str:
    """The Markdown from ``<a id="anchor">`` to the next anchor of the same or a higher level."""
    start = md.index(f'<a id="{anchor}"></a>')
    nxt = re.search(r'<a id="[^"]+"></a>\n\n#{1,3} ', md[start + 10 :])
    return md[start : start + 10 + nxt.start()] if nxt else md[start:]


def test_summary_counts_and_scorecard_file(tree: Path) -> None:
    md, _, card = run(tree)
    summary = section(md, "summary")
    # columns: printed reproduced / failed / n.c., derived consistent / inconsistent / n.c.,
    # claims reproduced / contradicted / n.c., not run, errata
    assert (
        "| [cl](REPORT/cl.md#cl) | 1 / 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 |" in summary
    )
    assert (
        "| [pb](REPORT/pb.md#pb) | 1 / 1 | 0 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 |" in summary
    )
    assert (
        "| [ip](REPORT/ip.md#ip) | 0 / 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |" in summary
    )
    assert "| **all** | 2 / 3 | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 2 |" in summary
    assert "**Reproduced: 1 of 2 printed values and 0 of 0 claims**" in summary
    assert (
        "- [pb Fig. 2](REPORT/pb.md#pb-fig2): boosted ε at ρ=0.9 — reference 1, reproduced 1.3 (`pb-fig2-eps`)"
    ) in summary
    on_disk = pd.read_csv(tree / "results" / "scorecard.csv").set_index("id")
    assert on_disk.loc["pb-fig2-eps", "verdict"] == "fail"
    assert on_disk.loc["pb-fig2-eps", "reproduced"] == pytest.approx(1.3)
    assert list(on_disk.index) == list(card["id"])


def test_figure_section_has_plot_provenance_assumptions_and_values(tree: Path) -> None:
    md, _, _ = run(tree)
    cl = section(md, "cl-fig2")
    assert "![cl Fig. 2](../plots/cl/fig2.png)" in cl  # relative to REPORT/cl.md: on GitHub too
    assert "| `smoke` | 0 | `feedc0ffee` (dirty) | — | cuda (NVIDIA H200) | 2 min 05 s |" in cl
    assert "`params.k_max` = `100` — the k-range is not stated" in cl
    assert "*In the paper:* Sec. 1; `eq. (1)`" in cl
    assert "| 12 | 0 | ±0 — integer from the closed form | ✅ reproduced |" in cl
    pb = section(md, "pb-fig2")
    assert (
        "| 1<br>*Fig. 2(c) (printed)* | 1.3 | +0.3 (+30%) | ±0.05 — printed to one decimal "
        "| ❌ failed: off by 0.3, more than the allowed 0.05 |"
    ) in pb


def test_not_run_figure_says_how_to_run_it(tree: Path, write_refs: WriteRefs) -> None:
    write_refs(
        "pac",
        """\
    paper: pac
    errata:
      - {id: pac-ex1-thm2, title: "Example 1's Theorem 2 values", detail: d, figure: ex1}
    """,
    )
    md, _, _ = run(tree)
    pac = section(md, "pac-ex1")  # an erratum's figure gets a section, run or not
    assert "### Example 1 — ex1" in pac and "**Not run.** Run `make fig-pac-ex1`" in pac
    assert "[Example 1's Theorem 2 values](#erratum-pac-ex1-thm2)" in pac
    ip = section(md, "ip-fig3")
    assert "### Fig. 3 — accuracy against ε" in ip  # the config's "ip Fig. 3 —" is not repeated
    assert "**Not run.** Run `make fig-ip-3`" in ip
    assert "*(not run)*" in section(md, "contents")


def test_errata_evidence_is_looked_up_in_the_results(tree: Path) -> None:
    md, _, _ = run(tree)
    errata = section(md, "pb-errata")
    assert "#### ⚠️ The paper's formula understates the loss" in errata
    assert "*The harness uses:* the exact profile; the paper's formula is drawn dashed" in errata
    assert (
        "> *Evidence:* exact δ at ρ=0.9 from Fig. 2 at rho=0.9 = **2.5e-05** (profile "
        "`paper`)." in errata
    )
    # several rows: a table with the column that varies
    assert "> | rho | eps | exact_delta |" in errata and "> | 0.5 | 0.7 | 1e-06 |" in errata
    assert "> *Evidence:* `m` from Fig. 9: not run yet (`make fig-pb-9`)." in errata
    # a changed result changes the evidence
    path = tree / "results" / "pb" / "fig2.csv"
    df = pd.read_csv(path)
    df.loc[df["rho"] == 0.9, "exact_delta"] = 7.5e-5
    df.to_csv(path, index=False)
    md, _, _ = run(tree)
    assert "at rho=0.9 = **7.5e-05**" in section(md, "pb-errata")


class _TagBalance(HTMLParser):
    """Checks that every opened element is closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag not in {"img", "br", "meta"}:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()
        else:
            self.errors.append(tag)


def test_html_is_self_contained(tree: Path) -> None:
    _, html, _ = run(tree)
    balance = _TagBalance()
    balance.feed(html)
    assert balance.errors == [] and balance.stack == []
    assert html.count('src="data:image/png;base64,iVBORw0KGgo') == 2  # the two PNGs, inlined
    assert 'src="plots/' not in html
    assert '<h3 id="cl-fig2">' in html and 'href="#erratum-pb-formula-understates"' in html
    assert "<td" in html and "❌ failed" in html


def test_report_without_results_or_references(tmp_path: Path) -> None:
    md, html, card = run(tmp_path)
    assert card.empty
    assert "| **all** | 0 / 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |" in md
    assert "No figure has results yet: run `make figures`." in md
    assert "(read: none yet)" in md
    assert html.startswith("<!DOCTYPE html>")


def test_reference_to_a_figure_without_results_is_not_run(tree: Path) -> None:
    for p in (tree / "results" / "cl").iterdir():
        p.unlink()
    md, _, card = run(tree, html=False)
    assert card.set_index("id").loc["cl-fig2-largest-k-dropped", "code"] == "not-run"
    assert "| not run: not run: `make fig-cl-2` |" not in md
    assert "not run: `make fig-cl-2`" in section(md, "cl-fig2")
    assert not (tree / "REPORT.html").exists()


def test_cli_prints_counts_and_paths_and_fails_clearly(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        "--results",
        str(tree / "results"),
        "--plots",
        str(tree / "plots"),
        "--out",
        str(tree / "REPORT.md"),
        "--references",
        str(tree / "references"),
        "--conf",
        str(tree / "conf" / "experiment"),
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert re.search(r"^\s+cl\s+1\s+1\s+0\s+0\s+0", out, re.M)
    assert f"wrote {tree / 'REPORT.md'}" in out and "scorecard.csv" in out
    assert main([*args, "--strict"]) == 1  # pb's value fails
    (tree / "references" / "pb.yaml").write_text(PB_FAIL.replace("kind: printed", "kind: seen"))
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "error: references/pb.yaml: values[0] (id pb-fig2-eps): source.kind: = 'seen'" in err


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (12, "12"),
        (12.0, "12"),
        (0.9742526, "0.97425"),
        (1e-7, "1e-07"),
        (float("nan"), "—"),
        (None, "—"),
        (123456.7, "1.2346e+05"),
        (float("inf"), "∞"),
    ],
)
def test_fmt_num(x: object, text: str) -> None:
    assert fmt_num(x) == text


def test_small_formatters() -> None:
    assert [fmt_duration(s) for s in (0.42, 125, 3725, None)] == [
        "0.42 s",
        "2 min 05 s",
        "1 h 02 min",
        "—",
    ]
    assert [figure_label(f) for f in ("fig2", "tA3", "t2", "ex1", "table", "summary")] == [
        "Fig. 2",
        "Table A3",
        "Table 2",
        "Example 1",
        "table",
        "summary",
    ]
    assert [significant_digits(x) for x in (0.974253, 12, 1e-7, 1.25e-7)] == [6, 2, 1, 3]
    assert inline_html("`a<b>` **x** *y* [z](#q) <i>") == (
        '<code>a&lt;b&gt;</code> <strong>x</strong> <em>y</em> <a href="#q">z</a> &lt;i&gt;'
    )


def test_unreadable_results_do_not_stop_the_report(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "results" / "pb" / "fig2.meta.json").write_text("{not json")
    md, _, card = run(tree)
    row = card.set_index("id").loc["pb-fig2-eps"]
    assert (row["verdict"], row["code"]) == ("not comparable", "unreadable")
    assert "fig2.meta.json: not valid JSON" in row["why"]
    assert "**Results unreadable:**" in section(md, "pb-fig2")
    assert (
        main(
            [
                "--results",
                str(tree / "results"),
                "--plots",
                str(tree / "plots"),
                "--out",
                str(tree / "REPORT.md"),
                "--references",
                str(tree / "references"),
                "--no-html",
            ]
        )
        == 0
    )
    assert "warning: " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("paper", "figure", "title", "expected"),
    [
        ("pac", "ex2", "pac Example 2 — local publishing", "local publishing"),
        ("ip", "fig4_notebook", "ip Fig. 4 — accuracy vs ε", "accuracy vs ε"),
        ("ip", "fig6", "ip Fig. 6 (Table 6) — accuracy", "accuracy"),
        ("pac", "curves_dimension", "pac — PAC vs local DP", "PAC vs local DP"),
        ("pac", "curves_success", "pac Theorem 1 — bound", "Theorem 1 — bound"),
        ("cl", "fig3_cosine", "cl Fig. 3/A2, Table A3 — cosine", "Fig. 3/A2, Table A3 — cosine"),
        ("pb", "fig6", "T-fold composition", "T-fold composition"),
    ],
)
def test_section_titles_do_not_repeat_the_heading(
    paper: str, figure: str, title: str, expected: str
) -> None:
    from privrepro.report.labels import section_title
    from privrepro.report.results import FigureResults

    fr = FigureResults(paper, figure, meta={"title": title})
    assert section_title(fr) == expected


def test_the_front_page_is_the_summary_and_every_link_reaches_its_anchor(tree: Path) -> None:
    run(tree)
    front = (tree / "REPORT.md").read_text()
    assert "## Summary" in front and "## Contents" in front
    assert "### Fig." not in front and "## Provenance" not in front  # details: their own pages
    assert {p.name for p in (tree / "REPORT").iterdir()} >= {
        f"{name}{suffix}"
        for name in ("cl", "pb", "ip", "provenance", "method")
        for suffix in (".md", ".html")
    }
    # every [text](file#anchor) of every page lands on a page holding <a id="anchor">
    for suffix, anchor_of in ((".md", '<a id="{}"></a>'), (".html", 'id="{}"')):
        for page in [tree / f"REPORT{suffix}", *(tree / "REPORT").glob(f"*{suffix}")]:
            text = page.read_text()
            links = re.findall(r"\]\(([^)\s]*#[^)\s]+)\)", text) + re.findall(
                r'href="([^"]*#[^"]+)"', text
            )
            for link in links:
                target, _, anchor = link.partition("#")
                held = (page.parent / target).read_text() if target else text
                assert anchor_of.format(anchor) in held, f"{page.name}: {link}"
    assert "[pb Fig. 2](REPORT/pb.md#pb-fig2)" in front
    pb = (tree / "REPORT" / "pb.md").read_text()
    assert "[← Summary](../REPORT.md#summary)" in pb


def test_provenance_shows_the_scored_units_not_the_last_sweep_job(
    tmp_path: Path, write_figure: WriteFigure
) -> None:
    """The last run was a sweep job (wall time 999 s, other units); the score is made on the
    canonical units a and b, whose own compute times (10 s + 20 s) the row shows."""
    units = [
        {"unit_id": "a", "wall_time_s": 10.0, "finished": "2026-01-02T00:00:00+00:00"},
        {"unit_id": "b", "wall_time_s": 20.0, "finished": "2026-01-03T00:00:00+00:00"},
        {"unit_id": "s", "wall_time_s": 999.0, "finished": "2026-01-09T00:00:00+00:00"},
    ]
    for u in units:
        u["git_sha"] = "0123456789abcdef"
    table = pd.DataFrame({"unit_id": ["a", "b", "s"], "x": [1.0, 2.0, 3.0], "y": [1.0, 1.0, 1.0]})
    write_figure(
        "pb",
        "fig2",
        table,
        meta={
            "wall_time_s": 999.0,
            "units": units,
            "canonical": {"smoke": {"profile": "smoke", "seeds": [0], "unit_ids": ["a", "b"]}},
        },
    )
    md, _, _ = run(tmp_path)
    row = "| `smoke` | 0 | `0123456789` | — | cpu | 30 s | 2026-01-03T00:00:00+00:00 | 2 |"
    assert row in section(md, "pb-fig2")
    assert "16 min" not in section(md, "provenance")
