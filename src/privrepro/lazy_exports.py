"""How a package's face hands on its entry points: lazily, on first use (PEP 562).

Every public package of ``privrepro`` re-exports its entry points the same way: its
``__init__.py`` holds a docstring that names its modules, one import of each name it hands on
under ``if TYPE_CHECKING:``, written as an explicit re-export (``from privrepro.x.m import f as
f``: what mypy and pyright read as the package's public name), and one line that calls
:func:`lazy_exports` (more in ``docs/modules.md``).
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["face_exports", "lazy_exports"]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def face_exports(source: str, package: str) -> dict[str, tuple[str, str]]:
    """The names a face hands on, read from its source.

    Args:
        source: the text of the package's ``__init__.py``.
        package: the package's dotted name (relative imports are resolved against it).

    Returns:
        name → ``(module, attribute)`` for each ``from module import attribute as name`` under
        a top-level ``if TYPE_CHECKING:``, in the order written.
    """
    out: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for stmt in node.body:
            if not isinstance(stmt, ast.ImportFrom):
                continue
            module = stmt.module or ""
            if stmt.level:
                base = package.split(".")[: len(package.split(".")) - stmt.level + 1]
                module = ".".join([*base, *([module] if module else [])])
            for alias in stmt.names:
                out[alias.asname or alias.name] = (module, alias.name)
    return out


def lazy_exports(
    package: str, face: str
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """The ``__getattr__``, ``__dir__`` and ``__all__`` of the package ``package``.

    Args:
        package: the package's dotted name (its ``__name__``).
        face: the path of its ``__init__.py`` (its ``__file__``), whose ``if TYPE_CHECKING:``
            imports name what it hands on.

    Returns:
        ``(__getattr__, __dir__, __all__)``: the first imports a name's module on first use and
        keeps the name in the package's namespace; the second lists the namespace and the
        exports; the third holds the exported names, sorted.
    """
    where = face_exports(Path(face).read_text(encoding="utf-8"), package)

    def __getattr__(name: str) -> Any:
        found = where.get(name)
        if found is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = found
        value = getattr(importlib.import_module(module), attribute)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__, sorted(where)
