"""How the report names and writes things: the papers, figures, sections and anchors, numbers
and durations, provenance fields and verdict marks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from privrepro.data.provenance import is_stand_in_label
from privrepro.report.reference_records import ReferenceSet
from privrepro.report.results import FigureResults
from privrepro.report.row_selection import choose_profile, data_labels, profiles_of

__all__ = [
    "BOOKKEEPING",
    "MAX_ROWS",
    "PAPERS",
    "VERDICT_MARK",
    "figure_label",
    "figure_link",
    "fmt_diff",
    "fmt_duration",
    "fmt_num",
    "paper_citation",
    "posix_path",
    "referenced_figures",
    "report_papers",
    "section_anchor",
    "section_title",
    "sha_text",
    "significant_digits",
    "stand_in_labels",
]


#: The four papers, in the order the report shows them: title and citation (DESIGN.md).
PAPERS: dict[str, tuple[str, str]] = {
    "ip": (
        "Inference Privacy: Properties and Mechanisms",
        "Tian & Tandon, arXiv 2411.18746 (2024)",
    ),
    "pb": (
        "Meeting Utility Constraints in Differential Privacy: A Privacy-Boosting Approach",
        "Jiang, Zhang, Lu, Du, Sharma & Yan, arXiv 2412.10612, IEEE S&P 2025",
    ),
    "cl": (
        "Differential Privacy in Continual Learning: Which Labels to Update?",
        "Tobaben, Alrawajfeh, Klasson, Heikkilä, Solin & Honkela, arXiv 2411.04680",
    ),
    "pac": (
        "PAC Security: Automatic Privacy Measurement and Control of Data Processing",
        "Xiao & Devadas, arXiv 2210.03458 v1 (2022; later versions: PAC Privacy, CRYPTO 2023)",
    ),
}
BOOKKEEPING = {"paper", "figure", "profile", "seed", "unit_id", "metric", "data"}
MAX_ROWS = 12
VERDICT_MARK = {
    "reproduced": "✅ reproduced",
    "failed": "❌ failed",
    "consistent": "✅ consistent",
    "inconsistent": "❌ inconsistent",
    "contradicted": "❌ contradicted",
    "not comparable": "⚪ not comparable",
}


def fmt_num(x: Any, sig: int = 5) -> str:
    """A number for a reader: integers whole, others to ``sig`` significant digits, ``—`` if none."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return str(x)
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v):
        return "—"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.{sig}g}"


def significant_digits(x: float) -> int:
    """How many significant digits ``x`` is written with (``0.974253`` → 6, ``12`` → 2)."""
    mantissa = repr(float(x)).lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    if repr(float(x)).endswith(".0"):
        mantissa = str(abs(int(x))).rstrip("0") or "0"
    return max(1, len(mantissa))


def fmt_diff(diff: float, rel: float) -> str:
    if diff is None or math.isnan(diff):
        return "—"
    if diff == 0:
        return "0"
    out = f"{diff:+.2g}"
    if rel is not None and not math.isnan(rel):
        out += f" ({100 * rel:+.2g}%)"
    return out


def fmt_duration(seconds: Any) -> str:
    """``12.3 s``, ``4 min 03 s``, ``1 h 02 min``; ``—`` when unknown."""
    try:
        s = float(seconds)
    except (TypeError, ValueError):
        return "—"
    if math.isnan(s):
        return "—"
    if s < 60:
        return f"{s:.3g} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(s % 60):02d} s"
    return f"{int(s // 3600)} h {int(s % 3600 // 60):02d} min"


def figure_label(figure: str) -> str:
    """``fig2`` → ``Fig. 2``, ``tA3`` → ``Table A3``, ``ex1`` → ``Example 1``; else the name."""
    for prefix, word in (("fig", "Fig."), ("ex", "Example"), ("t", "Table")):
        rest = figure[len(prefix) :]
        if (
            figure.startswith(prefix)
            and rest
            and rest[0].isalnum()
            and (prefix != "t" or rest[0].isupper() or rest[0].isdigit())
        ):
            return f"{word} {rest}"
    return figure


def sha_text(meta: Mapping[str, Any]) -> str:
    sha = str(meta.get("git_sha") or "")
    if not sha:
        return "—"
    return f"`{sha[:10]}`" + (" (dirty)" if meta.get("git_dirty") else "")


def section_anchor(*parts: str) -> str:
    return "-".join(p.replace("_", "-").replace(".", "-").lower() for p in parts)


def _paper_order(papers: set[str]) -> list[str]:
    known = [p for p in PAPERS if p in papers]
    return known + sorted(papers - set(PAPERS))


def posix_path(p: Path) -> str:
    return Path(p).as_posix()


def referenced_figures(refs: ReferenceSet) -> list[tuple[str, str]]:
    """The figures that reference values, claims and errata name (each gets a section)."""
    named = [(v.paper, v.figure) for v in refs.values]
    named += [(c.paper, c.figure) for c in refs.claims]
    named += [(e.paper, e.figure) for e in refs.errata if e.figure]
    return list(dict.fromkeys(named))


def report_papers(
    figures: Mapping[tuple[str, str], FigureResults], refs: ReferenceSet
) -> list[str]:
    """The papers the report shows, in order: the four papers first, then any other."""
    return _paper_order({p for p, _ in figures} | set(refs.papers()) | set(PAPERS))


def section_title(fr: FigureResults) -> str:
    """The figure's title without a leading repeat of its paper and label.

    ``pac Example 2 — local publishing: …`` under the heading "Example 2" becomes
    ``local publishing: …``; ``ip Fig. 4 — accuracy …`` under "Fig. 4_notebook" becomes
    ``accuracy …`` (so does ``ip Fig. 6 (Table 6) — …`` under "Fig. 6"); a bare leading paper name goes (``pac — PAC …`` → ``PAC …``), while a title
    naming more figures than the heading keeps them (``cl Fig. 3/A2, Table A3 — …`` →
    ``Fig. 3/A2, Table A3 — …``).
    """
    title = fr.title
    label = figure_label(fr.figure)
    base = figure_label(fr.figure.split("_")[0])
    own = f"{re.escape(label)}|{re.escape(fr.figure)}"
    pattern = rf"^{re.escape(fr.paper)}\b[^—]*?(?:(?:{own})[^—]*|{re.escape(base)}\s*)—\s*"
    stripped = re.sub(pattern, "", title, count=1)
    if stripped == title:
        stripped = re.sub(rf"^{re.escape(fr.paper)}\s+(?:—\s*)?", "", title, count=1)
    return stripped or title


def paper_citation(paper: str, refs: ReferenceSet) -> str:
    return refs.citations.get(paper) or PAPERS.get(paper, ("", ""))[1]


def stand_in_labels(fr: FigureResults) -> list[str]:
    """The stand-in data labels of a figure's results (most faithful profile)."""
    if not fr.ran or fr.table is None or "data" not in fr.table.columns:
        return []
    profile, _ = choose_profile(profiles_of(fr), None)
    labels = data_labels(fr, profile) or []
    return [d for d in labels if is_stand_in_label(d)]


def figure_link(paper: str, figure: str) -> str:
    return f"[{paper} {figure_label(figure)}](#{section_anchor(paper, figure)})"
