"""The claims scorecard: each claim of the reference files scored on the figures' tables.

A claim's check and its ``decided_by`` computations (:mod:`~privrepro.report.claim_checks`) are
evaluated (:mod:`~privrepro.report.check_evaluation`), its other readings beside it. Verdicts:
**reproduced** (every computation holds), **contradicted**, or **not comparable** with a reason
(not run, stand-in data, profile, missing rows or columns, illustration). On stand-in data the
outcome is still computed and shown ("on the stand-in the claim fails") but never counted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from privrepro.report.check_evaluation import Outcome, evaluate_check, numbers_text
from privrepro.report.claim_checks import Check, Claim, Decider
from privrepro.report.derivation_entries import run_computation
from privrepro.report.results import FigureResults, make_target
from privrepro.report.row_selection import (
    choose_profile,
    data_labels,
    data_problem,
    profiles_of,
)

__all__ = [
    "CLAIM_COLUMNS",
    "CLAIM_VERDICTS",
    "build_claim_card",
    "claim_readings",
    "score_claim",
]

CLAIM_VERDICTS = ("reproduced", "contradicted", "not comparable")

CLAIM_COLUMNS = [
    "id",
    "paper",
    "figure",
    "claim",
    "quote",
    "source",
    "interpretation",
    "decides_because",
    "scope",
    "profile",
    "verdict",
    "decided_by",
    "decided_kind",
    "outcome",
    "numbers",
    "readings",
    "detail",
    "why",
    "code",
    "data",
    "file",
]
"""The claims scorecard. ``interpretation``: the deciding reading; ``numbers``: the decisive
values (``label = value; …``); ``readings``: a JSON list, one entry per (reading, computation):
``reading``, ``decides`` (the deciding reading or another), ``computation``, ``kind``,
``outcome`` (holds / fails / undecidable), ``numbers`` and ``why_not``; ``detail``: the full
predicate trace of the deciding computations."""


def _figures_of(claim: Claim) -> list[str]:
    checks = [claim.check, *(r.check for r in claim.readings if r.check is not None)]
    sel = [s for c in checks for s in c.selectors() if s.table != "computed"]
    return list(dict.fromkeys([claim.figure, *(s.figure or claim.figure for s in sel)]))


def _computed_table(claim: Claim) -> tuple[pd.DataFrame | None, str | None]:
    """The claim's computed table, or why there is none."""
    if claim.computed is None:
        return None, None
    res = run_computation(claim.computed)
    if res.error:
        return None, res.error
    if res.table is None:
        return None, f"{claim.computed.call_text()} gave a number, not a table"
    return res.table, None


def _state(outcomes: Sequence[Outcome]) -> str:
    states = [o.state for o in outcomes]
    return "fails" if "fails" in states else "holds" if set(states) == {"holds"} else "undecidable"


