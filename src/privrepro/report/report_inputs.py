"""What the report's sections read besides the tables: where the report reads and writes
(:class:`ReportPaths`) and the derived values its project functions computed (:class:`Derivations`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from privrepro.report.derivation_entries import ComputationResult

__all__ = ["Derivations", "ReportPaths"]


@dataclass(frozen=True)
class ReportPaths:
    """Where the report reads and writes; links in the Markdown are relative to ``out``'s folder."""

    results: Path
    plots: Path
    out: Path
    scorecard: Path
    claims: Path | None = None

    @property
    def html(self) -> Path:
        """The HTML page next to the Markdown."""
        return self.out.with_suffix(".html")

    @property
    def pages(self) -> Path:
        """The folder of the detail pages, beside the front page: ``REPORT/`` for ``REPORT.md``."""
        return self.out.parent / self.out.stem

    def page(self, name: str, suffix: str) -> Path:
        """The file of page ``name`` (``""``: the front page) with ``suffix``."""
        return self.out.with_suffix(suffix) if not name else self.pages / f"{name}{suffix}"


@dataclass
class Derivations:
    """Derived values recomputed by their project functions, and errata evidence computed."""

    results: dict[str, ComputationResult] = field(default_factory=dict)
