"""The scorecard is computed from the results tables and the reference files, never typed in."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from report_fakes import CL_FIG2, WriteFigure, WriteRefs, cl_fig2_summary

from privrepro.report.references import load_references
from privrepro.report.results import load_results
from privrepro.report.scorecard import build_scorecard, summary_counts

# pb-style entries on the main table: one printed value with an abs tolerance, one with a
# relative tolerance (Monte Carlo), one read off a plot without a tolerance, one that needs the
# paper profile, one averaged over seeds.
PB = """\
paper: pb
values:
  - id: pb-abs
    figure: fig2
    quantity: boosted ε at ρ=0.9
    value: 1.0
    source: {where: "Fig. 2(c)", kind: printed}
    match: {table: main, column: eps, where: {rho: 0.9, mech: pb}}
    tolerance: {abs: 0.05, reason: "printed to one decimal"}
  - id: pb-rel
    figure: fig2
    quantity: Gaussian ε at ρ=0.9
    value: 2.0
    source: {where: "Fig. 2(c)", kind: derived}
    derivation: {formula: "σ_G = τ/Φ⁻¹((1+ρ)/2), ε of the exact Gaussian profile"}
    match: {table: main, column: eps, where: {rho: 0.9, mech: gauss}}
    tolerance: {rel: 0.1, reason: "Monte Carlo: 2 standard errors"}
  - id: pb-plot
    figure: fig2
    quantity: boosted ε at ρ=0.5
    value: 0.5
    source: {where: "Fig. 2(c)", kind: read-off-plot}
    match: {table: main, column: eps, where: {rho: 0.5, mech: pb}}
  - id: pb-paper-only
    figure: fig2
    quantity: boosted ε at ρ=0.5, paper grid
    value: 0.5
    source: {where: "Fig. 2(c)", kind: printed}
    match: {table: main, column: eps, where: {rho: 0.5, mech: pb}}
    tolerance: {abs: 0.05, reason: "r"}
    profiles: [paper]
  - id: pb-mean
    figure: fig3
    quantity: accuracy, mean over seeds
    value: 0.8
    source: {where: "Table 2", kind: printed}
    match: {table: main, column: acc, where: {eps: 1}, reduce: mean}
    tolerance: {abs: 0.02, reason: "the paper's reported spread (±0.02)"}
  - id: pb-ambiguous
    figure: fig3
    quantity: accuracy, one seed
    value: 0.8
    source: {where: "Table 2", kind: printed}
    match: {table: main, column: acc, where: {eps: 1}}
    tolerance: {abs: 0.02, reason: "r"}
  - id: pb-missing-row
    figure: fig3
    quantity: accuracy at ε=8
    value: 0.9
    source: {where: "Table 2", kind: printed}
    match: {table: main, column: acc, where: {eps: 8}}
    tolerance: {abs: 0.02, reason: "r"}
  - id: pb-not-run
    figure: fig6
    quantity: composed ε
    value: 3.0
    source: {where: "Fig. 6", kind: printed}
    match: {table: summary, metric: eps_T}
    tolerance: {abs: 0.1, reason: "r"}
"""

FIG2 = pd.DataFrame(
    {"rho": [0.9, 0.9, 0.5], "mech": ["pb", "gauss", "pb"], "eps": [1.02, 2.15, 0.55]}
)
FIG3 = pd.DataFrame({"eps": [1, 1, 1], "seed_run": [0, 1, 2], "acc": [0.79, 0.80, 0.84]})


def card_for(tmp_path: Path, refs_dir: Path) -> pd.DataFrame:
    figures = load_results(tmp_path / "results", tmp_path / "plots")
    return build_scorecard(figures, load_references(refs_dir)).set_index("id")


@pytest.fixture
def pb_card(tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs) -> pd.DataFrame:
    write_figure("pb", "fig2", FIG2)
    write_figure("pb", "fig3", FIG3)
    return card_for(tmp_path, write_refs("pb", PB))


def test_pilot_passes_with_the_value_from_the_summary(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    write_figure("cl", "fig2", summary=cl_fig2_summary(12))
    card = card_for(tmp_path, write_refs("cl", CL_FIG2))
    row = card.loc["cl-fig2-largest-k-dropped"]
    assert row["reproduced"] == 12 and row["reference"] == 12
    assert (row["verdict"], row["difference"], row["profile"]) == ("pass", 0, "smoke")


def test_changing_the_results_csv_flips_pass_to_fail(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    """The issue's requirement: a changed result changes the verdict (read from disk again)."""
    refs = write_refs("cl", CL_FIG2)
    res = write_figure("cl", "fig2", summary=cl_fig2_summary(12))
    assert card_for(tmp_path, refs).loc["cl-fig2-largest-k-dropped", "verdict"] == "pass"
    path = res / "fig2.summary.csv"
    edited = pd.read_csv(path)
    edited.loc[(edited["epsilon"] == 1.0), "value"] = 13
    edited.to_csv(path, index=False)
    row = card_for(tmp_path, refs).loc["cl-fig2-largest-k-dropped"]
    assert (row["verdict"], row["reproduced"], row["difference"]) == ("fail", 13, 1)
    assert row["why"] == "off by 1, more than the allowed 0"
    # and the row at ε=2 is not what is compared: editing it changes nothing
    edited.loc[(edited["epsilon"] == 1.0), "value"] = 12
    edited.loc[(edited["epsilon"] == 2.0), "value"] = 99
    edited.to_csv(path, index=False)
    assert card_for(tmp_path, refs).loc["cl-fig2-largest-k-dropped", "verdict"] == "pass"


