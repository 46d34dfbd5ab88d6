"""A claim's readings: the deciding one sets the verdict, the others are evaluated and shown;
decisive numbers; claims decided on a computed table; illustrations are shown, not counted; a
paper-formula ε that exact accounting shows is no guarantee is flagged beside its tick; the report
shows each contradicted or re-read claim as a short table, not a predicate trace."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from report_fakes import WriteFigure, WriteRefs

from privrepro.report.claims import build_claim_card, claim_readings
from privrepro.report.make import generate_report
from privrepro.report.references import load_references
from privrepro.report.results import load_results
from privrepro.report.scorecard import build_scorecard

# Fig. 6(a)-like: the paper's design, exact (above the Gaussian) and the best design (below)
T = [1, 10, 1000]
COMPOSITION = pd.DataFrame(
    {
        "T": T * 4,
        "mechanism": ["gaussian"] * 3 + ["pb"] * 9,
        "accountant": ["exact"] * 3 + ["paper"] * 3 + ["exact"] * 3 + ["exact_best"] * 3,
        "epsilon": [4.31, 17.55, 619.2, 3.57, 16.78, 258.6, 2.48, 21.15, 731.1, 2.23, 16.04, 576.2],
    }
)

CLAIMS = """\
paper: pb
claims:
  - id: pb-smaller
    figure: fig6
    claim: "PB-DP composes below the Gaussian"
    quote: "the composed privacy loss by the PB-DP mechanism is significantly smaller"
    source: {where: "Sec. 5.4, Fig. 6(a)"}
    interpretation: "exact ε at the best design per T below the Gaussian at every T"
    decides_because: "ε is the exact loss; ε₀ is the designer's"
    check:
      kind: compare
      x: T
      lhs: {name: pb, where: {mechanism: pb}, y: epsilon}
      rhs: {where: {mechanism: gaussian}, y: epsilon}
      relation: "<"
    decided_by:
      - {label: "best design", kind: exact, where: {pb: {accountant: exact_best}}}
    readings:
      - reading: "the paper's design, exactly"
        decided_by:
          - {label: "exact at the paper's ε₀", kind: exact, where: {pb: {accountant: exact}}}
        why_not: "not the best design"
    numbers:
      - {label: "T=1000 paper", where: {T: 1000, mechanism: pb, accountant: paper}, y: epsilon}
      - {label: "best", where: {T: 1000, mechanism: pb, accountant: exact_best}, y: epsilon}
      - {label: "missing", where: {T: 7, mechanism: pb, accountant: paper}, y: epsilon}
  - id: pb-illustrated
    figure: fig6
    claim: "an illustration"
    quote: "q"
    source: {where: "Sec. 4"}
    interpretation: "the Gaussian grows with T"
    scope: illustration
    check:
      kind: monotone
      x: T
      series: {where: {mechanism: gaussian}, y: epsilon}
      direction: increasing
  - id: pb-computed
    figure: fig9
    claim: "σ depends on α/ε only"
    quote: "q"
    source: {where: "Defs. 4–5"}
    interpretation: "σ equal where α/ε is"
    computed:
      function: privrepro.report.analytic:ip_noise_scales
      args: {alphas: [0.01, 0.1], epsilons: [0.1, 1.0]}
    check:
      kind: stat
      for_each: [mechanism, ratio]
      lhs: {table: computed, y: sigma, agg: max, where: {mode: repo_compat}}
      rhs: {table: computed, y: sigma, agg: min, where: {mode: repo_compat}}
      measure: ratio
      relation: "~="
      margin: 1.0
      tolerance: 1.0e-12
