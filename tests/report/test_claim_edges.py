"""The claim evaluator at its edges: each relation, tie, quantifier, range end and monotone rule
has a case on the boundary, so that a one-character change to the evaluator (``<`` for ``<=``,
``all`` for ``any``, a dropped slack, a flipped margin) changes an outcome here. The values are
exact binary fractions (0.25, 0.5, 0.75 …), so ties are exact ties on every platform."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from privrepro.report.check_evaluation import evaluate_check
from privrepro.report.claim_checks import Check, parse_check
from privrepro.report.results import FigureResults


def _check(raw: dict[str, Any]) -> Check:
    def fail(key: str, problem: str) -> None:
        raise AssertionError(f"{key}: {problem}")

    return parse_check(raw, fail)


def _state(raw: dict[str, Any], table: pd.DataFrame) -> str:
    fr = FigureResults("pb", "f", table=table.assign(profile="smoke"), meta={"profile": "smoke"})
    return evaluate_check(_check(raw), {("pb", "f"): fr}, "pb", "f", {"f": "smoke"}).state


# two series a, b over x = 1, 2, 3; a − b = (0, −0.25, 0.5)
PAIR = pd.DataFrame(
    {
        "x": [1.0, 2.0, 3.0] * 2,
        "s": ["a"] * 3 + ["b"] * 3,
        "y": [1.0, 1.75, 2.5, 1.0, 2.0, 2.0],
    }
)


def _compare(relation: str, **kw: Any) -> dict[str, Any]:
    return {
        "kind": "compare",
        "x": "x",
        "lhs": {"where": {"s": "a"}, "y": "y"},
        "rhs": {"where": {"s": "b"}, "y": "y"},
        "relation": relation,
        **kw,
    }


@pytest.mark.parametrize(
    ("relation", "kw", "state"),
    [
        # a tie at x = 1: strict relations fail there, weak ones hold
        ("<", {"range": {"max": 1.0}}, "fails"),
        ("<=", {"range": {"max": 1.0}}, "holds"),
        (">", {"range": {"max": 1.0}}, "fails"),
        (">=", {"range": {"max": 1.0}}, "holds"),
        # a − b = −0.25 at x = 2: against a margin of −0.25 (a tie) and of −0.5
        (">", {"range": {"min": 2.0, "max": 2.0}, "margin": -0.25}, "fails"),
        (">=", {"range": {"min": 2.0, "max": 2.0}, "margin": -0.25}, "holds"),
        (">", {"range": {"min": 2.0, "max": 2.0}, "margin": -0.5}, "holds"),
        ("<", {"range": {"min": 2.0, "max": 2.0}, "margin": -0.5}, "fails"),
        # ≈ within a tolerance: |d − m| = tolerance exactly holds, a quarter less fails
        ("~=", {"range": {"min": 3.0}, "tolerance": 0.5}, "holds"),
        ("~=", {"range": {"min": 3.0}, "tolerance": 0.25}, "fails"),
        ("~=", {"range": {"min": 3.0}, "margin": 0.25, "tolerance": 0.25}, "holds"),
        # every x against some x: a < b only at x = 2
        ("<", {}, "fails"),
        ("<", {"quantifier": "any"}, "holds"),
        ("<", {"quantifier": "any", "range": {"min": 3.0}}, "fails"),
        # the ends of a range are inside it: [2, 3] holds a > b − 0.25 at both ends
        (">=", {"range": {"min": 2.0, "max": 3.0}, "margin": -0.25}, "holds"),
        (">=", {"range": {"min": 1.5, "max": 3.0}, "margin": -0.25}, "holds"),
        (">", {"range": {"min": 2.0, "max": 3.0}, "margin": -0.25}, "fails"),
    ],
)
def test_compare_relations_ties_margins_quantifiers_and_ranges(
    relation: str, kw: dict[str, Any], state: str
) -> None:
    assert _state(_compare(relation, **kw), PAIR) == state


@pytest.mark.parametrize(
    ("kw", "state"),
    [
        # a/b at x = 3 is 1.25: against 1.25 (a tie) and 1
        ({"measure": "ratio", "range": {"min": 3.0}, "margin": 1.25, "relation": ">"}, "fails"),
        ({"measure": "ratio", "range": {"min": 3.0}, "margin": 1.25, "relation": ">="}, "holds"),
        ({"measure": "ratio", "range": {"min": 3.0}, "margin": 1.0, "relation": ">"}, "holds"),
        # the difference at x = 3 is 0.5, not the ratio: > 1 fails as a difference
        ({"range": {"min": 3.0}, "margin": 1.0, "relation": ">"}, "fails"),
    ],
)
def test_compare_by_ratio_is_not_by_difference(kw: dict[str, Any], state: str) -> None:
    relation = kw.pop("relation")
    assert _state(_compare(relation, **kw), PAIR) == state


SERIES = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [1.0, 2.0, 2.0, 1.75]})


@pytest.mark.parametrize(
    ("kw", "state"),
    [
        # a tie (2 → 2) between x = 2 and 3: strictly increasing fails, non-strictly holds
        ({"direction": "increasing", "strict": True, "range": {"max": 3.0}}, "fails"),
        ({"direction": "increasing", "range": {"max": 3.0}}, "holds"),
        ({"direction": "increasing", "strict": False, "range": {"max": 3.0}}, "holds"),
        # a drop of 0.25 at the end: within a slack of 0.25 (a tie), not of 0.125
        ({"direction": "increasing", "slack": 0.25}, "holds"),
        ({"direction": "increasing", "slack": 0.125}, "fails"),
        ({"direction": "increasing"}, "fails"),
        # the direction: the tail 2 → 2 → 1.75 is non-increasing, not strictly decreasing
        ({"direction": "decreasing", "range": {"min": 2.0}}, "holds"),
        ({"direction": "decreasing", "strict": True, "range": {"min": 2.0}}, "fails"),
        ({"direction": "decreasing", "strict": True, "range": {"min": 3.0}}, "holds"),
        ({"direction": "increasing", "range": {"min": 3.0}}, "fails"),
    ],
)
def test_monotone_ties_slack_and_direction(kw: dict[str, Any], state: str) -> None:
    raw = {"kind": "monotone", "x": "x", "series": {"y": "y"}, **kw}
    assert _state(raw, SERIES) == state


@pytest.mark.parametrize(
    ("kw", "state"),
    [
        # last − first = 0.75: a tie at 0.75
        ({"relation": ">", "margin": 0.75}, "fails"),
        ({"relation": ">=", "margin": 0.75}, "holds"),
        ({"relation": "<=", "margin": 0.75}, "holds"),
        ({"relation": "<", "margin": 0.75}, "fails"),
        # last / first = 1.75 (not first / last)
        ({"relation": ">", "margin": 1.5, "measure": "ratio"}, "holds"),
        ({"relation": "<", "margin": 1.0, "measure": "ratio"}, "fails"),
    ],
)
def test_trend_is_last_against_first(kw: dict[str, Any], state: str) -> None:
    raw = {"kind": "trend", "x": "x", "series": {"y": "y"}, **kw}
    assert _state(raw, SERIES) == state


@pytest.mark.parametrize(
    ("low", "high", "state"),
    [
        # a − b: 0 at x = 1 (a tie, neither < 0 nor > 0), 0.5 at x = 3
        ("<", ">", "fails"),
        (">", ">", "fails"),
    ],
)
def test_crossover_needs_a_sign_at_each_end(low: str, high: str, state: str) -> None:
    raw = {
        "kind": "crossover",
        "x": "x",
        "lhs": {"where": {"s": "a"}, "y": "y"},
        "rhs": {"where": {"s": "b"}, "y": "y"},
        "low": low,
        "high": high,
    }
    assert _state(raw, PAIR) == state
    shifted = {**raw, "range": {"min": 2.0}}  # −0.25 at x = 2, 0.5 at x = 3
    assert _state(shifted, PAIR) == ("holds" if (low, high) == ("<", ">") else "fails")


@pytest.mark.parametrize(
    ("lhs", "relation", "rhs", "state"),
    [
        ({"reduce": "max"}, ">", {"value": 2.5}, "fails"),  # max of a = 2.5: a tie
        ({"reduce": "max"}, ">=", {"value": 2.5}, "holds"),
        ({"reduce": "min"}, "<", {"value": 1.0}, "fails"),
        ({"reduce": "min"}, "<=", {"value": 1.0}, "holds"),
        ({"reduce": "first"}, "~=", {"value": 1.0}, "holds"),
        ({"reduce": "last"}, "~=", {"value": 1.0}, "fails"),
        ({"reduce": "increase"}, ">=", {"value": 1.5}, "holds"),  # 2.5 − 1
        ({"reduce": "increase"}, ">", {"value": 1.5}, "fails"),
        ({"reduce": "argmax"}, "~=", {"value": 3.0}, "holds"),
        ({"reduce": "argmin"}, "~=", {"value": 3.0}, "fails"),
        ({"reduce": "max_over_min"}, ">=", {"value": 2.5}, "holds"),
        ({"reduce": "last_over_first"}, ">", {"value": 2.5}, "fails"),
    ],
)
def test_stat_reducers_and_relations(
    lhs: dict[str, Any], relation: str, rhs: dict[str, Any], state: str
) -> None:
    raw: dict[str, Any] = {
        "kind": "stat",
        "x": "x",
        "lhs": {"where": {"s": "a"}, "y": "y", **lhs},
        "rhs": rhs,
        "relation": relation,
    }
    if relation == "~=":
        raw["tolerance"] = 0.0
    assert _state(raw, PAIR) == state


def test_a_relative_gap_is_taken_against_the_first_series() -> None:
    """(a − b)/a with a the first of ``of``: at x = 3, (2.5 − 2)/2.5 = 0.2, not (2.5 − 2)/2."""
    raw = {
        "kind": "stat",
        "x": "x",
        "lhs": {
            "combine": "relative_gap",
            "of": [{"where": {"s": "a"}, "y": "y"}, {"where": {"s": "b"}, "y": "y"}],
            "reduce": "last",
        },
        "rhs": {"value": 0.2},
        "relation": "~=",
        "tolerance": 1e-12,
    }
    assert _state(raw, PAIR) == "holds"
    raw["rhs"] = {"value": 0.25}
    assert _state(raw, PAIR) == "fails"


def test_every_group_and_every_part_must_hold() -> None:
    """for_each over s: a is increasing, b is not strictly; all_of of a holding and a failing
    part fails; of two holding parts holds."""
    mono = {"kind": "monotone", "x": "x", "for_each": ["s"], "series": {"y": "y"}}
    assert _state({**mono, "direction": "increasing"}, PAIR) == "holds"
    assert _state({**mono, "direction": "increasing", "strict": True}, PAIR) == "fails"
    ok = _compare("<=", range={"max": 1.0})
    bad = _compare("<", range={"max": 1.0})
    assert _state({"kind": "all_of", "parts": [ok, ok]}, PAIR) == "holds"
    assert _state({"kind": "all_of", "parts": [ok, bad]}, PAIR) == "fails"


def test_the_decisive_numbers_name_the_failing_or_the_tightest_point() -> None:
    fr = FigureResults("pb", "f", table=PAIR.assign(profile="smoke"), meta={"profile": "smoke"})
    figs = {("pb", "f"): fr}
    out = evaluate_check(_check(_compare("<=")), figs, "pb", "f", {"f": "smoke"})
    assert out.state == "fails" and out.numbers == "fails at 1 of 3 x; x=3: 2.5 vs 2"
    out = evaluate_check(_check(_compare(">=", margin=-0.25)), figs, "pb", "f", {"f": "smoke"})
    assert out.state == "holds" and "tightest x=2: 1.75 vs 2" in out.numbers


def test_a_range_end_admits_rounding_only() -> None:
    """x read back from a CSV may differ from the range end by rounding (1e-12 relative): a point
    1e-13 below ``min`` is inside, one 1e-9 below is not."""
    table = pd.DataFrame({"x": [2.0 - 1e-13, 2.0 - 1e-9, 3.0], "y": [1.0, 5.0, 2.0]})
    raw = {"kind": "monotone", "x": "x", "series": {"y": "y"}, "direction": "increasing"}
    assert _state({**raw, "range": {"min": 2.0}}, table) == "holds"
    assert _state({**raw, "range": {"min": 2.0 - 1e-9}}, table) == "fails"
