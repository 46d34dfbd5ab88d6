"""A figure's section of its paper's page: a banner first when it was computed on stand-in data,
its plot, source, provenance (git sha, profile, data, device, the scored units' compute time), the
choices it assumed, the paper's claims about it with their verdicts and its values beside the
published ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from privrepro.report.claims import claim_readings
from privrepro.report.derivation_entries import Computation
from privrepro.report.document import (
    Block,
    Bullets,
    Callout,
    Details,
    Heading,
    Image,
    Para,
    Table,
)
from privrepro.report.labels import (
    BOOKKEEPING,
    VERDICT_MARK,
    figure_label,
    fmt_diff,
    fmt_duration,
    fmt_num,
    posix_path,
    section_anchor,
    section_title,
    sha_text,
    significant_digits,
    stand_in_labels,
)
from privrepro.report.reference_records import Erratum
from privrepro.report.report_inputs import Derivations, ReportPaths
from privrepro.report.results import FigureResults, make_target
from privrepro.report.row_selection import choose_profile, data_labels, profiles_of
from privrepro.report.summary_section import deciding_readings

__all__ = ["PROVENANCE_HEADER", "figure_section", "provenance_row"]


def _scored_units(fr: FigureResults, profile: str | None) -> list[Mapping[str, Any]]:
    """``meta.json``'s entries of the units the figure is scored on (the canonical view of
    ``profile``); empty when the meta records no view or no units."""
    view = fr.canonical.get(profile or "")
    listed = fr.meta.get("units")
    if not view or not isinstance(listed, list):
        return []
    ids = {str(u) for u in view.get("unit_ids") or []}
    return [u for u in listed if isinstance(u, Mapping) and str(u.get("unit_id")) in ids]


def provenance_row(fr: FigureResults) -> list[str]:
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
            sha_text(m)
            if shas == [str(m.get("git_sha") or "")[:10]]
            else (", ".join(f"`{x}`" for x in shas) or "—")
        )
        n_units = str(len(scored))
    else:
        wall = fmt_duration(m.get("wall_time_s"))
        finished = str(m.get("started") or "—")
        sha = sha_text(m)
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
PROVENANCE_HEADER = [
    "profile",
    "seed",
    "git sha",
    "data",
    "device",
    "compute time",
    "when",
    "units",
]


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
    out = VERDICT_MARK[str(r["outcome"])]
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
                fmt_diff(r["difference"], r["rel_difference"]),
                _tolerance_text(r),
                _verdict_text(r),
            ]
        )
    return Table(header, rows, ["l", "l", "r", "r", "r", "l", "l"])


_OUTCOME_MARK = {"holds": "✅ holds", "fails": "❌ fails", "undecidable": "⚪ undecidable"}


def _claim_verdict(r: Mapping[Any, Any]) -> str:
    verdict = VERDICT_MARK[str(r["verdict"])]
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
            f"{x['computation']}: {x['numbers']}" for x in deciding_readings(r) if x.get("numbers")
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
    cols = [c for c in df.columns if c not in BOOKKEEPING - {"metric"}]
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


def figure_section(
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
        Heading(3, f"{label} — {section_title(fr)}", section_anchor(fr.paper, fr.figure))
    ]
    stand_ins = stand_in_labels(fr)
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
                    f"*No plot found at `{posix_path(paths.plots)}/{fr.paper}/"
                    f"{fr.figure}.png` (run `make plots`).*"
                )
            )
        blocks.append(Table(PROVENANCE_HEADER, [provenance_row(fr)]))
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
        refs = ", ".join(f"[{e.title}](#{section_anchor('erratum', e.id)})" for e in errata)
        blocks.append(Para(f"⚠️ *Errata concerning this figure:* {refs}"))
    return blocks
