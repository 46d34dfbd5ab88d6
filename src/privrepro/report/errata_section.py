"""A paper's errata, each with the evidence the harness computed (looked up in the results or
computed by a project function, never typed in).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from privrepro.data.provenance import is_stand_in_label
from privrepro.report.derivation_entries import Computation, ComputationResult
from privrepro.report.document import (
    Block,
    Callout,
    Heading,
    Para,
    Table,
)
from privrepro.report.labels import (
    BOOKKEEPING,
    MAX_ROWS,
    figure_label,
    fmt_num,
    section_anchor,
)
from privrepro.report.reference_records import Erratum, Lookup
from privrepro.report.report_inputs import Derivations
from privrepro.report.results import FigureResults, make_target
from privrepro.report.row_selection import choose_profile, data_labels, profiles_of, where_text
from privrepro.report.scorecard import select

__all__ = ["errata_section"]


def _frame_table(df: pd.DataFrame, limit: int = MAX_ROWS) -> Table:
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
        if c not in BOOKKEEPING and c != value_col and rows[c].nunique(dropna=False) > 1
    ]
    blocks: list[Block] = [
        Para(f"*Evidence:* {head}{prof}:"),
        _frame_table(rows[[*varying, value_col]]),
    ]
    if sel.n > MAX_ROWS:
        blocks.append(Para(f"… {sel.n - MAX_ROWS} more rows in `results/{e.paper}/{lk.figure}`."))
    return blocks


def errata_section(
    paper: str,
    errata: list[Erratum],
    figures: Mapping[tuple[str, str], FigureResults],
    derivations: Derivations,
) -> list[Block]:
    if not errata:
        return []
    blocks: list[Block] = [
        Heading(3, f"Errata and deviations found in {paper}", section_anchor(paper, "errata"))
    ]
    for e in errata:
        inner: list[Block] = [Para(e.detail)]
        facts = []
        if e.source is not None:
            facts.append(f"*Where:* {e.source.text()}")
        if e.figure:
            facts.append(
                f"*Figure:* [{figure_label(e.figure)}](#{section_anchor(paper, e.figure)})"
            )
        if e.used:
            facts.append(f"*The harness uses:* {e.used}")
        if facts:
            inner.append(Para(" · ".join(facts)))
        inner += _evidence_blocks(e, figures, derivations)
        blocks.append(Heading(4, f"⚠️ {e.title}", section_anchor("erratum", e.id)))
        blocks.append(Callout(f"Erratum `{e.id}`", inner))
    return blocks