def score_claim(claim: Claim, figures: Mapping[tuple[str, str], FigureResults]) -> dict[str, Any]:
    """One row of the claims scorecard (:data:`CLAIM_COLUMNS`)."""
    row: dict[str, Any] = {
        "id": claim.id,
        "paper": claim.paper,
        "figure": claim.figure,
        "claim": claim.claim,
        "quote": claim.quote,
        "source": claim.where,
        "interpretation": claim.interpretation or "",
        "decides_because": claim.decides_because or "",
        "scope": claim.scope,
        "profile": "",
        "verdict": "not comparable",
        "decided_by": "",
        "decided_kind": "",
        "outcome": "",
        "numbers": "",
        "readings": "[]",
        "detail": "",
        "why": "",
        "code": "",
        "data": "",
        "file": claim.file,
    }
    computed, computed_error = _computed_table(claim)
    if computed_error:
        row.update(why=f"the computed table does not run: {computed_error}", code="undecidable")
        return row
    names = _figures_of(claim) if claim.computed is None or _uses_figures(claim) else []
    profiles: dict[str, str | None] = {}
    profile_ok = True
    for name in names:
        fr = figures.get((claim.paper, name))
        if fr is not None and fr.error:
            row.update(why=f"results unreadable: {fr.error}", code="unreadable")
            return row
        if fr is not None and not fr.ran and fr.no_canonical:
            row.update(why=f"no canonical view: {fr.no_canonical}", code="no-canonical")
            return row
        if fr is None or not fr.ran:
            row.update(why=f"not run: `{make_target(claim.paper, name)}`", code="not-run")
            return row
        p, ok = choose_profile(profiles_of(fr), claim.profiles)
        profiles[name] = p
        profile_ok &= ok
    row["profile"] = ",".join(sorted({p for p in profiles.values() if p}))

    def run(check: Check, deciders: tuple[Decider, ...]) -> list[tuple[Decider, Outcome]]:
        ds = deciders or (Decider(label="the figure's table"),)
        return [
            (
                d,
                evaluate_check(
                    check, figures, claim.paper, claim.figure, profiles, d.where, computed
                ),
            )
            for d in ds
        ]

    outcomes = run(claim.check, claim.decided_by)
    readings: list[dict[str, Any]] = [
        _reading_entry(claim.interpretation or claim.claim, True, d, o, None) for d, o in outcomes
    ]
    for r in claim.readings:
        for d, o in run(r.check or claim.check, r.decided_by or claim.decided_by):
            readings.append(_reading_entry(r.text, False, d, o, r.why_not))
    row["readings"] = json.dumps(readings, ensure_ascii=False)
    row["numbers"] = numbers_text(
        claim.numbers, claim.paper, claim.figure, figures, profiles, computed
    )
    labels: set[str] = set()
    for _, out in outcomes:
        for name, rows in out.rows:
            if name == "computed":
                continue
            found = data_labels(figures[(claim.paper, name)], profiles.get(name), rows)
            labels |= set(found or [])
    row["data"] = "; ".join(sorted(labels))
    overall = _state([o for _, o in outcomes])
    row["outcome"] = overall
    row["detail"] = " · ".join(
        (f"{d.label}: " if claim.decided_by else "") + f"{o.state} — {o.detail}"
        for d, o in outcomes
    )
    problem = data_problem(sorted(labels)) if labels else None
    if not profile_ok:
        allowed = ", ".join(claim.profiles or ())
        row.update(
            why=f"made under profile {row['profile']!r}; the claim is decided under {allowed} "
            f"(here the claim {overall})",
            code="profile",
        )
        return row
    if problem:
        code, why = problem
        row.update(why=f"{why} (on it the claim {overall})", code=code)
        return row
    if claim.scope == "illustration" and overall != "undecidable":
        row.update(
            why="an illustration (a statement the paper makes in theory only, or one the "
            "computation satisfies by construction): shown, not counted "
            f"(on it the claim {overall})",
            code="illustration",
        )
        return row
    failing = [d for d, o in outcomes if o.state == "fails"]
    if failing:
        row.update(
            verdict="contradicted",
            decided_by="; ".join(d.label for d in failing),
            decided_kind="; ".join(sorted({d.kind or "" for d in failing} - {""})),
        )
        return row
    if overall == "holds":
        row.update(
            verdict="reproduced",
            decided_by="; ".join(d.label for d, _ in outcomes),
            decided_kind="; ".join(sorted({d.kind or "" for d, _ in outcomes} - {""})),
        )
        return row
    undecided = next(o for _, o in outcomes if o.state == "undecidable")
    row.update(why=f"cannot be decided: {undecided.detail}", code="undecidable")
    return row


def _uses_figures(claim: Claim) -> bool:
    checks = [claim.check, *(r.check for r in claim.readings if r.check is not None)]
    sel = [s for c in checks for s in c.selectors()] + [n.selector for n in claim.numbers]
    return any(s.table != "computed" for s in sel)


def _reading_entry(
    text: str, decides: bool, d: Decider, o: Outcome, why_not: str | None
) -> dict[str, Any]:
    return {
        "reading": text,
        "decides": decides,
        "computation": d.label,
        "kind": d.kind or "",
        "outcome": o.state,
        "numbers": o.numbers or o.detail,
        "why_not": why_not or "",
    }


def claim_readings(row: Mapping[Any, Any]) -> list[dict[str, Any]]:
    """The ``readings`` of a scorecard row as a list (the CSV holds them as JSON)."""
    raw = row.get("readings")
    if not isinstance(raw, str) or not raw.strip():
        return []
    try:
        out = json.loads(raw)
    except json.JSONDecodeError:
        return []
    return [r for r in out if isinstance(r, dict)] if isinstance(out, list) else []


def build_claim_card(
    claims: Sequence[Claim], figures: Mapping[tuple[str, str], FigureResults]
) -> pd.DataFrame:
    """One row per claim (:data:`CLAIM_COLUMNS`), in reference-file order."""
    return pd.DataFrame([score_claim(c, figures) for c in claims], columns=CLAIM_COLUMNS)
