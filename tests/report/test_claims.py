"""Claims: predicates over the figures' tables, scored from the results on disk (never typed in)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_fakes import WriteFigure, WriteRefs

from privrepro.report.check_evaluation import evaluate_check
from privrepro.report.claim_checks import parse_check
from privrepro.report.claims import build_claim_card
from privrepro.report.references import load_references
from privrepro.report.results import FigureResults, load_results

# Fig. 6(a)-like: PB-DP composed ε by the paper's accountant and exactly, against the Gaussian.
T = [1, 10, 100, 1000]
COMPOSITION = pd.DataFrame(
    {
        "T": T * 3,
        "mechanism": ["gaussian"] * 4 + ["pb"] * 8,
        "accountant": ["exact"] * 4 + ["paper"] * 4 + ["exact"] * 4,
        "epsilon": [
            4.31,
            17.55,
            89.96,
            619.16,
            3.57,
            16.78,
            60.74,
            258.61,
            2.48,
            21.16,
            106.9,
            732.6,
        ],
    }
)

CLAIMS = """\
paper: pb
claims:
  - id: pb-composition
    figure: fig6
    claim: "PB-DP composes below the Gaussian"
    quote: "the composed privacy loss by the PB-DP mechanism is significantly smaller"
    source: {where: "Sec. 5.4, Fig. 6(a)"}
    interpretation: "ε_PB(T) < ε_G(T) at every T"
    check:
      kind: compare
      x: T
      lhs: {name: pb, where: {mechanism: pb}, y: epsilon}
      rhs: {where: {mechanism: gaussian}, y: epsilon}
      relation: "<"
    decided_by:
      - {label: "the paper's Algorithm 1", kind: paper-formula, where: {pb: {accountant: paper}}}
      - {label: "exact PLD", kind: exact, where: {pb: {accountant: exact}}}
  - id: pb-paper-only
    figure: fig6
    claim: "under the paper's accountant alone"
    quote: "q"
    source: {where: "Sec. 5.4"}
    interpretation: "the paper's accountant below the Gaussian at every T"
    check:
      kind: compare
      x: T
      lhs: {where: {mechanism: pb, accountant: paper}, y: epsilon}
      rhs: {where: {mechanism: gaussian}, y: epsilon}
      relation: "<"
  - id: pb-grows
    figure: fig6
    claim: "the Gaussian's ε grows with T"
    quote: "q"
    source: {where: "Sec. 5.4"}
    profiles: [smoke, paper]
    interpretation: "strictly increasing in T"
    check:
      kind: monotone
      x: T
      series: {where: {mechanism: gaussian}, y: epsilon}
      direction: increasing
      strict: true
"""


def card_for(tmp_path: Path, refs_dir: Path) -> pd.DataFrame:
    figures = load_results(tmp_path / "results", tmp_path / "plots")
    return build_claim_card(load_references(refs_dir).claims, figures).set_index("id")


def test_a_claim_is_contradicted_by_the_computation_that_contradicts_it(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    """pb Fig. 6(a): the paper's accountant agrees with the claim, exact PLD reverses it at T = 10:
    the verdict is contradicted and names the exact computation."""
    write_figure("pb", "fig6", COMPOSITION)
    card = card_for(tmp_path, write_refs("pb", CLAIMS))
    row = card.loc["pb-composition"]
    assert (row["verdict"], row["decided_by"], row["decided_kind"]) == (
        "contradicted",
        "exact PLD",
        "exact",
    )
    assert "the paper's Algorithm 1: holds" in row["detail"]
    assert "exact PLD: fails" in row["detail"] and "T=10: lhs 21.16, rhs 17.55" in row["detail"]
    assert card.loc["pb-paper-only", "verdict"] == "reproduced"
    assert card.loc["pb-grows", ["verdict", "profile"]].tolist() == ["reproduced", "smoke"]


def test_editing_the_results_csv_flips_a_claim(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    """The issue's requirement: counts change when a table changes."""
    refs = write_refs("pb", CLAIMS)
    res = write_figure("pb", "fig6", COMPOSITION)
    assert card_for(tmp_path, refs).loc["pb-paper-only", "verdict"] == "reproduced"
    path = res / "fig6.csv"
    edited = pd.read_csv(path)
    hit = (edited["accountant"] == "paper") & (edited["T"] == 1000)
    edited.loc[hit, "epsilon"] = 700.0  # above the Gaussian's 619.16
    edited.to_csv(path, index=False)
    row = card_for(tmp_path, refs).loc["pb-paper-only"]
    assert row["verdict"] == "contradicted"
    assert "first at T=1000: lhs 700, rhs 619.2" in row["detail"]
    edited.loc[hit, "epsilon"] = 258.61
    edited.to_csv(path, index=False)
    assert card_for(tmp_path, refs).loc["pb-paper-only", "verdict"] == "reproduced"


