"""The layering of the library, as its imports show it (README, "Layout": the parts in layers).

Most rules are import-linter contracts in ``pyproject.toml`` (``[tool.importlinter]``), which
``lint-imports`` checks here: dependencies point one way, from the top down (``report``, the
rehearsal, ``runner``, ``figures``, the four paper packages, the libraries, the ground floor; no
part imports one above it); the four paper packages never import each other; Hydra and omegaconf
are read in ``privrepro.runner`` only, and not by its publish step (``privrepro.runner.publish``,
which ``make tables`` and ``make plots`` run without a config); the library reaches the rehearsal only through the loops
a caller passes in (:mod:`privrepro.loops`, which imports nothing of ``privrepro``), and the
report reads only ``privrepro.rehearsal.summary``.

What a contract cannot state is checked below, from the source read with ``ast`` (nothing is
imported; every import counts: at the top of a module or inside a function, ``import a.b``,
``from a import b`` and relative forms):

1. ``dp/`` holds no paper's own rules: no module of ``dp/`` is named for one paper (``ip_…``,
   ``pb_…``, ``cl_…``, ``pac_…``; a paper's rules live in its package).
2. No recipe imports another recipe: a recipe is a module that an experiment config names
   (``- /recipe: module:Class`` in the defaults list of ``conf/experiment/<paper>/<figure>.yaml``);
   what several recipes share lives in a module of ``privrepro.figures.<paper>`` that no config
   names.
3. No circle: the modules' imports (at the top of a module or inside a function) form no loop,
   except a loop made only of imports under ``if TYPE_CHECKING:`` (never run). (import-linter's
   ``acyclic_siblings`` contract forbids loops between packages, a stricter rule.)
4. No module is imported across packages by a private name: ``privrepro.x._y`` is imported only
   from inside ``privrepro.x`` (a contract names modules, not a pattern of names).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PAPERS = ("inference", "boosting", "continual", "pac")
"""The paper packages: ip, pb, cl, pac."""
SHORT_NAMES = ("ip", "pb", "cl", "pac")
"""The papers' short names, in the same order."""


