"""split_lines: one line per combination of column values, first axis outermost, sorted by x."""

from __future__ import annotations

import pandas as pd

from privrepro.plotting.lines import split_lines


def test_order_empty_combinations_and_sorting() -> None:
    t = pd.DataFrame(
        {
            "mode": ["a", "a", "b", "b", "a"],
            "series": ["s", "s", "s", "t", "t"],
            "x": [3, 1, 2, 1, 5],
            "y": [0.3, 0.1, 0.2, 0.4, 0.5],
        }
    )
    out = split_lines(t, "x", mode=["b", "a", "c"], series=["t", "s"])
    # the order of the axes' values, first axis outermost (as a nested comprehension); the
    # combination ("c", ·) has no rows and is left out
    assert [k for k, _ in out] == [("b", "t"), ("b", "s"), ("a", "t"), ("a", "s")]
    assert list(out[3][1]["x"]) == [1, 3]  # ("a", "s") sorted by x
    assert list(out[3][1]["y"]) == [0.1, 0.3]
    assert [(k, list(sub["x"])) for k, sub in split_lines(t, "x")] == [((), [1, 1, 2, 3, 5])]
    assert split_lines(t.iloc[:0], "x") == []
