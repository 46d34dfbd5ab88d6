"""How a package's face hands on its entry points: lazily, on first use (PEP 562).

Every public package of ``privrepro`` re-exports its entry points the same way: its
``__init__.py`` holds a docstring that names its modules, ``__all__``, the imports under
``if TYPE_CHECKING:`` (for type checkers and readers) and the same names in ``_EXPORTS``
(module → names), handed to :func:`lazy_exports`. Importing one module of a package therefore
never imports its siblings (the cosine classifier does not import torch), and no import of a
face can close a circle.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the package ``package`` (its ``__name__``).

    Args:
        package: the package's dotted name.
        exports: module → the names the face hands on from it.

    Returns:
        ``(__getattr__, __dir__)``: the first imports a name's module on first use and keeps the
        name in the package's namespace; the second lists the namespace and the exports.
    """
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return __getattr__, __dir__
