"""One face style for every package (``privrepro.lazy_exports``): a docstring that names its
modules; where it hands names on, one import of each under ``if TYPE_CHECKING:``, written as an
explicit re-export (``from privrepro.x.m import f as f``), and ``__getattr__, __dir__, __all__ =
lazy_exports(__name__, __file__)``, which imports a name's module on first use; never an eager
import of its own modules (which would import every sibling of the module a caller wanted, and
can close a circle)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from privrepro.lazy_exports import face_exports

SRC = Path(__file__).resolve().parents[1] / "src"
FACES = sorted((SRC / "privrepro").rglob("__init__.py"))
LAZY = "__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)"
"""The line that hands a face's names on."""


def _package(path: Path) -> str:
    return ".".join(path.parent.relative_to(SRC).parts)


def _exports(face: Path) -> dict[str, tuple[str, str]]:
    return face_exports(face.read_text(encoding="utf-8"), _package(face))


def _runtime_imports(tree: ast.Module) -> list[str]:
    """The modules a face imports when it is imported (``if TYPE_CHECKING:`` blocks aside)."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            out.append(node.module or "")
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


def test_the_faces_are_found() -> None:
    names = {_package(f) for f in FACES}
    assert {"privrepro.boosting", "privrepro.continual", "privrepro.dp", "privrepro.data"} <= names


def test_face_exports_reads_the_type_checking_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from privrepro.a.eager import e\n"
        "if TYPE_CHECKING:\n"
        "    from privrepro.a.m import f as f\n"
        "    from .n import g as h\n"
        "    import numpy\n"
    )
    assert face_exports(source, "privrepro.a") == {
        "f": ("privrepro.a.m", "f"),
        "h": ("privrepro.a.n", "g"),
    }


@pytest.mark.parametrize("face", FACES, ids=_package)
def test_a_face_has_one_style(face: Path) -> None:
    text = face.read_text(encoding="utf-8")
    tree = ast.parse(text)
    assert ast.get_docstring(tree), f"{face}: a package's face starts with a docstring"
    eager = [
        m
        for m in _runtime_imports(tree)
        if m.startswith("privrepro") and m != "privrepro.lazy_exports"
    ]
    assert not eager, f"{face}: imports {eager} eagerly; hand them on through lazy_exports"
    assigned = [ast.unparse(node.targets[0]) for node in tree.body if isinstance(node, ast.Assign)]
    if not _exports(face):
        assert not any("__all__" in a for a in assigned), f"{face}: __all__ without exports"
        return
    assert LAZY in text.splitlines(), f"{face}: hands its names on with `{LAZY}`"
    assert not [a for a in assigned if a == "__all__"], f"{face}: __all__ is lazy_exports'"
    checking = [
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    ]
    for node in (stmt for block in checking for stmt in block.body):
        assert isinstance(node, ast.ImportFrom), f"{face}:{node.lineno}: only imports here"
        # the explicit re-export: what mypy and pyright read as the package's public name
        for alias in node.names:
            assert alias.asname == alias.name, (
                f"{face}:{node.lineno}: write `{alias.name} as {alias.name}`"
            )


@pytest.mark.parametrize("face", [f for f in FACES if _exports(f)], ids=_package)
def test_every_name_a_face_hands_on_resolves(face: Path) -> None:
    """The lazy exports are the objects of the modules named (a misspelt module or name fails)."""
    package = importlib.import_module(_package(face))
    exports = _exports(face)
    assert package.__all__ == sorted(exports)
    for name, (module, attribute) in exports.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), attribute)
    with pytest.raises(AttributeError, match="no attribute"):
        _ = package.no_such_name
    assert set(package.__all__) <= set(dir(package))


def _modules() -> list[str]:
    """Every module of the library, from its files (command-line ``__main__`` modules aside)."""
    names = []
    for path in sorted((SRC / "privrepro").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] != "__main__":
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_module_of_the_library_imports() -> None:
    """On the versions installed (``make test-lowest``: the lowest ``pyproject.toml`` declares),
    every module imports: a name a dependency lacks at its lower bound fails here, by name."""
    names = _modules()
    assert "privrepro.boosting._roots" in names and "privrepro.dp" in names
    failed = {}
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as error:  # every failing module is listed, not only the first
            failed[name] = f"{type(error).__name__}: {error}"
    assert not failed, "modules that do not import:\n  " + "\n  ".join(
        f"{k}: {v}" for k, v in failed.items()
    )
