"""Reference files: loading, and errors that name the file, the entry id and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_fakes import CL_FIG2, WriteRefs

from privrepro.report.references import (
    ReferenceError,
    default_references_dir,
    load_reference_file,
    load_references,
)

VALUE = """\
paper: pb
values:
  - id: pb-x
    figure: fig2
    quantity: q
    value: 1.5
    source: {where: "Table 1", kind: printed}
    match: {table: main, column: eps, where: {rho: 0.9}}
    tolerance: {abs: 0.01, reason: "printed to two decimals"}
"""


def test_loads_the_contract_example(write_refs: WriteRefs) -> None:
    refs = load_references(write_refs("cl", CL_FIG2))
    (v,) = refs.values
    assert (v.id, v.paper, v.figure, v.value) == ("cl-fig2-largest-k-dropped", "cl", "fig2", 12)
    assert v.match.table == "summary" and v.match.metric == "largest_k_dropped_99"
    assert v.match.where == {"epsilon": 1.0, "delta": 1e-7}
    assert v.tolerance is not None and v.tolerance.abs == 0 and v.tolerance.rel == 0
    assert v.profiles == ("smoke", "paper")
    (e,) = refs.errata
    assert e.figure == "fig2" and e.evidence[0].metric == "largest_k_dropped_99"
    assert refs.papers() == ["cl"]


def test_main_table_value_and_tolerance_rule(write_refs: WriteRefs) -> None:
    (v,) = load_references(write_refs("pb", VALUE)).values
    assert v.match.table == "main" and v.match.value_column == "eps"
    assert v.profiles is None
    # numpy.isclose's rule: abs + rel·|reference|
    assert v.tolerance is not None and v.tolerance.allowed(1.5) == pytest.approx(0.01)


@pytest.mark.parametrize(
    ("edit", "key", "problem"),
    [
        (
            ('tolerance: {abs: 0.01, reason: "printed to two decimals"}', "tolerance: {abs: 0.01}"),
            "tolerance.reason",
            "is required",
        ),
        (("abs: 0.01", "abs: -1"), "tolerance.abs", "must be >= 0"),
        (
            (
                'tolerance: {abs: 0.01, reason: "printed to two decimals"}',
                'tolerance: {reason: "x"}',
            ),
            "tolerance",
            "needs abs, rel or both",
        ),
        (("kind: printed", "kind: guessed"), "source.kind", "must be one of"),
        (("value: 1.5", "value: about 1.5"), "value", "must be a number"),
        (("quantity: q", "quantity: q\n    colour: red"), "colour", "unknown key"),
        (("table: main, column: eps", "table: main"), "match.column", "is required"),
        (("table: main, column: eps", "table: summary"), "match.metric", "is required"),
        (("where: {rho: 0.9}", "where: {rho: [0.9]}"), "match.where.rho", "must be a number"),
        (("    figure: fig2\n", ""), "figure", "is required"),
    ],
)
def test_malformed_entry_names_file_id_and_key(
    write_refs: WriteRefs, edit: tuple[str, str], key: str, problem: str
) -> None:
    old, new = edit
    assert old in VALUE
    folder = write_refs("pb", VALUE.replace(old, new))
    with pytest.raises(ReferenceError) as info:
        load_references(folder)
    msg = str(info.value)
    assert msg.startswith("references/pb.yaml: values[0] (id pb-x): "), msg
    assert info.value.key == key and problem in msg, msg


def test_erratum_evidence_list_errors_name_the_item(write_refs: WriteRefs) -> None:
    text = """\
    paper: ip
    errata:
      - id: ip-e
        title: t
        detail: d
        evidence:
          - {figure: fig3, metric: delta_at_10}
          - {metric: delta_at_10}
    """
    with pytest.raises(
        ReferenceError,
        match=r"errata\[0\] \(id ip-e\): evidence\[1\]\.figure: "
        r"is required",
    ):
        load_references(write_refs("ip", text))


def test_paper_must_match_file_name(write_refs: WriteRefs) -> None:
    folder = write_refs("cl-peft", VALUE)
    with pytest.raises(ReferenceError, match=r"cl-peft.yaml: paper: = 'pb': must match"):
        load_references(folder)


def test_part_files_and_duplicate_ids(write_refs: WriteRefs) -> None:
    write_refs("pb", VALUE)
    folder = write_refs("pb-extra", VALUE)
    with pytest.raises(
        ReferenceError,
        match=r"pb-extra.yaml: values \(id pb-x\): id: duplicate "
        r"id; first defined in references/pb.yaml",
    ):
        load_references(folder)
    (folder / "pb-extra.yaml").write_text(VALUE.replace("pb-x", "pb-y"))
    assert [v.id for v in load_references(folder).values] == ["pb-x", "pb-y"]


def test_invalid_yaml_and_empty_and_absent(write_refs: WriteRefs, tmp_path: Path) -> None:
    folder = write_refs("pac", "paper: pac\nvalues: [\n")
    with pytest.raises(ReferenceError, match=r"references/pac.yaml: not valid YAML"):
        load_references(folder)
    (folder / "pac.yaml").write_text("")
    with pytest.raises(ReferenceError, match=r"pac.yaml: paper: is required"):
        load_references(folder)
    assert load_references(tmp_path / "nowhere").values == []


def test_shipped_reference_files_are_valid_and_name_real_figures() -> None:
    """Every file in src/privrepro/report/references loads; each figure it names has a config."""
    folder = default_references_dir()
    refs = load_references(folder)
    conf = Path(__file__).resolve().parents[2] / "conf" / "experiment"
    for path in refs.files:
        load_reference_file(path)
    if not conf.is_dir():
        pytest.skip("no conf/experiment in this checkout")
    named = {(v.paper, v.figure) for v in refs.values}
    named |= {(e.paper, lk.figure) for e in refs.errata for lk in e.evidence}
    missing = sorted(f"{p}/{f}" for p, f in named if not (conf / p / f"{f}.yaml").is_file())
    assert not missing, f"reference files name figures without a config: {missing}"
