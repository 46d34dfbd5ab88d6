"""Reference files: loading, and errors that name the file, the entry id and the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from report_fakes import CL_FIG2, WriteRefs

from privrepro.report.derivation_entries import Computation, run_computation
from privrepro.report.reference_records import Lookup, ReferenceError
from privrepro.report.references import (
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
        (("where: {rho: 0.9}", "where: {rho: {x: 0.9}}"), "match.where.rho", "must be a number"),
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
    """Every file in src/privrepro/report/references loads; each figure it names (values, claims
    and their selectors, errata evidence) has a config."""
    folder = default_references_dir()
    refs = load_references(folder)
    conf = Path(__file__).resolve().parents[2] / "conf" / "experiment"
    for path in refs.files:
        load_reference_file(path)
    assert conf.is_dir(), "conf/experiment is part of the repository"
    named = {(v.paper, v.figure) for v in refs.values}
    named |= {(c.paper, c.figure) for c in refs.claims}
    named |= {(c.paper, s.figure) for c in refs.claims for s in c.check.selectors() if s.figure}
    named |= {
        (e.paper, lk.figure) for e in refs.errata for lk in e.evidence if isinstance(lk, Lookup)
    }
    missing = sorted(f"{p}/{f}" for p, f in named if not (conf / p / f"{f}.yaml").is_file())
    assert not missing, f"reference files name figures without a config: {missing}"


def test_every_paper_is_cited_by_arxiv_id() -> None:
    refs = load_references()
    assert set(refs.citations) == {"ip", "pb", "cl", "pac"}
    for paper, citation in refs.citations.items():
        assert re.search(r"arXiv \d{4}\.\d{4,5}", citation), (paper, citation)


_LOCAL = re.compile(
    r"\b(?:ip|pb|cl|pac) note\b|\bthe note\b|note's|note §|notes/|\.txt\b|paper_file"
)


def test_reference_texts_cite_the_papers_not_local_files() -> None:
    """A reader has the papers (arXiv id, section, figure), not the project's notes or file names."""
    folder = default_references_dir()
    offending = [
        f"{path.name}:{i}: {line.strip()}"
        for path in sorted(folder.glob("*.yaml"))
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _LOCAL.search(line)
    ]
    assert not offending, "\n".join(offending[:10])


def test_every_derived_value_carries_its_computation_and_reproduces_it() -> None:
    """Derived values name the formula or project function that computes them; each function
    still gives the stored value within its tolerance (so a stored number cannot drift from the
    code that is said to produce it)."""
    refs = load_references()
    derived = [v for v in refs.values if v.reference_class == "derived"]
    assert len(derived) >= 80
    problems = []
    for v in derived:
        assert v.derivation is not None, v.id
        if not v.derivation.function:
            assert v.derivation.formula, v.id
            continue
        res = run_computation(v.derivation)
        allowed = (v.tolerance.allowed(v.value) if v.tolerance else 0.0) + 1e-12 * abs(v.value)
        if res.value is None or abs(res.value - v.value) > allowed:
            problems.append(f"{v.id}: stored {v.value}, computed {res.value} {res.error or ''}")
    assert not problems, "\n".join(problems)


def test_errata_computed_evidence_runs() -> None:
    refs = load_references()
    computed = [
        (e.id, c)
        for e in refs.errata
        for c in e.evidence
        if isinstance(c, Computation) and c.function
    ]
    assert any(eid == "pb-alg1-misprints" for eid, _ in computed)
    for eid, c in computed:
        res = run_computation(c)
        assert res.error is None, (eid, res.error)


def test_claims_and_errata_cross_references_exist() -> None:
    """'erratum <id>' in a claim names an erratum that exists."""
    refs = load_references()
    errata = {e.id for e in refs.errata}
    for c in refs.claims:
        for text in (c.interpretation or "", c.where, c.note or ""):
            for eid in re.findall(r"erratum ([A-Za-z0-9][A-Za-z0-9.\-]*[A-Za-z0-9])", text):
                assert eid in errata, (c.id, eid)


