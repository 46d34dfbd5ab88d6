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

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.data.provenance import is_stand_in_label
from privrepro.report.claims import claim_readings
from privrepro.report.derivation_entries import Computation, ComputationResult, run_computation
from privrepro.report.document import (
    Block,
    Bullets,
    Callout,
    Details,
    Heading,
    Image,
    Page,
    Para,
    Table,
    anchors_of,
    relink,
    to_html,
    to_markdown,
)
from privrepro.report.references import Erratum, Lookup, ReferenceSet
from privrepro.report.rehearsal_section import rehearsal_section
from privrepro.report.results import FigureResults, make_target
from privrepro.report.row_selection import choose_profile, data_labels, profiles_of, where_text
from privrepro.report.scorecard import select, summary_counts

__all__ = [
    "PAPERS",
    "ReportPaths",
    "build_document",
    "figure_label",
    "fmt_duration",
    "fmt_num",
    "referenced_figures",
    "report_papers",
    "section_title",
    "write_report",
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
_BOOKKEEPING = {"paper", "figure", "profile", "seed", "unit_id", "metric", "data"}
_MAX_ROWS = 12
_VERDICT_MARK = {
    "reproduced": "✅ reproduced",
    "failed": "❌ failed",
    "consistent": "✅ consistent",
    "inconsistent": "❌ inconsistent",
    "contradicted": "❌ contradicted",
    "not comparable": "⚪ not comparable",
}


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


# --------------------------------------------------------------------------- formatting


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


def _fmt_diff(diff: float, rel: float) -> str:
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


def _sha(meta: Mapping[str, Any]) -> str:
    sha = str(meta.get("git_sha") or "")
    if not sha:
        return "—"
    return f"`{sha[:10]}`" + (" (dirty)" if meta.get("git_dirty") else "")


def _anchor(*parts: str) -> str:
    return "-".join(p.replace("_", "-").replace(".", "-").lower() for p in parts)


def _paper_order(papers: set[str]) -> list[str]:
    known = [p for p in PAPERS if p in papers]
    return known + sorted(papers - set(PAPERS))


def _posix(p: Path) -> str:
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


def _citation(paper: str, refs: ReferenceSet) -> str:
    return refs.citations.get(paper) or PAPERS.get(paper, ("", ""))[1]


def _stand_ins(fr: FigureResults) -> list[str]:
    """The stand-in data labels of a figure's results (most faithful profile)."""
    if not fr.ran or fr.table is None or "data" not in fr.table.columns:
        return []
    profile, _ = choose_profile(profiles_of(fr), None)
    labels = data_labels(fr, profile) or []
    return [d for d in labels if is_stand_in_label(d)]


# --------------------------------------------------------------------------- summary


def _count_row(r: Mapping[Any, Any]) -> list[str]:
    name = r["paper"]
    label = "**all**" if name == "all" else f"[{name}](#{_anchor(name)})"
    return [
        label,
        f"{r['figures run']} / {r['figures']}",
        str(r["printed reproduced"]),
        str(r["printed failed"]),
        str(r["printed not comparable"]),
        str(r["derived consistent"]),
        str(r["derived inconsistent"]),
        str(r["derived not comparable"]),
        str(r["claims reproduced"]),
        str(r["claims contradicted"]),
        str(r["claims not comparable"]),
        str(r["not run"]),
        str(r["errata"]),
    ]


#: short headers, so that the table fits a 1280 px window (the legend under it says more)
_COUNT_HEADER = [
    "paper",
    "figures run",
    "printed ✅",
    "printed ❌",
    "printed ⚪",
    "derived ✅",
    "derived ❌",
    "derived ⚪",
    "claims ✅",
    "claims ❌",
    "claims ⚪",
    "not run",
    "errata",
]


def _fig_link(paper: str, figure: str) -> str:
    return f"[{paper} {figure_label(figure)}](#{_anchor(paper, figure)})"


def _deciding(r: Mapping[Any, Any]) -> list[dict[str, Any]]:
    return [x for x in claim_readings(r) if x.get("decides")]


def _contradicted_items(claims: pd.DataFrame) -> list[str | tuple[str, list[str]]]:
    """One item per claim: the claim and who decided it; under it the reading and its numbers
    (the full predicate trace stays in the claims CSV)."""
    items: list[str | tuple[str, list[str]]] = []
    for r in claims.to_dict("records"):
        by = f" — decided by {r['decided_by']}" if r["decided_by"] else ""
        sub = []
        if r.get("interpretation"):
            sub.append(f"*read as:* {r['interpretation']}")
        failing = [x for x in _deciding(r) if x["outcome"] == "fails"] or _deciding(r)
        sub += [f"{x['computation']}: {x['numbers']}" for x in failing]
        if r.get("numbers"):
            sub.append(f"*numbers:* {r['numbers']}")
        items.append((f"{_fig_link(r['paper'], r['figure'])}: {r['claim']}{by} (`{r['id']}`)", sub))
    return items


def _summary_section(
    counts: pd.DataFrame,
    card: pd.DataFrame,
    claims: pd.DataFrame,
    figures: Mapping[tuple[str, str], FigureResults],
    paths: ReportPaths,
) -> list[Block]:
    total = counts[counts["paper"] == "all"].iloc[0]
    rows = [_count_row(r) for r in counts.to_dict("records")]
    headline = (
        f"**Reproduced: {total['printed reproduced']} of {total['printed']} printed values and "
        f"{total['claims reproduced']} of {total['claims']} claims** of the papers "
        f"({total['printed failed']} printed values failed, {total['claims contradicted']} claims "
        f"contradicted). Derived values — computed by the project from the papers' formulas "
        f"with the same assumed parameters — check the harness's consistency, not the papers: "
        f"{total['derived consistent']} of {total['derived']} consistent, "
        f"{total['derived inconsistent']} inconsistent."
    )
    blocks: list[Block] = [
        Heading(2, "Summary", "summary"),
        Para(headline),
        Table(_COUNT_HEADER, rows, ["l"] + ["r"] * (len(_COUNT_HEADER) - 1)),
        Para(
            "✅ within the value's stated tolerance, or a claim that holds; ❌ outside it, or a "
            "claim a computation contradicts; ⚪ not comparable: a profile or data the entry "
            "does not allow, each saying why. Every value is in "
            f"`{_posix(paths.scorecard)}`"
            + (f", every claim in `{_posix(paths.claims)}`" if paths.claims else "")
            + "; [how they are scored](#method)."
        ),
    ]
    profiles = sorted({str(f.profile) for f in figures.values() if f.ran and f.profile})
    shas = sorted(
        {
            str(f.meta.get("git_sha"))[:10]
            for f in figures.values()
            if f.ran and f.meta.get("git_sha")
        }
    )
    facts = []
    if profiles:
        facts.append("profiles: " + ", ".join(f"`{p}`" for p in profiles))
    if shas:
        facts.append("git " + ", ".join(f"`{s}`" for s in shas))
    if facts:
        blocks.append(Para("Results made under " + "; ".join(facts) + "."))
    stand_in_figs = [
        (p, f, _stand_ins(fr)) for (p, f), fr in sorted(figures.items()) if _stand_ins(fr)
    ]
    if stand_in_figs:
        blocks.append(
            Para(
                f"**Computed on stand-in data ({len(stand_in_figs)} figures):** their values and "
                "claims are shown but never compared with the papers and never counted as "
                "reproduced. " + "; ".join(_fig_link(p, f) for p, f, _ in stand_in_figs) + "."
            )
        )
    contradicted = claims[claims["verdict"] == "contradicted"] if len(claims) else claims
    if len(contradicted):
        blocks.append(Para(f"**Claims contradicted ({len(contradicted)}):**"))
        blocks.append(Bullets(_contradicted_items(contradicted)))
    failing = card[card["verdict"] == "fail"] if len(card) else card
    for kind, word in (
        ("printed", "printed values that fail"),
        ("derived", "derived values inconsistent"),
    ):
        sub = failing[failing["kind"] == kind] if len(failing) else failing
        if len(sub):
            blocks.append(Para(f"**{word.capitalize()} ({len(sub)}):**"))
            blocks.append(
                Bullets(
                    [
                        f"{_fig_link(r['paper'], r['figure'])}: {r['quantity']} — reference "
                        f"{fmt_num(r['reference'], 10)}, reproduced {fmt_num(r['reproduced'])} "
                        f"(`{r['id']}`)"
                        for r in sub.to_dict("records")
                    ]
                )
            )
    stand_in_claims = (
        claims[(claims["code"] == "stand-in") & (claims["outcome"] == "fails")]
        if len(claims)
        else claims
    )
    if len(stand_in_claims):
        blocks.append(
            Details(
                f"Claims the stand-in output does not show ({len(stand_in_claims)}; not counted)",
                [
                    Para(
                        "On stand-in data these claims come out false. This says nothing about "
                        "the papers (the data are not theirs), but a reader of the stand-in plots "
                        "should not take them as illustrating the claims."
                    ),
                    Bullets(_contradicted_items(stand_in_claims)),
                ],
            )
        )
    return blocks


def _contents(
    papers: list[str],
    by_paper: Mapping[str, list[FigureResults]],
    refs: ReferenceSet,
    rehearsal: bool = False,
) -> list[Block]:
    """One line per paper (its page, each figure's section on it), then the closing pages."""
    items: list[str | tuple[str, list[str]]] = []
    for paper in papers:
        title = PAPERS.get(paper, (paper, ""))[0]
        figs = []
        for fr in by_paper.get(paper, []):
            state = "" if fr.ran else " *(not run)*"
            if _stand_ins(fr):
                state += " *(stand-in data)*"
            figs.append(f"[{figure_label(fr.figure)}](#{_anchor(paper, fr.figure)}){state}")
        n_err = sum(e.paper == paper for e in refs.errata)
        if n_err:
            figs.append(f"[errata ({n_err})](#{_anchor(paper, 'errata')})")
        items.append(f"[{paper} — {title}](#{_anchor(paper)}): " + " · ".join(figs))
    closing = ["[Provenance of every figure](#provenance)", "[Method](#method)"]
    if rehearsal:
        closing.insert(0, "[Cost of the paper profile (rehearsal)](#rehearsal)")
    items.append(" · ".join(closing))
    return [Heading(2, "Contents", "contents"), Bullets(items)]


# --------------------------------------------------------------------------- a figure


def _scored_units(fr: FigureResults, profile: str | None) -> list[Mapping[str, Any]]:
    """``meta.json``'s entries of the units the figure is scored on (the canonical view of
    ``profile``); empty when the meta records no view or no units."""
    view = fr.canonical.get(profile or "")
    listed = fr.meta.get("units")
    if not view or not isinstance(listed, list):
        return []
    ids = {str(u) for u in view.get("unit_ids") or []}
    return [u for u in listed if isinstance(u, Mapping) and str(u.get("unit_id")) in ids]


def _provenance_row(fr: FigureResults) -> list[str]:
    """Profile, seeds, git sha, data, device, compute time, finished and units of the units the
    figure is scored on; the last run's record where the meta lists no canonical units (a
    sweep's last job may have computed other units than the scored ones)."""
    m = fr.meta
    units = m.get("units")
    device = str(m.get("device") or "—")
    if m.get("device_name") and m.get("device_name") != device:
        device += f" ({m['device_name']})"
    profile, _ = choose_profile(profiles_of(fr), None)
    data = "; ".join(data_labels(fr, profile) or []) or "—"
    view = fr.canonical.get(profile or "")
    seeds = ", ".join(str(s) for s in view.get("seeds") or []) if view else fmt_num(m.get("seed"))
    scored = _scored_units(fr, profile)
    if scored:
        times = [float(u["wall_time_s"]) for u in scored if u.get("wall_time_s") is not None]
        wall = fmt_duration(sum(times)) if len(times) == len(scored) else "—"
        finished = max((str(u.get("finished") or "") for u in scored), default="") or "—"
        shas = sorted({str(u.get("git_sha") or "")[:10] for u in scored} - {""})
        sha = (
            _sha(m)
            if shas == [str(m.get("git_sha") or "")[:10]]
            else (", ".join(f"`{x}`" for x in shas) or "—")
        )
        n_units = str(len(scored))
    else:
        wall = fmt_duration(m.get("wall_time_s"))
        finished = str(m.get("started") or "—")
        sha = _sha(m)
        n_units = str(len(units)) if isinstance(units, list) else "—"
    return [
        f"`{', '.join(profiles_of(fr)) or '—'}`",
        seeds,
        sha,
        data,
        device,
        wall,
        finished,
        n_units,
    ]


def _scored_text(fr: FigureResults) -> str | None:
    """Which rows the verdicts are made on: each profile's canonical view, and what is left."""
    if not fr.canonical:
        return None
    parts = []
    for profile, view in fr.canonical.items():
        seeds = [str(s) for s in view.get("seeds") or []]
        n = len(view.get("unit_ids") or [])
        label = "seeds" if len(seeds) > 1 else "seed"
        parts.append(f"`{profile}`: {label} {', '.join(seeds)} ({n} units)")
    chosen, _ = choose_profile(profiles_of(fr), None)
    text = (
        f"*Scored:* the figure's own parameters under profile `{chosen}`, the most faithful one "
        f"held (each value takes the most faithful profile it allows) — {'; '.join(parts)}."
    )
    held = sum(len(v.get("unit_ids") or []) for v in fr.canonical.values())
    if fr.table_units is not None and fr.table_units > held:
        text += (
            f" The table's other {fr.table_units - held} units (ad-hoc runs, sweeps) have their "
            "own plots and are not scored."
        )
    return text


#: compute time: the scored units' own wall times, summed; when: the last of them finished
_PROV_HEADER = ["profile", "seed", "git sha", "data", "device", "compute time", "when", "units"]


def _assumptions(meta: Mapping[str, Any]) -> list[Block]:
    assumed = meta.get("assumptions") or {}
    if not isinstance(assumed, Mapping) or not assumed:
        return [Para("*Assumed choices:* none recorded.")]
    items: list[str | tuple[str, list[str]]] = []
    for key, entry in assumed.items():
        if isinstance(entry, Mapping):
            items.append(f"`{key}` = `{entry.get('value')}` — {entry.get('why', '')}")
        else:
            items.append(f"`{key}` = `{entry}`")
    return [Para("*Choices the paper leaves unstated (assumed):*"), Bullets(items)]


def _tolerance_text(r: Mapping[Any, Any]) -> str:
    if math.isnan(r["allowed"]):
        return "—"
    parts = []
    if r["tolerance_abs"] or not r["tolerance_rel"]:
        parts.append(f"±{fmt_num(r['tolerance_abs'], 3)}")
    if r["tolerance_rel"]:
        parts.append(f"{'' if parts else '±'}{fmt_num(100 * r['tolerance_rel'], 3)}%")
    return " + ".join(parts) + (f" — {r['tolerance_reason']}" if r["tolerance_reason"] else "")


def _verdict_text(r: Mapping[Any, Any]) -> str:
    if r["code"] == "not-run":
        return str(r["why"])
    out = _VERDICT_MARK[str(r["outcome"])]
    out += f": {r['why']}" if r["why"] else ""
    if r.get("guarantee") == "not valid":
        out += (
            f"<br>⚠️ **not a valid guarantee**: the exact value of the same mechanism is "
            f"{fmt_num(r['exact'])} (> {fmt_num(r['reproduced'])})"
        )
    elif r.get("guarantee") == "valid":
        out += f"<br>a valid guarantee (exact {fmt_num(r['exact'])})"
    elif r.get("guarantee") == "not checked":
        out += "<br>⚠️ guarantee not checked: no exact value of the same mechanism in the results"
    return out


def _reproduced_text(r: Mapping[Any, Any]) -> str:
    value = fmt_num(r["reproduced"], max(5, significant_digits(r["reference"]) + 1))
    if r["code"] == "stand-in" and value != "—":
        return f"{value}<br>*(stand-in data)*"
    return value


def _derivation_text(
    r: Mapping[Any, Any], derivations: Derivations, refs_by_id: Mapping[str, Any]
) -> str:
    ref = refs_by_id.get(r["id"])
    d: Computation | None = getattr(ref, "derivation", None)
    if d is None:
        return ""
    parts = []
    if d.formula:
        parts.append(d.formula)
    if d.function:
        res = derivations.results.get(r["id"])
        call = f"`{d.call_text()}`"
        if res is None:
            parts.append(call)
        elif res.error:
            parts.append(f"{call} — **does not run**: {res.error}")
        elif res.value is not None:
            parts.append(f"{call} = {fmt_num(res.value, 10)}")
    return "<br>".join(parts)


def _values_table(
    card: pd.DataFrame, derivations: Derivations, refs_by_id: Mapping[str, Any]
) -> Table:
    header = [
        "quantity",
        "configuration",
        "reference (source)",
        "reproduced",
        "difference",
        "tolerance",
        "verdict",
    ]
    rows = []
    for r in card.to_dict("records"):
        source = f"{fmt_num(r['reference'], 10)}<br>*{r['source']}*"
        how = _derivation_text(r, derivations, refs_by_id)
        if how:
            source += f"<br>{how}"
        rows.append(
            [
                f"{r['quantity']}<br>`{r['id']}`",
                r["config"] or "—",
                source,
                _reproduced_text(r),
                _fmt_diff(r["difference"], r["rel_difference"]),
                _tolerance_text(r),
                _verdict_text(r),
            ]
        )
    return Table(header, rows, ["l", "l", "r", "r", "r", "l", "l"])


_OUTCOME_MARK = {"holds": "✅ holds", "fails": "❌ fails", "undecidable": "⚪ undecidable"}


def _claim_verdict(r: Mapping[Any, Any]) -> str:
    verdict = _VERDICT_MARK[str(r["verdict"])]
    if r["verdict"] in ("reproduced", "contradicted") and r["decided_by"]:
        verdict += f" by {r['decided_by']}"
    if r["why"]:
        verdict += f": {r['why']}"
    return verdict


def _claims_table(claims: pd.DataFrame) -> Table:
    """Every claim of a figure in one row: the claim and its reading, the verdict, and the
    numbers that decided it (the predicate trace is in the claims CSV)."""
    header = ["claim", "read as", "verdict", "decisive numbers"]
    rows = []
    for r in claims.to_dict("records"):
        claim = f"{r['claim']}<br>`{r['id']}`"
        numbers = "<br>".join(
            f"{x['computation']}: {x['numbers']}" for x in _deciding(r) if x.get("numbers")
        )
        rows.append([claim, str(r["interpretation"]) or "—", _claim_verdict(r), numbers or "—"])
    return Table(header, rows, ["l", "l", "l", "l"])


def _re_read(r: Mapping[Any, Any]) -> bool:
    """A claim shown with its readings: contradicted, or with more than one reading."""
    return r["verdict"] == "contradicted" or any(not x["decides"] for x in claim_readings(r))


def _reading_blocks(r: Mapping[Any, Any]) -> list[Block]:
    """A contradicted or re-read claim: the sentence, why its reading decides, and one short
    table of readings (reading, computation, numbers, outcome)."""
    blocks: list[Block] = [
        Para(f"**{r['claim']}** (`{r['id']}`) — “{r['quote']}” *({r['source']})*")
    ]
    if r.get("decides_because"):
        blocks.append(Para(f"*Why the first reading decides:* {r['decides_because']}"))
    rows = []
    for x in claim_readings(r):
        mark = _OUTCOME_MARK.get(str(x["outcome"]), str(x["outcome"]))
        reading = ("**decides:** " if x["decides"] else "") + str(x["reading"])
        if x.get("why_not"):
            reading += f"<br>*not deciding:* {x['why_not']}"
        rows.append([reading, str(x["computation"]), str(x["numbers"]), mark])
    blocks.append(Table(["reading", "computation", "numbers", "outcome"], rows))
    tail = f"**Verdict:** {_claim_verdict(r)}."
    if r.get("numbers"):
        tail += f" **Decisive numbers:** {r['numbers']}."
    blocks.append(Para(tail))
    return blocks


def _claims_blocks(claims: pd.DataFrame) -> list[Block]:
    """A figure's claims: the one-row-per-claim table, then the readings of each claim that is
    contradicted or was read more than one way."""
    blocks: list[Block] = [_claims_table(claims)]
    re_read = [r for r in claims.to_dict("records") if _re_read(r)]
    if re_read:
        blocks.append(Para("**Claims contradicted or read more than one way**"))
        for r in re_read:
            blocks += _reading_blocks(r)
    return blocks


def _summary_details(fr: FigureResults, matched: set[str]) -> list[Block]:
    if fr.summary is None or fr.summary.empty:
        return []
    df = fr.summary
    cols = [c for c in df.columns if c not in _BOOKKEEPING - {"metric"}]
    rows = [
        [fmt_num(v) if not isinstance(v, str) else v for v in rec]
        for rec in df[cols].itertuples(index=False)
    ]
    align = ["r" if pd.api.types.is_numeric_dtype(df[c]) else "l" for c in cols]
    note = f"{len(df)} values" + (f", {len(matched)} compared above" if matched else "")
    inner: list[Block] = [Table(list(cols), rows[:60], align)]
    if len(rows) > 60:
        inner.append(Para(f"… {len(rows) - 60} more in the summary table."))
    return [Details(f"All summary values of this figure ({note})", inner)]


def _stand_in_banner(fr: FigureResults, stand_ins: list[str]) -> Callout:
    shaped = any("shaped" in s for s in stand_ins)
    text = (
        "This figure was computed on stand-in data, not on the paper's: "
        + "; ".join(f"**{s}**" for s in stand_ins)
        + ". Its plot and numbers exercise the harness's code path only: they are shown but never "
        "compared with the paper's, and its claims are evaluated but not counted."
    )
    if shaped:
        text += (
            " The stand-in was **shaped** to sit in the paper's regime, so numbers that look like "
            "the paper's are there by construction — they are not a reproduction."
        )
    text += f" The paper's data run under `PROFILE=paper` (`{make_target(fr.paper, fr.figure)}`)."
    return Callout("⚠️ Stand-in data", [Para(text)], kind="warning")


def _figure_section(
    fr: FigureResults,
    card: pd.DataFrame,
    claims: pd.DataFrame,
    errata: list[Erratum],
    paths: ReportPaths,
    derivations: Derivations,
    refs_by_id: Mapping[str, Any],
) -> list[Block]:
    label = figure_label(fr.figure)
    blocks: list[Block] = [
        Heading(3, f"{label} — {section_title(fr)}", _anchor(fr.paper, fr.figure))
    ]
    stand_ins = _stand_ins(fr)
    if stand_ins:
        blocks.append(_stand_in_banner(fr, stand_ins))
    src = fr.meta.get("source") or {}
    if isinstance(src, Mapping) and (src.get("where") or src.get("equation")):
        text = "*In the paper:* " + str(src.get("where") or "")
        if src.get("equation"):
            text += f"; `{src['equation']}`"
        blocks.append(Para(text))
    if fr.error:
        blocks.append(
            Para(
                f"**Results unreadable:** {fr.error}. Rerun "
                f"`{make_target(fr.paper, fr.figure)}`, then `make report`."
            )
        )
    elif not fr.ran and fr.no_canonical:
        blocks.append(Para(f"**No canonical view:** {fr.no_canonical}; nothing of it is scored."))
    elif not fr.ran:
        blocks.append(
            Para(
                f"**Not run.** Run `{make_target(fr.paper, fr.figure)}` (or "
                "`make figures`), then `make report`."
            )
        )
    else:
        if fr.png is not None:
            links = [("PDF", fr.pdf)] if fr.pdf is not None else []
            caption = f"{fr.paper} {label}: {section_title(fr)}"
            if stand_ins:
                caption += " — computed on stand-in data"
            blocks.append(Image(fr.png, f"{fr.paper} {label}", caption, links))
        else:
            blocks.append(
                Para(
                    f"*No plot found at `{_posix(paths.plots)}/{fr.paper}/"
                    f"{fr.figure}.png` (run `make plots`).*"
                )
            )
        blocks.append(Table(_PROV_HEADER, [_provenance_row(fr)]))
        scored = _scored_text(fr)
        if scored:
            blocks.append(Para(scored))
        chosen, _ = choose_profile(profiles_of(fr), None)
        view = fr.canonical.get(chosen or "") or {}
        blocks += _assumptions(view if "assumptions" in view else fr.meta)
    if len(claims):
        blocks.append(Para("**The paper's claims about this figure**"))
        blocks += _claims_blocks(claims)
    if len(card):
        blocks.append(Para("**Reproduced against the paper's values**"))
        blocks.append(_values_table(card, derivations, refs_by_id))
        notes = [
            f"`{r['id']}`: {r['quantity']} — note: {refs_by_id[r['id']].note}"
            for r in card.to_dict("records")
            if r["id"] in refs_by_id and getattr(refs_by_id[r["id"]], "note", None)
        ]
        if notes:
            blocks.append(Bullets(list(notes)))
    elif fr.ran and not len(claims):
        blocks.append(Para("*No reference values or claims are matched to this figure yet.*"))
    if fr.ran:
        matched = set(card["id"]) if len(card) else set()
        blocks += _summary_details(fr, matched)
    if errata:
        refs = ", ".join(f"[{e.title}](#{_anchor('erratum', e.id)})" for e in errata)
        blocks.append(Para(f"⚠️ *Errata concerning this figure:* {refs}"))
    return blocks


# --------------------------------------------------------------------------- errata


def _frame_table(df: pd.DataFrame, limit: int = _MAX_ROWS) -> Table:
    cols = list(df.columns)
    cells = [
        [fmt_num(v) if not isinstance(v, str) else v for v in rec]
        for rec in df[cols].head(limit).itertuples(index=False)
    ]
    return Table([str(c) for c in cols], cells, ["r"] * len(cols))


def _computed_evidence(c: Computation, result: ComputationResult | None) -> list[Block]:
    head = c.label or c.formula or "computed"
    call = f" (`{c.call_text()}`)" if c.function else ""
    if c.formula and c.label:
        head += f" — {c.formula}"
    if result is None:
        return [Para(f"*Evidence:* {head}{call}.")]
    if result.error:
        return [Para(f"*Evidence:* {head}{call}: **does not run** — {result.error}.")]
    if result.value is not None:
        return [Para(f"*Evidence:* {head}{call} = **{fmt_num(result.value, 8)}**.")]
    assert result.table is not None
    out: list[Block] = [Para(f"*Evidence:* {head}{call}:"), _frame_table(result.table, 40)]
    if len(result.table) > 40:
        out.append(Para(f"… {len(result.table) - 40} more rows."))
    return out


def _evidence_blocks(
    e: Erratum,
    figures: Mapping[tuple[str, str], FigureResults],
    derivations: Derivations,
) -> list[Block]:
    blocks: list[Block] = []
    for i, lk in enumerate(e.evidence):
        if isinstance(lk, Computation):
            blocks += _computed_evidence(lk, derivations.results.get(f"{e.id}#{i}"))
            continue
        blocks += _lookup_evidence(e, lk, figures)
    return blocks


def _lookup_evidence(
    e: Erratum, lk: Lookup, figures: Mapping[tuple[str, str], FigureResults]
) -> list[Block]:
    fr = figures.get((e.paper, lk.figure))
    what = lk.metric if lk.table == "summary" else lk.column
    head = (lk.label or f"`{what}`") + f" from {figure_label(lk.figure)}"
    if lk.where:
        head += f" at {where_text(lk.where)}"
    if fr is None or not fr.ran:
        return [Para(f"*Evidence:* {head}: not run yet (`{make_target(e.paper, lk.figure)}`).")]
    profile, _ = choose_profile(profiles_of(fr), None)
    sel = select(fr, lk, profile)
    prof = f" (profile `{profile}`)" if profile else ""
    labels = [d for d in (data_labels(fr, profile) or []) if is_stand_in_label(d)]
    if labels:
        prof += " — *on stand-in data*"
    if sel.rows.empty:
        return [Para(f"*Evidence:* {head}: {sel.problem}{prof}.")]
    if sel.n == 1 and sel.value is not None:
        return [Para(f"*Evidence:* {head} = **{fmt_num(sel.value)}**{prof}.")]
    value_col = lk.value_column
    rows = sel.rows
    varying = [
        c
        for c in rows.columns
        if c not in _BOOKKEEPING and c != value_col and rows[c].nunique(dropna=False) > 1
    ]
    blocks: list[Block] = [
        Para(f"*Evidence:* {head}{prof}:"),
        _frame_table(rows[[*varying, value_col]]),
    ]
    if sel.n > _MAX_ROWS:
        blocks.append(Para(f"… {sel.n - _MAX_ROWS} more rows in `results/{e.paper}/{lk.figure}`."))
    return blocks


def _errata_section(
    paper: str,
    errata: list[Erratum],
    figures: Mapping[tuple[str, str], FigureResults],
    derivations: Derivations,
) -> list[Block]:
    if not errata:
        return []
    blocks: list[Block] = [
        Heading(3, f"Errata and deviations found in {paper}", _anchor(paper, "errata"))
    ]
    for e in errata:
        inner: list[Block] = [Para(e.detail)]
        facts = []
        if e.source is not None:
            facts.append(f"*Where:* {e.source.text()}")
        if e.figure:
            facts.append(f"*Figure:* [{figure_label(e.figure)}](#{_anchor(paper, e.figure)})")
        if e.used:
            facts.append(f"*The harness uses:* {e.used}")
        if facts:
            inner.append(Para(" · ".join(facts)))
        inner += _evidence_blocks(e, figures, derivations)
        blocks.append(Heading(4, f"⚠️ {e.title}", _anchor("erratum", e.id)))
        blocks.append(Callout(f"Erratum `{e.id}`", inner))
    return blocks


# --------------------------------------------------------------------------- closing sections


def _provenance_section(figures: list[FigureResults]) -> list[Block]:
    ran = [f for f in figures if f.ran]
    blocks: list[Block] = [Heading(2, "Provenance of every figure", "provenance")]
    if not ran:
        return [*blocks, Para("No figure has results yet: run `make figures`.")]
    rows = [[_fig_link(f.paper, f.figure), *_provenance_row(f)] for f in ran]
    blocks.append(Table(["figure", *_PROV_HEADER], rows))
    versions: dict[str, set[str]] = {}
    for f in ran:
        v = f.meta.get("versions") or {}
        if isinstance(v, Mapping):
            for k, val in v.items():
                versions.setdefault(str(k), set()).add(str(val))
    if versions:
        blocks.append(Para("Library versions recorded with the results:"))
        blocks.append(
            Table(
                ["package", "version"],
                [[k, ", ".join(sorted(v))] for k, v in sorted(versions.items())],
            )
        )
    return blocks


_TERMS = (
    "**Printed** values are numbers or statements in the paper (its text, tables or plots) or "
    "its authors' code; **derived** values are computed by the project from the paper's "
    "formulas. A value is **reproduced** (printed) or **consistent** (derived) when the "
    "difference lies within its stated tolerance. A **claim** is a qualitative statement of the "
    "paper written as a predicate over a figure's table: **reproduced** when it holds under "
    "every computation it is decided by, **contradicted** when one of them (the paper's own "
    "formulas, the harness's exact accounting, a measurement) shows the opposite. **Not "
    "comparable**: made under a profile the entry does not allow (e.g. `smoke`'s reduced "
    "grids), on stand-in data (never compared with a paper), or the rows could not be found; "
    "each says why. **Not run**: the figure has no results yet."
)


def _method_section(refs: ReferenceSet) -> list[Block]:
    files = ", ".join(f"`{p.name}`" for p in refs.files) or "none yet"
    return [
        Heading(2, "Method", "method"),
        Para(_TERMS),
        Bullets(
            [
                "The papers' numbers and claims are data: "
                f"`src/privrepro/report/references/<paper>*.yaml` (read: {files}). A value names "
                "its source (section, table or figure, equation) and kind: **printed** (the "
                "paper's text, a table, read off a plot, or the authors' code) or **derived** "
                "(computed by the project from the paper's formulas, with the formula or the "
                "project function that computes it, which the report calls). Each gives the "
                "configuration it belongs to, the profiles under which it is comparable, and a "
                "tolerance with its reason (analytic: tight; Monte Carlo: its standard error; "
                "trained models: the paper's reported spread; read off a plot: the plot's "
                "resolution).",
                "Reproduced values are looked up in `results/<paper>/<figure>.summary.csv` (by "
                "`metric`) or `results/<paper>/<figure>.csv` (by column), rows selected by the "
                "entry's configuration (floats to a relative 1e-9) under the most faithful "
                "profile the entry allows (`paper`, then `smoke`, then `tiny`).",
                "reproduced / consistent ⇔ |reproduced − published| ≤ abs + rel·|published| "
                "(numpy.isclose's rule).",
                "A claim quotes the paper's sentence and gives a predicate over a figure's table "
                "(an ordering of two series over a range, a monotone trend, a crossover, a "
                "statistic compared with another), evaluated by code; it is decided by the "
                "computations it names (the paper's formulas, the harness's exact accounting, "
                "a measurement) and contradicted when any of them shows the opposite.",
                "Every table has a `data` column: the paper's dataset or a named stand-in. A "
                "value or claim on stand-in data is shown, never compared with the paper and "
                "never counted as reproduced.",
                "Errata list where the project found a paper (or its code) wrong or silent, with "
                "the value the harness computed as evidence.",
            ]
        ),
    ]


# --------------------------------------------------------------------------- assembly


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
            f"`{_posix(paths.results)}/` and `{_posix(paths.plots)}/`. This page is the "
            "summary; each paper, the provenance and the method have a page of their own."
        ),
    ]
    front += _summary_section(counts, card, claims, figures, paths)
    rehearsal = rehearsal_section(paths.results, paths.plots)
    front += _contents(papers, by_paper, refs, rehearsal=bool(rehearsal))
    pages = [Page("", title, front)]
    nav = Para(
        "[← Summary](#summary) · "
        + " · ".join(f"[{p}](#{_anchor(p)})" for p in papers)
        + " · [Provenance](#provenance) · [Method](#method)"
    )
    for paper in papers:
        paper_title = PAPERS.get(paper, (paper, ""))[0]
        blocks: list[Block] = [nav, Heading(2, f"{paper} — {paper_title}", _anchor(paper))]
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
        citation = _citation(paper, refs)
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
            blocks += _figure_section(fr, sub, csub, errs, paths, derivations, refs_by_id)
        blocks += _errata_section(paper, paper_errata, figures, derivations)
        pages.append(Page(paper, f"{title}: {paper} — {paper_title}", blocks))
    if rehearsal:
        pages.append(Page("rehearsal", f"{title}: rehearsal", [nav, *rehearsal]))
    provenance = _provenance_section([f for p in papers for f in by_paper[p]])
    pages.append(Page("provenance", f"{title}: provenance", [nav, *provenance]))
    pages.append(Page("method", f"{title}: method", [nav, *_method_section(refs)]))
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
