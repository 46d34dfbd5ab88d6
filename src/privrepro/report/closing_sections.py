"""The report's closing pages: the provenance of every figure and the method."""

from __future__ import annotations

from collections.abc import Mapping

from privrepro.report.document import (
    Block,
    Bullets,
    Heading,
    Para,
    Table,
)
from privrepro.report.figure_section import PROVENANCE_HEADER, provenance_row
from privrepro.report.labels import (
    figure_link,
)
from privrepro.report.reference_records import ReferenceSet
from privrepro.report.results import FigureResults

__all__ = ["method_section", "provenance_section"]


def provenance_section(figures: list[FigureResults]) -> list[Block]:
    ran = [f for f in figures if f.ran]
    blocks: list[Block] = [Heading(2, "Provenance of every figure", "provenance")]
    if not ran:
        return [*blocks, Para("No figure has results yet: run `make figures`.")]
    rows = [[figure_link(f.paper, f.figure), *provenance_row(f)] for f in ran]
    blocks.append(Table(["figure", *PROVENANCE_HEADER], rows))
    versions: dict[str, set[str]] = {}
    for f in ran:
        v = f.meta.get("versions") or {}
        if isinstance(v, Mapping):
            for k, val in v.items():
                versions.setdefault(str(k), set()).add(str(val))
    if versions:
        blocks.append(Para("Library versions recorded with the results:"))
        blocks.append(
            Table(
                ["package", "version"],
                [[k, ", ".join(sorted(v))] for k, v in sorted(versions.items())],
            )
        )
    return blocks


_TERMS = (
    "**Printed** values are numbers or statements in the paper (its text, tables or plots) or "
    "its authors' code; **derived** values are computed by the project from the paper's "
    "formulas. A value is **reproduced** (printed) or **consistent** (derived) when the "
    "difference lies within its stated tolerance. A **claim** is a qualitative statement of the "
    "paper written as a predicate over a figure's table: **reproduced** when it holds under "
    "every computation it is decided by, **contradicted** when one of them (the paper's own "
    "formulas, the harness's exact accounting, a measurement) shows the opposite. **Not "
    "comparable**: made under a profile the entry does not allow (e.g. `smoke`'s reduced "
    "grids), on stand-in data (never compared with a paper), or the rows could not be found; "
    "each says why. **Not run**: the figure has no results yet."
)


def method_section(refs: ReferenceSet) -> list[Block]:
    files = ", ".join(f"`{p.name}`" for p in refs.files) or "none yet"
    return [
        Heading(2, "Method", "method"),
        Para(_TERMS),
        Bullets(
            [
                "The papers' numbers and claims are data: "
                f"`src/privrepro/report/references/<paper>*.yaml` (read: {files}). A value names "
                "its source (section, table or figure, equation) and kind: **printed** (the "
                "paper's text, a table, read off a plot, or the authors' code) or **derived** "
                "(computed by the project from the paper's formulas, with the formula or the "
                "project function that computes it, which the report calls). Each gives the "
                "configuration it belongs to, the profiles under which it is comparable, and a "
                "tolerance with its reason (analytic: tight; Monte Carlo: its standard error; "
                "trained models: the paper's reported spread; read off a plot: the plot's "
                "resolution).",
                "Reproduced values are looked up in `results/<paper>/<figure>.summary.csv` (by "
                "`metric`) or `results/<paper>/<figure>.csv` (by column), rows selected by the "
                "entry's configuration (floats to a relative 1e-9) under the most faithful "
                "profile the entry allows (`paper`, then `smoke`, then `tiny`).",
                "reproduced / consistent ⇔ |reproduced − published| ≤ abs + rel·|published| "
                "(numpy.isclose's rule).",
                "A claim quotes the paper's sentence and gives a predicate over a figure's table "
                "(an ordering of two series over a range, a monotone trend, a crossover, a "
                "statistic compared with another), evaluated by code; it is decided by the "
                "computations it names (the paper's formulas, the harness's exact accounting, "
                "a measurement) and contradicted when any of them shows the opposite.",
                "Every table has a `data` column: the paper's dataset or a named stand-in. A "
                "value or claim on stand-in data is shown, never compared with the paper and "
                "never counted as reproduced.",
                "Errata list where the project found a paper (or its code) wrong or silent, with "
                "the value the harness computed as evidence.",
            ]
        ),
    ]
