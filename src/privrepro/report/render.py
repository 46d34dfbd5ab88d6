"""The reproduction report: a short front page, ``REPORT.md`` / ``REPORT.html``, and the
details one click away in ``REPORT/`` (each page as Markdown and as a self-contained HTML page).

The front page: the summary (per paper: printed values reproduced / failed / not comparable,
derived values consistent / inconsistent / not comparable, claims reproduced / contradicted / not
comparable, errata; the claims contradicted and the values that fail) and the contents. A page
per paper: each figure — a banner first when it was computed on stand-in data — with its plot,
source, provenance (git sha, profile, data, device, the scored units' compute time), the choices
it assumed, the paper's claims about it with their verdicts and its values beside the published
ones; then the paper's errata, each with the evidence the harness computed (looked up in the
results or computed by a project function, never typed in). Then the rehearsal, the provenance
of every figure and the method, a page each.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from privrepro.report.closing_sections import method_section, provenance_section
from privrepro.report.derivation_entries import Computation, run_computation
from privrepro.report.document import (
    Block,
    Heading,
    Page,
    Para,
    anchors_of,
    relink,
    to_html,
    to_markdown,
)
from privrepro.report.errata_section import errata_section
from privrepro.report.figure_section import figure_section
from privrepro.report.labels import (
    PAPERS,
    figure_label,
    paper_citation,
    posix_path,
    referenced_figures,
    report_papers,
    section_anchor,
)
from privrepro.report.references import ReferenceSet
from privrepro.report.rehearsal_section import rehearsal_section
from privrepro.report.report_inputs import Derivations, ReportPaths
from privrepro.report.results import FigureResults
from privrepro.report.scorecard import summary_counts
from privrepro.report.summary_section import contents_section, summary_section

__all__ = ["build_document", "compute_derivations", "write_report"]


def _figure_order(
    figures: Mapping[tuple[str, str], FigureResults], paper: str
) -> list[FigureResults]:
    def key(fr: FigureResults) -> tuple[int, str, str]:
        label = figure_label(fr.figure)
        group = 0 if label.startswith("Fig.") else 1 if label.startswith("Table") else 2
        digits = "".join(ch for ch in fr.figure if ch.isdigit())
        return group, digits.zfill(6), fr.figure

    return sorted((f for (p, _), f in figures.items() if p == paper), key=key)


def compute_derivations(refs: ReferenceSet) -> Derivations:
    """Call the project function of every derived value and computed erratum evidence.

    Keys: the value's id, and ``<erratum id>#<evidence index>``.
    """
    out = Derivations()
    for v in refs.values:
        if v.derivation is not None and v.derivation.function:
            out.results[v.id] = run_computation(v.derivation)
    for e in refs.errata:
        for i, item in enumerate(e.evidence):
            if isinstance(item, Computation) and item.function:
                out.results[f"{e.id}#{i}"] = run_computation(item)
    return out


def build_document(
    figures: Mapping[tuple[str, str], FigureResults],
    refs: ReferenceSet,
    card: pd.DataFrame,
    paths: ReportPaths,
    claims: pd.DataFrame | None = None,
    derivations: Derivations | None = None,
) -> list[Page]:
    """The report as pages of blocks (see :mod:`privrepro.report.document`): the front page
    (summary, contradicted claims, failing values, contents), one page per paper (its figures
    and errata), the rehearsal when there is one, the provenance and the method.

    Args:
        figures: every known figure (run or not); reference values of unknown figures are added
            as not run.
        refs: reference values, claims and errata.
        card: the scorecard (:func:`privrepro.report.scorecard.build_scorecard`).
        paths: where the results, plots and report live.
        claims: the claims scorecard (:func:`privrepro.report.claims.build_claim_card`).
        derivations: derived values recomputed (:func:`compute_derivations`).
    """
    from privrepro.report.claims import CLAIM_COLUMNS

    claims = claims if claims is not None else pd.DataFrame(columns=CLAIM_COLUMNS)
    derivations = derivations or Derivations()
    refs_by_id = {v.id: v for v in refs.values}
    figures = dict(figures)
    for paper, figure in referenced_figures(refs):
        figures.setdefault((paper, figure), FigureResults(paper, figure))
    papers = report_papers(figures, refs)
    by_paper = {p: _figure_order(figures, p) for p in papers}
    counts = summary_counts(card, figures, refs, papers, claims)

    title = "privrepro — reproduction report"
    front: list[Block] = [
        Heading(1, title),
        Para(
            "Every figure and table of four privacy papers, reproduced by the harness and held "
            "against the numbers and claims the papers (or, for ip, the authors' notebooks) "
            "report, with the errors found on the way. Generated by `make report` "
            "(`uv run python -m privrepro.report`) from "
            f"`{posix_path(paths.results)}/` and `{posix_path(paths.plots)}/`. This page is the "
            "summary; each paper, the provenance and the method have a page of their own."
        ),
    ]
    front += summary_section(counts, card, claims, figures, paths)
    rehearsal = rehearsal_section(paths.results, paths.plots)
    front += contents_section(papers, by_paper, refs, rehearsal=bool(rehearsal))
    pages = [Page("", title, front)]
    nav = Para(
        "[← Summary](#summary) · "
        + " · ".join(f"[{p}](#{section_anchor(p)})" for p in papers)
        + " · [Provenance](#provenance) · [Method](#method)"
    )
    for paper in papers:
        paper_title = PAPERS.get(paper, (paper, ""))[0]
        blocks: list[Block] = [nav, Heading(2, f"{paper} — {paper_title}", section_anchor(paper))]
        row = counts[counts["paper"] == paper].iloc[0]
        intro = (
            f"{row['figures run']} of {row['figures']} figures run. Printed values: "
            f"{row['printed reproduced']} reproduced, {row['printed failed']} failed, "
            f"{row['printed not comparable']} not comparable. Derived values: "
            f"{row['derived consistent']} consistent, {row['derived inconsistent']} inconsistent, "
            f"{row['derived not comparable']} not comparable. Claims: {row['claims reproduced']} "
            f"reproduced, {row['claims contradicted']} contradicted, "
            f"{row['claims not comparable']} not comparable. {row['not run']} not run; "
            f"{row['errata']} errata."
        )
        citation = paper_citation(paper, refs)
        if citation:
            intro = f"*{citation}.* " + intro
        blocks.append(Para(intro))
        if not by_paper[paper]:
            blocks.append(Para("*No figure of this paper has a configuration or results yet.*"))
        paper_errata = [e for e in refs.errata if e.paper == paper]
        for fr in by_paper[paper]:
            sub = card[(card["paper"] == paper) & (card["figure"] == fr.figure)]
            csub = (
                claims[(claims["paper"] == paper) & (claims["figure"] == fr.figure)]
                if len(claims)
                else claims
            )
            errs = [e for e in paper_errata if e.figure == fr.figure]
            blocks += figure_section(fr, sub, csub, errs, paths, derivations, refs_by_id)
        blocks += errata_section(paper, paper_errata, figures, derivations)
        pages.append(Page(paper, f"{title}: {paper} — {paper_title}", blocks))
    if rehearsal:
        pages.append(Page("rehearsal", f"{title}: rehearsal", [nav, *rehearsal]))
    provenance = provenance_section([f for p in papers for f in by_paper[p]])
    pages.append(Page("provenance", f"{title}: provenance", [nav, *provenance]))
    pages.append(Page("method", f"{title}: method", [nav, *method_section(refs)]))
    return pages


def write_report(pages: list[Page], paths: ReportPaths, html: bool = True) -> list[Path]:
    """Write the front page (``REPORT.md``, ``REPORT.html``) and the others in ``REPORT/``
    atomically, each link pointed at the page that holds its anchor; returns the paths written.
    Pages of an earlier report (of the kinds written) that this one no longer has are
    removed."""
    from privrepro.store.atomic import atomic_write_text

    home = {a: page.name for page in pages for a in anchors_of(page.blocks)}
    written: list[Path] = []
    for suffix in (".md", ".html") if html else (".md",):
        for page in pages:
            target = paths.page(page.name, suffix)
            base = target.resolve().parent

            def href(
                anchor: str, here: str = page.name, base: Path = base, suffix: str = suffix
            ) -> str:
                there = home.get(anchor, here)
                if there == here:
                    return f"#{anchor}"
                rel = os.path.relpath(paths.page(there, suffix).resolve(), base)
                return f"{Path(rel).as_posix()}#{anchor}"

            blocks = relink(page.blocks, href)
            text = (
                to_markdown(blocks, base) if suffix == ".md" else to_html(blocks, base, page.title)
            )
            written.append(atomic_write_text(target, text))
    kinds = {p.suffix for p in written}
    if paths.pages.is_dir():
        for old in paths.pages.iterdir():
            if old.suffix in kinds and old not in written:
                old.unlink()
    return written