"""


def _card(tmp_path: Path) -> pd.DataFrame:
    figures = load_results(tmp_path / "results", tmp_path / "plots")
    return build_claim_card(load_references(tmp_path / "references").claims, figures).set_index(
        "id"
    )


def test_the_deciding_reading_sets_the_verdict_the_others_are_shown(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    write_figure("pb", "fig6", COMPOSITION)
    write_refs("pb", CLAIMS)
    row = _card(tmp_path).loc["pb-smaller"]
    assert (row["verdict"], row["decided_by"]) == ("reproduced", "best design")
    readings = claim_readings(row.to_dict())
    assert [(r["decides"], r["computation"], r["outcome"]) for r in readings] == [
        (True, "best design", "holds"),
        (False, "exact at the paper's ε₀", "fails"),
    ]
    assert readings[1]["numbers"] == "fails at 2 of 3 T; T=10: 21.15 vs 17.55"
    assert readings[1]["why_not"] == "not the best design"
    assert json.loads(str(row["readings"])) == readings
    assert row["numbers"].startswith("T=1000 paper = 258.6; best = 576.2; missing = — (")
    assert row["decides_because"] == "ε is the exact loss; ε₀ is the designer's"


def test_an_illustration_is_evaluated_never_counted(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    write_figure("pb", "fig6", COMPOSITION)
    write_refs("pb", CLAIMS)
    row = _card(tmp_path).loc["pb-illustrated"]
    assert (row["verdict"], row["code"], row["outcome"]) == (
        "not comparable",
        "illustration",
        "holds",
    )
    assert "(on it the claim holds)" in row["why"]


def test_a_computed_claim_needs_no_figure(tmp_path: Path, write_refs: WriteRefs) -> None:
    """Defs. 4–5 of the ip paper: σ ∝ α/ε, so (0.01, 0.1) and (0.1, 1) share σ = 0.4845."""
    write_refs("pb", CLAIMS)
    row = _card(tmp_path).loc["pb-computed"]
    assert row["verdict"] == "reproduced", row["why"]
    assert "(max) = 0.4845; rhs: sigma[mode=repo_compat] (min) = 0.4845" in row["detail"]


GUARANTEE = """\
paper: pb
values:
  - id: pb-fig6a-T10
    figure: fig6
    quantity: composed ε at T=10 (paper's Algorithm 1)
    value: 16.78
    source: {where: "Sec. 5.4", kind: derived}
    derivation: {formula: "Prop. 3"}
    match: {table: main, column: epsilon, where: {T: 10, mechanism: pb, accountant: paper}}
    guarantee: {table: main, column: epsilon, where: {T: 10, mechanism: pb, accountant: exact}}
    tolerance: {abs: 0.005, reason: "stored with 2 decimals"}
  - id: pb-fig6a-T1
    figure: fig6
    quantity: composed ε at T=1 (paper's Algorithm 1)
    value: 3.57
    source: {where: "Sec. 5.4", kind: derived}
    derivation: {formula: "Prop. 3"}
    match: {table: main, column: epsilon, where: {T: 1, mechanism: pb, accountant: paper}}
    guarantee: {table: main, column: epsilon, where: {T: 1, mechanism: pb, accountant: exact}}
    tolerance: {abs: 0.005, reason: "stored with 2 decimals"}
"""


def test_a_paper_formula_epsilon_below_the_exact_one_is_no_guarantee(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    """T = 10: the paper's 16.78 is consistent with its formula but the same mechanism's exact ε
    is 21.15, so 16.78 is not a valid guarantee; at T = 1 (exact 2.48 ≤ 3.57) it is."""
    write_figure("pb", "fig6", COMPOSITION)
    refs = load_references(write_refs("pb", GUARANTEE))
    card = build_scorecard(load_results(tmp_path / "results", tmp_path / "plots"), refs)
    card = card.set_index("id")
    assert card.loc["pb-fig6a-T10", ["outcome", "guarantee", "exact"]].tolist() == [
        "consistent",
        "not valid",
        21.15,
    ]
    assert card.loc["pb-fig6a-T1", "guarantee"] == "valid"


def test_the_report_shows_readings_as_a_table_not_a_trace(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    write_figure("pb", "fig6", COMPOSITION)
    write_refs("pb", CLAIMS + GUARANTEE.replace("paper: pb\n", ""))
    generate_report(
        tmp_path / "results",
        tmp_path / "plots",
        tmp_path / "REPORT.md",
        tmp_path / "references",
        None,
    )
    md = (tmp_path / "REPORT" / "pb.md").read_text()  # the paper's page
    assert "| reading | computation | numbers | outcome |" in md
    assert "| **decides:** exact ε at the best design per T below the Gaussian" in md
    assert "*not deciding:* not the best design" in md
    assert "fails at 2 of 3 T; T=10: 21.15 vs 17.55 | ❌ fails |" in md
    assert "*Why the first reading decides:* ε is the exact loss" in md
    assert "**not a valid guarantee**: the exact value of the same mechanism is 21.15" in md
    # the predicate trace stays in the CSV
    assert "best design: holds —" not in md
    claims = pd.read_csv(tmp_path / "results" / "claims.csv").set_index("id")
    assert claims.loc["pb-smaller", "detail"].startswith("best design: holds — ")
