"""The report's front page: the summary per paper (printed values reproduced / failed / not
comparable, derived values consistent / inconsistent / not comparable, claims reproduced /
contradicted / not comparable, errata; the claims contradicted and the values that fail) and the
contents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from privrepro.report.claims import claim_readings
from privrepro.report.document import (
    Block,
    Bullets,
    Details,
    Heading,
    Para,
    Table,
)
from privrepro.report.labels import (
    PAPERS,
    figure_label,
    figure_link,
    fmt_num,
    posix_path,
    section_anchor,
    stand_in_labels,
)
from privrepro.report.reference_records import ReferenceSet
from privrepro.report.report_inputs import ReportPaths
from privrepro.report.results import FigureResults

__all__ = ["contents_section", "deciding_readings", "summary_section"]


def _count_row(r: Mapping[Any, Any]) -> list[str]:
    name = r["paper"]
    label = "**all**" if name == "all" else f"[{name}](#{section_anchor(name)})"
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


def deciding_readings(r: Mapping[Any, Any]) -> list[dict[str, Any]]:
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
        failing = [x for x in deciding_readings(r) if x["outcome"] == "fails"] or deciding_readings(
            r
        )
        sub += [f"{x['computation']}: {x['numbers']}" for x in failing]
        if r.get("numbers"):
            sub.append(f"*numbers:* {r['numbers']}")
        items.append(
            (f"{figure_link(r['paper'], r['figure'])}: {r['claim']}{by} (`{r['id']}`)", sub)
        )
    return items


def summary_section(
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
            f"`{posix_path(paths.scorecard)}`"
            + (f", every claim in `{posix_path(paths.claims)}`" if paths.claims else "")
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
        (p, f, stand_in_labels(fr)) for (p, f), fr in sorted(figures.items()) if stand_in_labels(fr)
    ]
    if stand_in_figs:
        blocks.append(
            Para(
                f"**Computed on stand-in data ({len(stand_in_figs)} figures):** their values and "
                "claims are shown but never compared with the papers and never counted as "
                "reproduced. " + "; ".join(figure_link(p, f) for p, f, _ in stand_in_figs) + "."
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
                        f"{figure_link(r['paper'], r['figure'])}: {r['quantity']} — reference "
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


def contents_section(
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
            if stand_in_labels(fr):
                state += " *(stand-in data)*"
            figs.append(f"[{figure_label(fr.figure)}](#{section_anchor(paper, fr.figure)}){state}")
        n_err = sum(e.paper == paper for e in refs.errata)
        if n_err:
            figs.append(f"[errata ({n_err})](#{section_anchor(paper, 'errata')})")
        items.append(f"[{paper} — {title}](#{section_anchor(paper)}): " + " · ".join(figs))
    closing = ["[Provenance of every figure](#provenance)", "[Method](#method)"]
    if rehearsal:
        closing.insert(0, "[Cost of the paper profile (rehearsal)](#rehearsal)")
    items.append(" · ".join(closing))
    return [Heading(2, "Contents", "contents"), Bullets(items)]
