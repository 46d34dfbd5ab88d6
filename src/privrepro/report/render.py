"""The reproduction report: ``REPORT.md`` and a self-contained ``REPORT.html``.

Top to bottom: a summary table (per paper: figures run, values that pass / fail / are not
comparable / not run, errata), a table of contents, then per paper each figure with its plot,
source, provenance (git sha, profile, device, wall time), the choices it assumed and its values
beside the published ones with their verdicts; then the paper's errata, each with the evidence the
harness computed (looked up in the results, never typed in); finally the provenance of every
figure and the method of comparison.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.report.document import (
    Block,
    Bullets,
    Callout,
    Details,
    Heading,
    Image,
    Para,
    Table,
    to_html,
    to_markdown,
)
from privrepro.report.references import Erratum, ReferenceSet
from privrepro.report.rehearsal_section import rehearsal_section
from privrepro.report.results import FigureResults, make_target
from privrepro.report.scorecard import select, summary_counts, where_text

__all__ = [
    "PAPERS",
    "ReportPaths",
    "build_document",
    "figure_label",
    "fmt_duration",
    "fmt_num",
    "referenced_figures",
    "report_papers",
    "write_report",
]

#: The four papers, in the order the report shows them (DESIGN.md).
PAPERS: dict[str, tuple[str, str]] = {
    "ip": ("Inference Privacy: Properties and Mechanisms", "000_fb86a0e23a384c90.txt"),
    "pb": (
        "Meeting Utility Constraints in Differential Privacy: A Privacy-Boosting Approach",
        "002_00fd73a0503a4267.txt",
    ),
    "cl": (
        "Differential Privacy in Continual Learning: Which Labels to Update?",
        "003_061314700acc4d60.txt",
    ),
    "pac": ("PAC Security (PAC privacy), arXiv 2210.03458 v1", "004_2acb35ae97624355.txt"),
}
_BOOKKEEPING = {"paper", "figure", "profile", "seed", "unit_id", "metric"}
_MAX_ROWS = 12
_VERDICT_MARK = {"pass": "✅ pass", "fail": "❌ fail", "not comparable": "⚪ not comparable"}


@dataclass(frozen=True)
class ReportPaths:
    """Where the report reads and writes; links in the Markdown are relative to ``out``'s folder."""

    results: Path
    plots: Path
    out: Path
    scorecard: Path

    @property
    def html(self) -> Path:
        """The HTML page next to the Markdown."""
        return self.out.with_suffix(".html")


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


def referenced_figures(refs: ReferenceSet) -> list[tuple[str, str]]:
    """The figures that reference values and errata name (each gets a section, run or not)."""
    named = [(v.paper, v.figure) for v in refs.values]
    named += [(e.paper, e.figure) for e in refs.errata if e.figure]
    return list(dict.fromkeys(named))


def report_papers(
    figures: Mapping[tuple[str, str], FigureResults], refs: ReferenceSet
) -> list[str]:
    """The papers the report shows, in order: the four papers first, then any other."""
    return _paper_order({p for p, _ in figures} | set(refs.papers()) | set(PAPERS))


# --------------------------------------------------------------------------- sections