def lint_imports(root: Path, *, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the contracts of ``pyproject.toml``, run in ``root`` (where the package
    is imported from, before the installed one, when ``pythonpath`` is given); no cache written."""
    env = None if pythonpath is None else {**os.environ, "PYTHONPATH": str(pythonpath)}
    command = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    return subprocess.run(
        [sys.executable, "-c", command, str(ROOT / "pyproject.toml"), "--no-cache", "--no-logo"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_contracts_are_kept() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout, result.stdout


def test_each_contract_catches_a_break(tmp_path: Path) -> None:
    """A copy of the package with one break of each contract (imports inside a function count)."""
    package = tmp_path / "privrepro"
    shutil.copytree(SRC / "privrepro", package, ignore=shutil.ignore_patterns("__pycache__"))
    breaks = {
        "dp/__init__.py": "def _up() -> None:\n    import privrepro.boosting\n",
        "boosting/__init__.py": "def _across() -> None:\n    import privrepro.pac\n",
        "loops.py": "from privrepro import config\n",
        "figures/__init__.py": "import omegaconf\n",
        "report/__init__.py": "def _deep() -> None:\n    import privrepro.rehearsal.standins\n",
        "runner/publish.py": "def _compose() -> None:\n    import hydra\n",
    }
    for path, code in breaks.items():
        with (package / path).open("a", encoding="utf-8") as f:
            f.write("\n" + code)
    (package / "unplaced.py").write_text('"""A module on no floor."""\n', encoding="utf-8")
    result = lint_imports(tmp_path, pythonpath=tmp_path)
    out = " ".join(result.stdout.split())
    assert result.returncode == 1 and "0 kept, 4 broken" in out, out
    for expected in (
        "privrepro.dp is not allowed to import privrepro.boosting",
        "privrepro.boosting is not allowed to import privrepro.pac",
        "privrepro.loops is not allowed to import privrepro.config",
        "not listed as layers: - privrepro.unplaced",
        "privrepro.figures -> omegaconf",
        "privrepro.report -> privrepro.rehearsal.standins",
        "privrepro.runner.publish is not allowed to import hydra",
    ):
        assert expected in out, f"{expected!r} not in: {out}"


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


def _check(violations: list[Import], rule: str) -> None:
    assert not violations, f"{rule}:\n  " + "\n  ".join(sorted({str(v) for v in violations}))


def test_the_source_is_read() -> None:
    # a check that could fail: the walk finds the parts and the imports between them
    parts = {_part(i.importer) for i in ALL_IMPORTS}
    assert set(PAPERS) <= parts and {"dp", "figures", "runner"} <= parts
    assert any(_part(i.target) == "dp" and _part(i.importer) == "boosting" for i in ALL_IMPORTS)


def test_dp_holds_no_paper_rules() -> None:
    named = [
        f.relative_to(SRC).as_posix()
        for f in (SRC / "privrepro" / "dp").glob("*.py")
        if f.stem.split("_")[0] in SHORT_NAMES
    ]
    assert not named, f"paper-specific modules in the shared DP core: {named}"


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


def test_the_library_loops_are_passed_loops() -> None:
    # a check that could fail: the paper packages' loops do take privrepro.loops
    users = {_part(i.importer) for i in ALL_IMPORTS if i.target == "privrepro.loops"}
    assert {"inference", "boosting", "continual", "pac", "training", "dp", "figures"} <= users


# -- circles ------------------------------------------------------------------------------------

MODULES = {i.importer for i in ALL_IMPORTS} | {
    _module_name(f) for f in (SRC / "privrepro").rglob("*.py")
}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_edges(path: Path) -> Iterator[tuple[str, str, int, bool]]:
    """``(importer, imported module, line, under TYPE_CHECKING)`` for each import of ``path``:
    ``from pkg import mod`` imports the module ``pkg.mod`` (not the package's face); any other
    name imports the module that holds it."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, checking: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit_one(stmt, True)
                for stmt in child.orelse:
                    visit_one(stmt, checking)
            else:
                visit_one(child, checking)

    def visit_one(node: ast.AST, checking: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in MODULES:
                    target = target.rpartition(".")[0]
                if target:
                    found.append((target, node.lineno, checking))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                if f"{module}.{alias.name}" in MODULES:
                    found.append((f"{module}.{alias.name}", node.lineno, checking))
                elif module in MODULES:
                    found.append((module, node.lineno, checking))
        visit(node, checking)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    for target, line, checking in found:
        if target != name:
            yield name, target, line, checking


EDGES = [e for f in sorted((SRC / "privrepro").rglob("*.py")) for e in _module_edges(f)]


def circles(edges: list[tuple[str, str, int, bool]]) -> list[list[str]]:
    """The loops of the import graph run at import or call time (Tarjan's strongly connected
    components of more than one module; imports under ``if TYPE_CHECKING:`` left out)."""
    graph: dict[str, set[str]] = {}
    for a, b, _, checking in edges:
        if not checking:
            graph.setdefault(a, set()).add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:  # iterative would be longer; the graph is ~200 modules deep
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return out


def test_circles_are_found() -> None:
    # a check that could fail: a loop of two runtime imports is a circle, one of type-checking
    # imports is not, and the real graph has edges
    loop = [("a", "b", 1, False), ("b", "a", 2, False)]
    assert circles(loop) == [["a", "b"]]
    assert circles([("a", "b", 1, False), ("b", "a", 2, True)]) == []
    assert ("privrepro.runner.run", "privrepro.runner.plan", 0) in {(*e[:2], 0) for e in EDGES}


def test_no_circle_of_imports() -> None:
    found = circles(EDGES)
    where = [
        " -> ".join(c)
        + ": "
        + ", ".join(
            f"{a}:{line} imports {b}" for a, b, line, t in EDGES if a in c and b in c and not t
        )
        for c in found
    ]
    assert not found, "modules that import each other (a circle):\n  " + "\n  ".join(where)


def test_no_private_module_is_imported_across_packages() -> None:
    def private_package(target: str) -> str | None:
        """The package that holds the private module ``target`` names, if it names one."""
        bits = target.split(".")
        for k, bit in enumerate(bits):
            if (
                bit.startswith("_")
                and not bit.startswith("__")
                and ".".join(bits[: k + 1]) in (MODULES)
            ):
                return ".".join(bits[:k])
        return None

    bad = []
    for i in ALL_IMPORTS:
        holder = private_package(i.target)
        if holder is not None and not (i.importer == holder or i.importer.startswith(holder + ".")):
            bad.append(i)
    _check(bad, "a private module imported from outside its package")
