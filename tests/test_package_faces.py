"""One face style for every package (``privrepro.lazy_exports``): a docstring that names its
modules; where it hands names on, ``__all__`` and the same names in ``_EXPORTS``, imported on
first use; never an eager import of its own modules (which would import every sibling of the
module a caller wanted, and can close a circle)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
FACES = sorted((SRC / "privrepro").rglob("__init__.py"))


def _package(path: Path) -> str:
    return ".".join(path.parent.relative_to(SRC).parts)


def _runtime_imports(tree: ast.Module) -> list[str]:
    """The modules a face imports when it is imported (``if TYPE_CHECKING:`` blocks aside)."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            out.append(node.module or "")
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


def _exports(tree: ast.Module) -> tuple[list[str] | None, dict[str, list[str]] | None]:
    all_names: list[str] | None = None
    exports: dict[str, list[str]] | None = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id == "__all__":
                all_names = list(ast.literal_eval(node.value))
            elif node.targets[0].id == "_EXPORTS":
                exports = {k: list(v) for k, v in ast.literal_eval(node.value).items()}
    return all_names, exports


def test_the_faces_are_found() -> None:
    names = {_package(f) for f in FACES}
    assert {"privrepro.boosting", "privrepro.continual", "privrepro.dp", "privrepro.data"} <= names


@pytest.mark.parametrize("face", FACES, ids=_package)
def test_a_face_has_one_style(face: Path) -> None:
    tree = ast.parse(face.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), f"{face}: a package's face starts with a docstring"
    eager = [
        m
        for m in _runtime_imports(tree)
        if m.startswith("privrepro") and m != "privrepro.lazy_exports"
    ]
    assert not eager, f"{face}: imports {eager} eagerly; hand them on through lazy_exports"
    all_names, exports = _exports(tree)
    if exports is None:
        assert all_names is None, f"{face}: __all__ without _EXPORTS"
        return
    handed = sorted(n for names in exports.values() for n in names)
    assert sorted(all_names or []) == handed, f"{face}: __all__ and _EXPORTS differ"


@pytest.mark.parametrize(
    "face", [f for f in FACES if _exports(ast.parse(f.read_text()))[1]], ids=_package
)
def test_every_name_a_face_hands_on_resolves(face: Path) -> None:
    """The lazy exports are the objects of the modules named (a misspelt module or name fails)."""
    package = importlib.import_module(_package(face))
    _, exports = _exports(ast.parse(face.read_text(encoding="utf-8")))
    assert exports
    for module, names in exports.items():
        source = importlib.import_module(module)
        for name in names:
            assert getattr(package, name) is getattr(source, name)
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