def test_claims_on_stand_in_data_are_evaluated_not_counted(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    write_figure("pb", "fig6", COMPOSITION.assign(data="synthetic curves (stand-in for X)"))
    row = card_for(tmp_path, write_refs("pb", CLAIMS)).loc["pb-composition"]
    assert (row["verdict"], row["code"], row["outcome"]) == ("not comparable", "stand-in", "fails")
    assert "stand-in" in row["why"] and "(on it the claim fails)" in row["why"]


def test_not_run_profile_and_missing_rows_are_not_comparable(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    refs = write_refs("pb", CLAIMS)
    card = card_for(tmp_path, refs)
    assert card.loc["pb-composition", ["verdict", "code"]].tolist() == ["not comparable", "not-run"]
    assert "make fig-pb-6" in card.loc["pb-composition", "why"]
    write_figure("pb", "fig6", COMPOSITION, profile="tiny")
    row = card_for(tmp_path, refs).loc["pb-grows"]
    assert (row["verdict"], row["code"], row["outcome"]) == ("not comparable", "profile", "holds")
    write_figure("pb", "fig6", COMPOSITION[COMPOSITION["mechanism"] != "gaussian"])
    row = card_for(tmp_path, refs).loc["pb-grows"]
    assert (row["verdict"], row["code"]) == ("not comparable", "undecidable")
    assert "no rows with mechanism=gaussian" in row["why"]


def _fig(table: pd.DataFrame, summary: pd.DataFrame | None = None) -> dict:
    fr = FigureResults(
        "pb", "f", table=table.assign(profile="smoke"), summary=summary, meta={"profile": "smoke"}
    )
    return {("pb", "f"): fr}


def _check(raw: dict) -> object:
    def fail(key: str, problem: str) -> None:
        raise AssertionError(f"{key}: {problem}")

    return parse_check(raw, fail)


SERIES = pd.DataFrame(
    {
        "x": [1.0, 2.0, 3.0] * 2,
        "s": ["a"] * 3 + ["b"] * 3,
        "y": [1.0, 2.0, 3.0, 3.0, 2.0, 1.5],
    }
)


@pytest.mark.parametrize(
    ("raw", "state", "detail"),
    [
        # a crosses b between x = 2 and 3
        (
            {
                "kind": "crossover",
                "x": "x",
                "lhs": {"where": {"s": "a"}, "y": "y"},
                "rhs": {"where": {"s": "b"}, "y": "y"},
                "low": "<",
                "high": ">",
            },
            "holds",
            "lhs − rhs = -2 at x=1",
        ),
        (
            {
                "kind": "compare",
                "x": "x",
                "lhs": {"where": {"s": "a"}, "y": "y"},
                "rhs": {"where": {"s": "b"}, "y": "y"},
                "relation": ">",
                "quantifier": "any",
            },
            "holds",
            "at 1 of 3 x",
        ),
        (
            {
                "kind": "compare",
                "x": "x",
                "range": {"max": 2},
                "lhs": {"where": {"s": "a"}, "y": "y"},
                "rhs": {"value": 2.0},
                "relation": "<=",
            },
            "holds",
            "at 2 of 2 x",
        ),
        (
            {
                "kind": "monotone",
                "x": "x",
                "series": {"where": {"s": "b"}, "y": "y"},
                "direction": "decreasing",
                "strict": True,
            },
            "holds",
            "decreasing strictly over 3 points",
        ),
        (
            {
                "kind": "monotone",
                "x": "x",
                "for_each": ["s"],
                "series": {"y": "y"},
                "direction": "increasing",
            },
            "fails",
            "1 of 2 groups fail; first: [s=b] not increasing: 3 at x=1 then 2 at x=2",
        ),
        (
            {
                "kind": "trend",
                "x": "x",
                "series": {"where": {"s": "b"}, "y": "y"},
                "relation": "~=",
                "tolerance": 0.01,
                "margin": 0.5,
                "measure": "ratio",
            },
            "holds",
            "last / first = 0.5",
        ),
        (
            {
                "kind": "stat",
                "x": "x",
                "lhs": {"where": {"s": "a"}, "y": "y", "reduce": "argmax"},
                "rhs": {"value": 3.0},
                "relation": "~=",
                "tolerance": 1e-9,
            },
            "holds",
            "argmax of y[s=a] = 3",
        ),
        (
            {
                "kind": "stat",
                "x": "x",
                "lhs": {
                    "combine": "relative_gap",
                    "of": [{"where": {"s": "b"}, "y": "y"}, {"where": {"s": "a"}, "y": "y"}],
                    "reduce": "last",
                },
                "rhs": {"value": 0.0},
                "relation": "<",
            },
            "holds",
            "= -1",
        ),
        (
            {
                "kind": "all_of",
                "parts": [
                    {
                        "kind": "stat",
                        "lhs": {"where": {"s": "a", "x": 1.0}, "y": "y"},
                        "rhs": {"where": {"s": "b", "x": 1.0}, "y": "y"},
                        "relation": "<",
                    },
                    {
                        "kind": "stat",
                        "lhs": {"where": {"s": "a", "x": 3.0}, "y": "y"},
                        "rhs": {"where": {"s": "b", "x": 3.0}, "y": "y"},
                        "relation": "<",
                    },
                ],
            },
            "fails",
            "1 of 2 parts fail; first: part 2:",
        ),
        (
            {
                "kind": "stat",
                "lhs": {"where": {"s": "a"}, "y": "y"},
                "rhs": {"value": 1.0},
                "relation": ">",
            },
            "undecidable",
            "3 rows with 3 different values",
        ),
        (
            {
                "kind": "stat",
                "lhs": {"where": {"s": "a"}, "y": "y", "agg": "mean"},
                "rhs": {"value": 1.0},
                "relation": ">",
            },
            "holds",
            "= 2",
        ),
        (
            {
                "kind": "compare",
                "x": "x",
                "lhs": {"where": {"s": "c"}, "y": "y"},
                "rhs": {"value": 1.0},
                "relation": ">",
            },
            "undecidable",
            "no rows with s=c",
        ),
    ],
)
def test_the_predicate_vocabulary(raw: dict, state: str, detail: str) -> None:
    out = evaluate_check(_check(raw), _fig(SERIES), "pb", "f", {"f": "smoke"})  # type: ignore[arg-type]
    assert out.state == state, out.detail
    assert detail in out.detail, out.detail


def test_selectors_read_the_summary_and_other_figures() -> None:
    summary = pd.DataFrame({"metric": ["m", "m"], "k": ["a", "b"], "value": [1.0, 2.0]})
    figures = _fig(SERIES, summary)
    figures[("pb", "g")] = FigureResults("pb", "g", table=pd.DataFrame({"z": [5.0]}))
    raw = {
        "kind": "stat",
        "lhs": {"table": "summary", "where": {"metric": "m", "k": "b"}},
        "rhs": {"figure": "g", "y": "z"},
        "relation": "<",
    }
    out = evaluate_check(_check(raw), figures, "pb", "f", {"f": "smoke", "g": None})  # type: ignore[arg-type]
    assert out.state == "holds" and "value[metric=m, k=b] = 2" in out.detail
    assert {name for name, _ in out.rows} == {"f", "g"}


def test_shipped_claims_all_evaluate_on_an_empty_and_on_a_random_table() -> None:
    """Every shipped claim evaluates without raising, whatever the tables hold; a claim decided
    on a computed table (no figure) is decided even with no results at all."""
    refs = load_references()
    assert len(refs.claims) >= 40
    figure_claims = [c for c in refs.claims if c.computed is None]
    computed = [c for c in refs.claims if c.computed is not None]
    assert len(computed) >= 5
    assert build_claim_card(figure_claims, {})["code"].eq("not-run").all()
    card = build_claim_card(computed, {})
    tests = card[card["code"] != "illustration"]
    assert set(tests["verdict"]) <= {"reproduced", "contradicted"}
    # an illustration (a statement that holds by construction) is shown, never counted
    assert card.loc[card["code"] == "illustration", "verdict"].eq("not comparable").all()
    rng = np.random.default_rng(0)
    junk = pd.DataFrame(
        {"x": rng.normal(size=5), "epsilon": rng.normal(size=5), "profile": "smoke"}
    )
    figures = {
        (c.paper, s.figure or c.figure): FigureResults(c.paper, s.figure or c.figure, table=junk)
        for c in figure_claims
        for s in c.check.selectors()
    }
    card = build_claim_card(figure_claims, figures)
    assert set(card["verdict"]) == {"not comparable"}
    assert set(card["code"]) == {"undecidable"}
