"""Figure table schemas: each kind of problem is reported, and every entry names a real figure."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from privrepro.figures.table_schema import TableSchema, check_table, schema_files
from privrepro.runner.catalog import list_experiments

SCHEMA = TableSchema.from_mapping(
    {
        "columns": {"T": "int", "epsilon": "float", "mechanism": "str", "tuned": "bool"},
        "not_null": ["epsilon"],
        "range": {"epsilon": [0, None]},
        "values": {"mechanism": ["gaussian", "pb"]},
        "optional": ["tuned"],
    },
    "test",
)


def _table(**changes: object) -> pd.DataFrame:
    table = pd.DataFrame(
        {
            "paper": "pb",
            "figure": "fig6",
            "profile": "tiny",
            "seed": 0,
            "unit_id": "u",
            "data": "none (analytic)",
            "T": [1, 10],
            "epsilon": [0.5, 2.0],
            "mechanism": ["gaussian", "pb"],
            "extra": ["columns the schema does not list", "are allowed"],
        }
    )
    for name, values in changes.items():
        table[name] = values
    return table


def test_a_conforming_table_has_no_problem() -> None:
    assert check_table(_table(), SCHEMA) == []
    assert check_table(_table(tuned=[True, False]), SCHEMA) == []
    assert check_table(_table(T=[np.nan, np.nan]), SCHEMA) == []  # all-NaN passes any type


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"T": [1.5, 2.0]}, "'T' (int) holds non-integral values"),
        ({"epsilon": ["a", "b"]}, "values that are not numbers"),
        ({"epsilon": [1.0, np.nan]}, "'epsilon' has 1 NaN"),
        ({"epsilon": [-1.0, 1.0]}, "'epsilon' has 1 values outside [0, None]"),
        ({"mechanism": ["gaussian", "laplace"]}, "'mechanism' has values ['laplace']"),
        ({"tuned": ["yes", "no"]}, "not booleans"),
        ({"data": ["x", None]}, "'data' has 1 NaN"),
        ({"mechanism": [1, 2]}, "not strings"),
    ],
)
def test_each_problem_is_named(changes: dict[str, object], words: str) -> None:
    problems = check_table(_table(**changes), SCHEMA)
    assert any(words in p for p in problems), problems


def test_a_missing_column_is_named_unless_optional() -> None:
    assert check_table(_table().drop(columns=["T"]), SCHEMA) == ["column 'T' is missing"]
    assert check_table(_table().drop(columns=["unit_id"]), SCHEMA) == [
        "column 'unit_id' is missing"
    ]


def test_malformed_schemas_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown key"):
        TableSchema.from_mapping({"columns": {}, "colums": {}}, "x")
    with pytest.raises(ValueError, match="must be one of"):
        TableSchema.from_mapping({"columns": {"a": "number"}}, "x")
    with pytest.raises(ValueError, match="not in columns"):
        TableSchema.from_mapping({"columns": {"a": "int"}, "not_null": ["b"]}, "x")


def test_every_schema_entry_names_a_figure_of_the_catalog() -> None:
    figures = {(e.paper, e.figure) for e in list_experiments()}
    files = schema_files()
    assert {f.stem for f in files} == {"pb", "cl", "ip", "pac"}
    for path in files:
        for figure, entry in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items():
            assert (path.stem, str(figure)) in figures, f"{path.name}: {figure} is not a figure"
            TableSchema.from_mapping(entry, f"{path.name}: {figure}")
