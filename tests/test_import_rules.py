"""The layering of the library, as its imports show it (README, "Layout": the parts in layers).

Read from the source with ``ast`` (nothing is imported), every import counts: at the top of a
module or inside a function, ``import a.b``, ``from a import b`` (``b`` a module or a name) and
relative forms. The rules:

1. The four paper packages never import each other (what two share moves to ``dp/``,
   ``data/``, ``models/``, ``training/``).
2. ``dp/`` imports no paper package, and nothing above the libraries; and it holds no paper's own
   rules: no module of ``dp/`` is named for one paper (``ip_…``, ``pb_…``, ``cl_…``, ``pac_…``;
   a paper's rules live in its package).
3. Hydra and omegaconf are read at the edge only: no module outside ``privrepro.runner``
   imports them (recipes receive plain parameter dataclasses; library functions plain arguments).
4. No recipe imports another recipe: a recipe is a module that an experiment config names
   (``- /recipe: module:Class`` in the defaults list of ``conf/experiment/<paper>/<figure>.yaml``); what several recipes
   share lives in a module of ``privrepro.figures.<paper>`` that no config names.
5. Dependencies point one way: the libraries never import ``figures``, ``report`` or
   ``runner``; ``figures`` never imports ``report`` or ``runner``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PAPERS = ("inference", "boosting", "continual", "pac")
"""The paper packages: ip, pb, cl, pac."""
SHORT_NAMES = ("ip", "pb", "cl", "pac")
"""The papers' short names, in the same order."""
EDGE = ("runner",)
"""The parts that may read Hydra / omegaconf."""
ABOVE_LIBRARIES = ("figures", "report", "runner", "rehearsal")
"""The parts above the libraries, in order: recipes, the report, the command line."""


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    target: str  # dotted name imported (a module, or a module's attribute)
    line: int

    def __str__(self) -> str:
        path = self.importer.replace(".", "/")
        return f"{path}.py:{self.line} imports {self.target}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> Iterator[Import]:
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield Import(name, module, node.lineno)
            for alias in node.names:  # `from pkg import module` imports pkg.module
                yield Import(name, f"{module}.{alias.name}", node.lineno)


ALL_IMPORTS = [i for f in sorted((SRC / "privrepro").rglob("*.py")) for i in _imports(f)]


def _part(dotted: str) -> str | None:
    """The part of the library (``dp``, ``boosting``, ``figures``, …) a dotted name is in."""
    bits = dotted.split(".")
    return bits[1] if bits[0] == "privrepro" and len(bits) > 1 else None


def _top(dotted: str) -> str:
    return dotted.split(".")[0]


def _check(violations: list[Import], rule: str) -> None:
    assert not violations, f"{rule}:\n  " + "\n  ".join(sorted({str(v) for v in violations}))


def test_the_source_is_read() -> None:
    # a check that could fail: the walk finds the parts and the imports between them
    parts = {_part(i.importer) for i in ALL_IMPORTS}
    assert set(PAPERS) <= parts and {"dp", "figures", "runner"} <= parts
    assert any(_part(i.target) == "dp" and _part(i.importer) == "boosting" for i in ALL_IMPORTS)


def test_papers_never_import_each_other() -> None:
    bad = [
        i
        for i in ALL_IMPORTS
        if _part(i.importer) in PAPERS
        and _part(i.target) in PAPERS
        and _part(i.target) != _part(i.importer)
    ]
    _check(bad, "a paper package imports another paper package")


def test_dp_imports_no_paper() -> None:
    forbidden = set(PAPERS) | set(ABOVE_LIBRARIES)
    bad = [i for i in ALL_IMPORTS if _part(i.importer) == "dp" and _part(i.target) in forbidden]
    _check(bad, "privrepro.dp imports a paper package (or a part above the libraries)")


def test_dp_holds_no_paper_rules() -> None:
    named = [
        f.relative_to(SRC).as_posix()
        for f in (SRC / "privrepro" / "dp").glob("*.py")
        if f.stem.split("_")[0] in SHORT_NAMES
    ]
    assert not named, f"paper-specific modules in the shared DP core: {named}"


def test_hydra_is_read_at_the_edge_only() -> None:
    bad = [
        i
        for i in ALL_IMPORTS
        if _top(i.target) in ("hydra", "omegaconf") and _part(i.importer) not in EDGE
    ]
    _check(bad, f"a module outside {list(EDGE)} imports Hydra or omegaconf")


def _recipe_modules() -> set[str]:
    """The modules the experiment configs name as recipes (``- /recipe: module:Class``)."""
    return {
        m.group(1)
        for f in (ROOT / "conf" / "experiment").rglob("*.yaml")
        for m in re.finditer(r"^\s*-?\s*/?recipe:\s*([\w.]+):", f.read_text(encoding="utf-8"), re.M)
    }


RECIPES = _recipe_modules()


def test_recipes_are_found() -> None:
    assert "privrepro.figures.pb.fig2" in RECIPES
    assert "privrepro.figures.pb._common" not in RECIPES  # shared by the pb recipes, no recipe
    assert all(_part(r) == "figures" for r in RECIPES)
    modules = {i.importer for i in ALL_IMPORTS}
    assert RECIPES <= modules  # every recipe named is a module of the library


def test_no_recipe_imports_another_recipe() -> None:
    bad = [
        i
        for i in ALL_IMPORTS
        if i.importer in RECIPES and i.target in RECIPES and i.target != i.importer
    ]
    _check(bad, "a recipe imports another recipe")


@pytest.mark.parametrize(
    ("importers", "forbidden"),
    [
        ("the libraries", set(ABOVE_LIBRARIES)),
        ("figures", {"report", "runner"}),
    ],
)
def test_dependencies_point_one_way(importers: str, forbidden: set[str]) -> None:
    def is_importer(part: str | None) -> bool:
        if importers == "figures":
            return part == "figures"
        return part is not None and part not in ABOVE_LIBRARIES

    bad = [
        i for i in ALL_IMPORTS if is_importer(_part(i.importer)) and _part(i.target) in forbidden
    ]
    _check(bad, f"{importers} import a part above them ({sorted(forbidden)})")
