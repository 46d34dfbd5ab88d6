"""``make report``: results + references → scorecards, ``REPORT.md`` and ``REPORT.html``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from privrepro.report.claims import build_claim_card
from privrepro.report.labels import PAPERS, referenced_figures, report_papers
from privrepro.report.reference_records import ReferenceSet
from privrepro.report.references import load_references
from privrepro.report.render import build_document, compute_derivations, write_report
from privrepro.report.report_inputs import ReportPaths
from privrepro.report.results import FigureResults, load_results
from privrepro.report.scorecard import build_scorecard, summary_counts

__all__ = ["ReportOutcome", "generate_report"]


@dataclass
class ReportOutcome:
    """What one report run produced: the scorecards, the per-paper counts and the files written."""

    scorecard: pd.DataFrame
    claims: pd.DataFrame
    counts: pd.DataFrame
    figures: dict[tuple[str, str], FigureResults]
    references: ReferenceSet
    written: list[Path]


def generate_report(
    results: str | Path = "results",
    plots: str | Path = "plots",
    out: str | Path = "REPORT.md",
    references: str | Path | None = None,
    conf: str | Path | None = "conf/experiment",
    html: bool = True,
) -> ReportOutcome:
    """Build the scorecard and the report.

    Args:
        out: the Markdown report; the HTML page (``html``) is written next to it.
        references: the reference files (default: the package's ``references/``).
        conf: ``conf/experiment``, to list figures that have not run (skipped when absent).

    Returns:
        The scorecards of values and claims (also ``<results>/scorecard.csv``, ``claims.csv``),
        the counts and the paths. A malformed reference file raises ``ReferenceError``.
    """
    from privrepro.store.atomic import atomic_write_table

    refs = load_references(references)
    paths = ReportPaths(
        results=Path(results),
        plots=Path(plots),
        out=Path(out),
        scorecard=Path(results) / "scorecard.csv",
        claims=Path(results) / "claims.csv",
    )
    # only the papers' folders: results/ also holds tools' output (results/gpu-check/)
    figures = load_results(
        paths.results, paths.plots, conf, extra=referenced_figures(refs), papers=PAPERS
    )
    card = build_scorecard(figures, refs)
    claims = build_claim_card(refs.claims, figures)
    derivations = compute_derivations(refs)
    card["recomputed"] = [
        derivations.results[i].value if i in derivations.results else float("nan")
        for i in card["id"]
    ]
    written = [atomic_write_table(card, paths.scorecard, parquet=False)]
    assert paths.claims is not None
    written.append(atomic_write_table(claims, paths.claims, parquet=False))
    blocks = build_document(figures, refs, card, paths, claims, derivations)
    written += write_report(blocks, paths, html=html)
    counts = summary_counts(card, figures, refs, report_papers(figures, refs), claims)
    return ReportOutcome(card, claims, counts, figures, refs, written)