def _summary_section(
    counts: pd.DataFrame,
    card: pd.DataFrame,
    figures: Mapping[tuple[str, str], FigureResults],
    paths: ReportPaths,
) -> list[Block]:
    header = [
        "paper",
        "figures run",
        "values",
        "✅ pass",
        "❌ fail",
        "⚪ not comparable",
        "not run",
        "errata",
    ]
    rows = []
    for r in counts.to_dict("records"):
        name = r["paper"]
        label = "**all**" if name == "all" else f"[{name}](#{_anchor(name)})"
        rows.append(
            [
                label,
                f"{r['figures run']} / {r['figures']}",
                str(r["values"]),
                str(r["pass"]),
                str(r["fail"]),
                str(r["not comparable"]),
                str(r["not run"]),
                str(r["errata"]),
            ]
        )
    profiles = sorted({f.profile for f in figures.values() if f.ran and f.profile})
    shas = sorted(
        {
            str(f.meta.get("git_sha"))[:10]
            for f in figures.values()
            if f.ran and f.meta.get("git_sha")
        }
    )
    blocks: list[Block] = [
        Heading(2, "Summary", "summary"),
        Table(header, rows, ["l", "r", "r", "r", "r", "r", "r", "r"]),
        Para(
            "Each reference value (printed in the paper, read off its plots, taken from the "
            "authors' code, or derived from them) is compared with the value the harness "
            "reproduced: **pass** when the difference lies within the stated tolerance; "
            "**fail** when it does not; **not comparable** when the results were made under a "
            "profile or on data the value does not apply to (e.g. `smoke`'s reduced grids or "
            "stand-in data), the value could not be found, or no tolerance can be stated (e.g. "
            "read off a plot). **not run**: the figure has no results yet. Every row is in "
            f"`{_posix(paths.scorecard)}`."
        ),
    ]
    facts = []
    if profiles:
        facts.append("profiles: " + ", ".join(f"`{p}`" for p in profiles))
    if shas:
        facts.append("git " + ", ".join(f"`{s}`" for s in shas))
    if facts:
        blocks.append(Para("Results made under " + "; ".join(facts) + "."))
    failing = card[card["verdict"] == "fail"] if len(card) else card
    if len(failing):
        blocks.append(Para(f"**Values that fail ({len(failing)}):**"))
        blocks.append(
            Bullets(
                [
                    f"[{r['paper']} {figure_label(r['figure'])}](#{_anchor(r['paper'], r['figure'])}): "
                    f"{r['quantity']} — reference {fmt_num(r['reference'], 10)}, reproduced "
                    f"{fmt_num(r['reproduced'])} (`{r['id']}`)"
                    for r in failing.to_dict("records")
                ]
            )
        )
    return blocks


def _posix(p: Path) -> str:
    return Path(p).as_posix()


def _contents(
    papers: list[str], by_paper: Mapping[str, list[FigureResults]], refs: ReferenceSet
) -> list[Block]:
    items: list[str | tuple[str, list[str]]] = ["[Summary](#summary)"]
    for paper in papers:
        title = PAPERS.get(paper, (paper, ""))[0]
        subs = []
        for fr in by_paper.get(paper, []):
            state = "" if fr.ran else " *(not run)*"
            subs.append(
                f"[{figure_label(fr.figure)}](#{_anchor(paper, fr.figure)}) — {fr.title}{state}"
            )
        n_err = sum(e.paper == paper for e in refs.errata)
        if n_err:
            subs.append(f"[Errata and deviations ({n_err})](#{_anchor(paper, 'errata')})")
        items.append((f"[{paper} — {title}](#{_anchor(paper)})", subs))
    items += ["[Provenance of every figure](#provenance)", "[Method](#method)"]
    return [Heading(2, "Contents", "contents"), Bullets(items)]


def _provenance_row(fr: FigureResults) -> list[str]:
    m = fr.meta
    units = m.get("units")
    device = str(m.get("device") or "—")
    if m.get("device_name") and m.get("device_name") != device:
        device += f" ({m['device_name']})"
    return [
        f"`{fr.profile or '—'}`",
        fmt_num(m.get("seed")),
        _sha(m),
        device,
        fmt_duration(m.get("wall_time_s")),
        str(m.get("started") or "—"),
        str(len(units)) if isinstance(units, list) else "—",
    ]


_PROV_HEADER = ["profile", "seed", "git sha", "device", "wall time", "started", "units"]


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


def _values_table(card: pd.DataFrame) -> Table:
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
        tol = "—"
        if not math.isnan(r["allowed"]):
            parts = []
            if r["tolerance_abs"] or not r["tolerance_rel"]:
                parts.append(f"±{fmt_num(r['tolerance_abs'], 3)}")
            if r["tolerance_rel"]:
                parts.append(f"{'' if parts else '±'}{fmt_num(100 * r['tolerance_rel'], 3)}%")
            tol = " + ".join(parts) + (
                f" — {r['tolerance_reason']}" if r["tolerance_reason"] else ""
            )
        verdict = _VERDICT_MARK[r["verdict"]]
        if r["code"] == "not-run":
            verdict = r["why"]
        elif r["why"]:
            verdict += f": {r['why']}"
        rows.append(
            [
                f"{r['quantity']}<br>`{r['id']}`",
                r["config"] or "—",
                f"{fmt_num(r['reference'], 10)}<br>*{r['source']}*",
                fmt_num(r["reproduced"], max(5, significant_digits(r["reference"]) + 1)),
                _fmt_diff(r["difference"], r["rel_difference"]),
                tol,
                verdict,
            ]
        )
    return Table(header, rows, ["l", "l", "r", "r", "r", "l", "l"])


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


