"""``make report``: results + references → scorecard, ``REPORT.md`` and ``REPORT.html``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from privrepro.report.references import ReferenceSet, load_references
from privrepro.report.render import (
    ReportPaths,
    build_document,
    referenced_figures,
    report_papers,
    write_report,
)
from privrepro.report.results import FigureResults, load_results
from privrepro.report.scorecard import build_scorecard, summary_counts

__all__ = ["ReportOutcome", "generate_report"]


@dataclass
class ReportOutcome:
    """What one report run produced: the scorecard, the per-paper counts and the files written."""

    scorecard: pd.DataFrame
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
        results: the results folder (``results/<paper>/<figure>.*``).
        plots: the plots folder (``plots/<paper>/<figure>.png``).
        out: the Markdown report; the HTML page is written next to it (same stem).
        references: the folder of reference files (default: the package's ``references/``).
        conf: ``conf/experiment``, to list figures that exist but have not been run (skipped
            when the folder is absent).
        html: also write the self-contained HTML page.

    Returns:
        The scorecard (also written to ``<results>/scorecard.csv``), the counts and the paths.

    Raises:
        privrepro.report.references.ReferenceError: a malformed reference file. (An unreadable
            results file does not stop the report: its figure says why.)
    """
    from privrepro.store.atomic import atomic_write_table

    refs = load_references(references)
    paths = ReportPaths(
        results=Path(results),
        plots=Path(plots),
        out=Path(out),
        scorecard=Path(results) / "scorecard.csv",
    )
    figures = load_results(paths.results, paths.plots, conf, extra=referenced_figures(refs))
    card = build_scorecard(figures, refs)
    written = [atomic_write_table(card, paths.scorecard, parquet=False)]
    blocks = build_document(figures, refs, card, paths)
    written += write_report(blocks, paths, html=html)
    counts = summary_counts(card, figures, refs, report_papers(figures, refs))
    return ReportOutcome(card, counts, figures, refs, written)
