"""Splitting a tidy results table into the lines of a plot."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["split_lines"]


def split_lines(
    table: pd.DataFrame, x: str, **axes: Sequence[Any]
) -> list[tuple[tuple[Any, ...], pd.DataFrame]]:
    """One line per combination of the ``axes`` values (column → the values to draw, first axis
    outermost, as :func:`privrepro.figures.api.grid_units`): ``(values, rows sorted by x)``.
    Combinations with no row are left out.

    >>> t = pd.DataFrame({"mode": ["a", "a", "b"], "x": [2, 1, 1], "y": [0.2, 0.1, 0.3]})
    >>> [(k, list(sub["x"])) for k, sub in split_lines(t, "x", mode=["b", "a", "c"])]
    [(('b',), [1]), (('a',), [1, 2])]
    """
    if not axes:
        return [((), table.sort_values(x))] if len(table) else []
    out = []
    for combo in itertools.product(*axes.values()):
        mask = np.logical_and.reduce([table[c] == v for c, v in zip(axes, combo, strict=True)])
        sub = table[mask].sort_values(x)
        if len(sub):
            out.append((combo, sub))
    return out