def _figure_section(
    fr: FigureResults, card: pd.DataFrame, errata: list[Erratum], paths: ReportPaths
) -> list[Block]:
    label = figure_label(fr.figure)
    blocks: list[Block] = [Heading(3, f"{label} — {fr.title}", _anchor(fr.paper, fr.figure))]
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
            blocks.append(
                Image(fr.png, f"{fr.paper} {label}", f"{fr.paper} {label}: {fr.title}", links)
            )
        else:
            blocks.append(
                Para(
                    f"*No plot found at `{_posix(paths.plots)}/{fr.paper}/"
                    f"{fr.figure}.png` (run `make plots`).*"
                )
            )
        blocks.append(Table(_PROV_HEADER, [_provenance_row(fr)]))
        blocks += _assumptions(fr.meta)
    if len(card):
        blocks.append(Para("**Reproduced against the paper's values**"))
        blocks.append(_values_table(card))
        notes = [
            f"`{r['id']}`: {r['quantity']} — note: {r['note']}"
            for r in card.to_dict("records")
            if r.get("note")
        ]
        if notes:
            blocks.append(Bullets(list(notes)))
    elif fr.ran:
        blocks.append(Para("*No reference values are matched to this figure yet.*"))
    if fr.ran:
        matched = set(card["id"]) if len(card) else set()
        blocks += _summary_details(fr, matched)
    if errata:
        refs = ", ".join(f"[{e.title}](#{_anchor('erratum', e.id)})" for e in errata)
        blocks.append(Para(f"⚠️ *Errata concerning this figure:* {refs}"))
    return blocks


def _evidence_blocks(e: Erratum, figures: Mapping[tuple[str, str], FigureResults]) -> list[Block]:
    blocks: list[Block] = []
    for lk in e.evidence:
        fr = figures.get((e.paper, lk.figure))
        what = lk.metric if lk.table == "summary" else lk.column
        head = (lk.label or f"`{what}`") + f" from {figure_label(lk.figure)}"
        if lk.where:
            head += f" at {where_text(lk.where)}"
        if fr is None or not fr.ran:
            blocks.append(
                Para(f"*Evidence:* {head}: not run yet (`{make_target(e.paper, lk.figure)}`).")
            )
            continue
        sel = select(fr, lk)
        prof = f" (profile `{fr.profile}`)" if fr.profile else ""
        if sel.rows.empty:
            blocks.append(Para(f"*Evidence:* {head}: {sel.problem}{prof}."))
        elif sel.n == 1 and sel.value is not None:
            blocks.append(Para(f"*Evidence:* {head} = **{fmt_num(sel.value)}**{prof}."))
        else:
            value_col = lk.value_column
            rows = sel.rows
            varying = [
                c
                for c in rows.columns
                if c not in _BOOKKEEPING and c != value_col and rows[c].nunique(dropna=False) > 1
            ]
            cols = [*varying, value_col]
            cells = [
                [fmt_num(v) if not isinstance(v, str) else v for v in rec]
                for rec in rows[cols].head(_MAX_ROWS).itertuples(index=False)
            ]
            blocks.append(Para(f"*Evidence:* {head}{prof}:"))
            blocks.append(Table(cols, cells, ["r"] * len(cols)))
            if sel.n > _MAX_ROWS:
                blocks.append(
                    Para(f"… {sel.n - _MAX_ROWS} more rows in `results/{e.paper}/{lk.figure}`.")
                )
    return blocks