def test_every_paper_has_claims() -> None:
    from collections import Counter

    counts = Counter(c.paper for c in load_references().claims)
    assert all(counts[p] >= 5 for p in ("ip", "pb", "cl", "pac")), counts


CLAIM = """\
paper: pb
claims:
  - id: pb-c
    figure: fig2
    claim: "PB below Gaussian"
    quote: "PB-DP can reduce the required ε"
    source: {where: "Sec. 5.1"}
    interpretation: "ε_PB < ε_G at every |S|"
    check:
      kind: compare
      x: size
      lhs: {name: pb, where: {case: absolute}, y: epsilon}
      rhs: {where: {case: gaussian}, y: epsilon}
      relation: "<"
    decided_by:
      - {label: "paper", kind: paper-formula, where: {pb: {accountant: paper}}}
"""


@pytest.mark.parametrize(
    ("edit", "key", "problem"),
    [
        (("kind: compare", "kind: between"), "check.kind", "must be one of"),
        (('relation: "<"', 'relation: "<<"'), "check.relation", "must be one of"),
        (('relation: "<"', 'relation: "~="'), "check.tolerance", "is required with relation ~="),
        (("      x: size\n", ""), "check.x", "is required for kind compare"),
        (("y: epsilon}\n      relation", "}\n      relation"), "check.rhs.y", "is required"),
        (("where: {pb: {", "where: {pbx: {"), "decided_by[0].where.pbx", "no selector has"),
        (("kind: paper-formula", "kind: guess"), "decided_by[0].kind", "must be one of"),
        (
            ('      relation: "<"', '      relation: "<"\n      on: ratio'),
            "check.True",
            "unknown key",
        ),
        (('    quote: "PB-DP can reduce the required ε"\n', ""), "quote", "is required"),
        (('    interpretation: "ε_PB < ε_G at every |S|"\n', ""), "interpretation", "is required"),
        (("    decided_by:", "    scope: proof\n    decided_by:"), "scope", "must be one of"),
        (
            ("    decided_by:", "    readings: [{reading: r}]\n    decided_by:"),
            "readings[0].why_not",
            "is required",
        ),
        (
            ("    decided_by:", "    numbers: [{where: {case: absolute}}]\n    decided_by:"),
            "numbers[0].label",
            "is required",
        ),
        (
            ("lhs: {name: pb,", "lhs: {table: computed, name: pb,"),
            "computed",
            "a selector reads `table: computed`",
        ),
    ],
)
def test_malformed_claim_names_file_id_and_key(
    write_refs: WriteRefs, edit: tuple[str, str], key: str, problem: str
) -> None:
    """A claim's predicate is checked when the file loads; YAML's ``on`` (read as true) is caught
    as an unknown key, which is why the vocabulary says ``measure: ratio``."""
    old, new = edit
    assert old in CLAIM
    with pytest.raises(ReferenceError) as info:
        load_references(write_refs("pb", CLAIM.replace(old, new)))
    msg = str(info.value)
    assert msg.startswith("references/pb.yaml: claims[0] (id pb-c): "), msg
    assert info.value.key == key and problem in msg, msg


def test_derived_value_without_its_computation_is_refused(write_refs: WriteRefs) -> None:
    text = VALUE.replace("kind: printed", "kind: derived")
    with pytest.raises(ReferenceError, match=r"values\[0\] \(id pb-x\): derivation: is required"):
        load_references(write_refs("pb", text))
    ok = text.replace(
        "    match:",
        "    derivation: {function: privrepro.dp.group:group_delta, args: {k: 2}}\n    match:",
    )
    (v,) = load_references(write_refs("pb", ok)).values
    assert v.reference_class == "derived" and v.derivation is not None
    bad = ok.replace("privrepro.dp.group:group_delta", "os:system")
    with pytest.raises(ReferenceError, match=r"derivation.function: = 'os:system': must read"):
        load_references(write_refs("pb", bad))