def test_main_table_verdicts_follow_the_tolerances(pb_card: pd.DataFrame) -> None:
    # |1.02 − 1.0| = 0.02 ≤ 0.05
    assert pb_card.loc["pb-abs", "verdict"] == "pass"
    assert pb_card.loc["pb-abs", "reproduced"] == pytest.approx(1.02, rel=1e-15)
    # |2.15 − 2.0| = 0.15 ≤ 0.1·2 = 0.2
    assert pb_card.loc["pb-rel", "verdict"] == "pass"
    assert pb_card.loc["pb-rel", "allowed"] == pytest.approx(0.2)
    assert pb_card.loc["pb-rel", "rel_difference"] == pytest.approx(0.075)
    # mean(0.79, 0.80, 0.84) = 0.81 within 0.8 ± 0.02
    assert pb_card.loc["pb-mean", "reproduced"] == pytest.approx(0.81)
    assert pb_card.loc["pb-mean", "verdict"] == "pass"
    assert pb_card.loc["pb-mean", "n_rows"] == 3


def test_relative_tolerance_boundary(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    refs = write_refs("pb", PB)
    write_figure("pb", "fig2", FIG2.assign(eps=[1.0, 2.21, 0.5]))  # 0.21 > 0.2
    row = card_for(tmp_path, refs).loc["pb-rel"]
    assert row["verdict"] == "fail"
    write_figure("pb", "fig2", FIG2.assign(eps=[1.0, 1.8, 0.5]))  # |−0.2| ≤ 0.2, on the edge
    assert card_for(tmp_path, refs).loc["pb-rel", "verdict"] == "pass"


@pytest.mark.parametrize(
    ("entry", "code", "why"),
    [
        ("pb-plot", "no-tolerance", "read off a plot and no tolerance stated"),
        (
            "pb-paper-only",
            "profile",
            "made under profile 'smoke'; the reference value is comparable under paper",
        ),
        ("pb-ambiguous", "ambiguous", "ambiguous: 3 rows with 3 different values match"),
        ("pb-missing-row", "no-row", "no row with eps=8"),
        ("pb-not-run", "not-run", "not run: `make fig-pb-6`"),
    ],
)
def test_not_comparable_says_why(pb_card: pd.DataFrame, entry: str, code: str, why: str) -> None:
    row = pb_card.loc[entry]
    assert row["verdict"] == "not comparable"
    assert row["code"] == code
    assert why in row["why"]


def test_profile_mismatch_still_shows_the_reproduced_value(pb_card: pd.DataFrame) -> None:
    assert pb_card.loc["pb-paper-only", "reproduced"] == pytest.approx(0.55)


def test_float_where_matches_to_relative_1e9(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    summary = cl_fig2_summary(12)
    summary["delta"] = [1e-7 * (1 + 1e-12), 1e-7]  # a CSV round-off far below 1e-9
    write_figure("cl", "fig2", summary=summary)
    assert (
        card_for(tmp_path, write_refs("cl", CL_FIG2)).loc["cl-fig2-largest-k-dropped", "verdict"]
        == "pass"
    )
    summary["delta"] = [1.001e-7, 1e-7]  # a different δ: no row
    write_figure("cl", "fig2", summary=summary)
    row = card_for(tmp_path, write_refs("cl", CL_FIG2)).loc["cl-fig2-largest-k-dropped"]
    assert row["code"] == "no-row"


def test_summary_counts_per_paper(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    write_figure("pb", "fig2", FIG2)
    write_figure("pb", "fig3", FIG3)
    write_figure("cl", "fig2", summary=cl_fig2_summary(13))
    write_refs("cl", CL_FIG2)
    refs = load_references(write_refs("pb", PB))
    figures = load_results(tmp_path / "results", tmp_path / "plots")
    card = build_scorecard(figures, refs)
    counts = summary_counts(card, figures, refs, ["cl", "pb", "pac"]).set_index("paper")
    cl = counts.loc["cl"]
    assert (cl["figures"], cl["figures run"], cl["values"], cl["errata"]) == (1, 1, 1, 1)
    assert (cl["printed"], cl["printed reproduced"], cl["printed failed"]) == (1, 0, 1)
    assert cl["derived"] == 0 and cl["not run"] == 0 and cl["reproduced"] == 0
    # pb: abs and mean are printed and pass, rel is derived and consistent; plot, paper-only,
    # ambiguous, missing-row not comparable (all printed); fig6 not run
    pb = counts.loc["pb"]
    assert pb[["printed reproduced", "printed failed", "printed not comparable"]].tolist() == [
        2,
        0,
        4,
    ]
    assert pb[
        ["derived consistent", "derived inconsistent", "derived not comparable"]
    ].tolist() == [
        1,
        0,
        0,
    ]
    assert pb[["pass", "fail", "not comparable", "not run"]].tolist() == [3, 0, 4, 1]
    assert pb["reproduced"] == 2  # the headline counts printed values (and claims) only
    assert counts.loc["pac", "values"] == 0
    assert counts.loc["all", "values"] == 9


def test_printed_and_derived_verdicts_have_their_own_words(pb_card: pd.DataFrame) -> None:
    assert pb_card.loc["pb-abs", ["kind", "verdict", "outcome"]].tolist() == [
        "printed",
        "pass",
        "reproduced",
    ]
    assert pb_card.loc["pb-rel", ["kind", "outcome"]].tolist() == ["derived", "consistent"]
    assert pb_card.loc["pb-plot", ["kind", "outcome"]].tolist() == ["printed", "not comparable"]


def test_stand_in_data_is_shown_never_compared(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    """A value computed on a stand-in (the table's data column) is not comparable, even when it
    would fall inside the tolerance; its reproduced value is kept, its difference is not."""
    stand_in = "scikit-learn digits 8×8 (embedded) (stand-in for CIFAR-10)"
    write_figure("pb", "fig2", FIG2.assign(data=stand_in))
    write_figure("pb", "fig3", FIG3.assign(data="CIFAR-10"))
    card = card_for(tmp_path, write_refs("pb", PB))
    row = card.loc["pb-abs"]
    assert (row["verdict"], row["code"]) == ("not comparable", "stand-in")
    assert stand_in in row["why"] and row["data"] == stand_in
    assert row["reproduced"] == pytest.approx(1.02) and pd.isna(row["difference"])
    assert card.loc["pb-mean", "verdict"] == "pass"  # fig3 is on the real dataset


def test_rows_of_the_most_faithful_allowed_profile_are_compared(
    tmp_path: Path, write_figure: WriteFigure, write_refs: WriteRefs
) -> None:
    """A table holding several profiles: each entry takes its rows from the most faithful
    profile it allows (paper, then smoke), never a mix."""
    table = pd.concat(
        [
            FIG2.assign(profile="smoke"),
            FIG2.assign(profile="paper", eps=[0.5, 2.15, 0.5]),
        ]
    )
    write_figure("pb", "fig2", table)
    write_figure("pb", "fig3", FIG3)
    card = card_for(tmp_path, write_refs("pb", PB))
    # pb-abs allows every profile: the paper rows (0.5, off by 0.5) are compared
    assert card.loc["pb-abs", ["profile", "reproduced", "verdict"]].tolist() == [
        "paper",
        0.5,
        "fail",
    ]
    # pb-paper-only now finds its profile (it was not comparable on smoke alone)
    assert card.loc["pb-paper-only", ["profile", "verdict"]].tolist() == ["paper", "pass"]


REQUIRES = """\
paper: ip
values:
  - id: ip-acc
    figure: fig4
    quantity: accuracy at ε=1
    value: 0.9
    source: {where: "authors' notebook, cell 12", kind: notebook}
    match: {table: main, column: acc, where: {eps: 1}}
    tolerance: {abs: 0.02, reason: "the notebook's spread over seeds"}
    requires: {dataset: mnist, model.width: 64}
"""


@pytest.mark.parametrize(
    ("params", "table_extra", "code", "why"),
    [
        ({"dataset": "mnist", "model": {"width": 64}}, {}, "", ""),
        (
            {"dataset": "digits", "model": {"width": 64}},
            {},
            "data",
            "data not available: made with dataset=digits, the reference needs dataset=mnist",
        ),
        ({"model": {"width": 64}}, {"dataset": ["mnist", "mnist"]}, "", ""),  # from a column
        ({"model": {"width": 64}}, {"dataset": ["mnist", "digits"]}, "data", "data not available"),
        ({"dataset": "mnist"}, {}, "data", "the results do not record model.width"),
    ],
)
def test_requires_marks_other_data_not_comparable(
    tmp_path: Path,
    write_figure: WriteFigure,
    write_refs: WriteRefs,
    params: dict,
    table_extra: dict,
    code: str,
    why: str,
) -> None:
    table = pd.DataFrame({"eps": [1, 2], "acc": [0.91, 0.95], **table_extra})
    write_figure("ip", "fig4", table, meta={"params": params})
    row = card_for(tmp_path, write_refs("ip", REQUIRES)).loc["ip-acc"]
    assert row["code"] == code
    assert why in row["why"]
    assert row["verdict"] == ("pass" if not code else "not comparable")
    assert row["reproduced"] == pytest.approx(0.91)