def _errata_section(
    paper: str, errata: list[Erratum], figures: Mapping[tuple[str, str], FigureResults]
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
        inner += _evidence_blocks(e, figures)
        blocks.append(Heading(4, f"⚠️ {e.title}", _anchor("erratum", e.id)))
        blocks.append(Callout(f"Erratum `{e.id}`", inner))
    return blocks


def _provenance_section(figures: list[FigureResults]) -> list[Block]:
    ran = [f for f in figures if f.ran]
    blocks: list[Block] = [Heading(2, "Provenance of every figure", "provenance")]
    if not ran:
        return [*blocks, Para("No figure has results yet: run `make figures`.")]
    rows = [
        [
            f"[{f.paper} {figure_label(f.figure)}](#{_anchor(f.paper, f.figure)})",
            *_provenance_row(f),
        ]
        for f in ran
    ]
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


def _method_section(refs: ReferenceSet) -> list[Block]:
    files = ", ".join(f"`{p.name}`" for p in refs.files) or "none yet"
    return [
        Heading(2, "Method", "method"),
        Bullets(
            [
                "Published values are data: `src/privrepro/report/references/<paper>*.yaml` "
                f"(read: {files}). Each names its source (section, table or figure, equation; "
                "printed, read off a plot, from the authors' notebook, or derived), the configuration "
                "it belongs to, the profiles under which it is comparable, and a tolerance with its "
                "reason (analytic: tight; Monte Carlo: its standard error; trained models: the "
                "paper's reported spread; read off a plot: the plot's resolution).",
                "Reproduced values are looked up in `results/<paper>/<figure>.summary.csv` (by "
                "`metric`) or `results/<paper>/<figure>.csv` (by column), rows selected by the "
                "entry's configuration (floats to a relative 1e-9).",
                "pass ⇔ |reproduced − published| ≤ abs + rel·|published| (numpy.isclose's rule).",
                "Errata list where the project found a paper (or its code) wrong or silent, with the "
                "value the harness computed as evidence.",
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


def build_document(
    figures: Mapping[tuple[str, str], FigureResults],
    refs: ReferenceSet,
    card: pd.DataFrame,
    paths: ReportPaths,
) -> list[Block]:
    """The report as blocks (see :mod:`privrepro.report.document`).

    Args:
        figures: every known figure (run or not); reference values of unknown figures are added
            as not run.
        refs: reference values and errata.
        card: the scorecard (:func:`privrepro.report.scorecard.build_scorecard`).
        paths: where the results, plots and report live.
    """
    figures = dict(figures)
    for paper, figure in referenced_figures(refs):
        figures.setdefault((paper, figure), FigureResults(paper, figure))
    papers = report_papers(figures, refs)
    by_paper = {p: _figure_order(figures, p) for p in papers}
    counts = summary_counts(card, figures, refs, papers)

    blocks: list[Block] = [
        Heading(1, "privrepro — reproduction report"),
        Para(
            "Every figure and table of four privacy papers, reproduced by the harness and held "
            "against the numbers the papers (or, for ip, the authors' notebooks) report, with "
            "the errors found on the way. Generated by `make report` "
            "(`uv run python -m privrepro.report`) from "
            f"`{_posix(paths.results)}/` and `{_posix(paths.plots)}/`."
        ),
    ]
    blocks += _summary_section(counts, card, figures, paths)
    blocks += _contents(papers, by_paper, refs)
    for paper in papers:
        title, file = PAPERS.get(paper, (paper, ""))
        blocks.append(Heading(2, f"{paper} — {title}", _anchor(paper)))
        row = counts[counts["paper"] == paper].iloc[0]
        intro = (
            f"{row['figures run']} of {row['figures']} figures run; "
            f"{row['values']} reference values: {row['pass']} pass, {row['fail']} fail, "
            f"{row['not comparable']} not comparable, {row['not run']} not run; "
            f"{row['errata']} errata."
        )
        if file:
            intro = f"Paper file `{file}`. " + intro
        blocks.append(Para(intro))
        if not by_paper[paper]:
            blocks.append(Para("*No figure of this paper has a configuration or results yet.*"))
        paper_errata = [e for e in refs.errata if e.paper == paper]
        for fr in by_paper[paper]:
            sub = card[(card["paper"] == paper) & (card["figure"] == fr.figure)]
            errs = [e for e in paper_errata if e.figure == fr.figure]
            blocks += _figure_section(fr, sub, errs, paths)
        blocks += _errata_section(paper, paper_errata, figures)
    blocks += rehearsal_section(paths.results, paths.plots)
    blocks += _provenance_section([f for p in papers for f in by_paper[p]])
    blocks += _method_section(refs)
    return blocks


def write_report(blocks: list[Block], paths: ReportPaths, html: bool = True) -> list[Path]:
    """Write ``REPORT.md`` (and ``REPORT.html``) atomically; returns the paths written."""
    from privrepro.store.atomic import atomic_write_text

    base = paths.out.resolve().parent
    written = [atomic_write_text(paths.out, to_markdown(blocks, base))]
    if html:
        written.append(
            atomic_write_text(paths.html, to_html(blocks, base, "privrepro — reproduction report"))
        )
    return written
