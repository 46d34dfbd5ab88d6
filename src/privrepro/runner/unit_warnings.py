"""Warnings a researcher cannot act on go to the unit's log, not the console.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: third-party packages whose warnings are about their own internals, not the researcher's run
LIBRARY_PACKAGES = ("optuna", "opacus")
#: warnings of other packages that the libraries above cause (the start of the message)
LIBRARY_MESSAGES = (
    "Full backward hook is firing when gradients are computed with respect to module outputs",
)
log = logging.getLogger("privrepro.warnings")


def _package_dirs(packages: tuple[str, ...]) -> tuple[str, ...]:
    dirs: list[str] = []
    for name in packages:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for loc in (spec.submodule_search_locations or []) if spec else []:
            dirs.append(os.path.realpath(loc) + os.sep)
    return tuple(dirs)


def _warn_caller() -> str:
    """The file of the code that called ``warnings.warn`` (the first frame, from here up, that
    is neither this module nor ``warnings``)."""
    import sys

    frame = sys._getframe(1)
    skip = (os.path.realpath(__file__), os.path.realpath(warnings.__file__))
    while frame is not None and os.path.realpath(frame.f_code.co_filename) in skip:
        frame = frame.f_back  # type: ignore[assignment]
    return frame.f_code.co_filename if frame is not None else ""


def is_library_warning(
    category: type[Warning],
    filename: str,
    packages: tuple[str, ...] = LIBRARY_PACKAGES,
    message: str = "",
    caller: str = "",
) -> bool:
    """The warning comes from one of ``packages``: of a category one of them defines, shown at
    or called from one of their files (``filename``, ``caller``), or one of
    :data:`LIBRARY_MESSAGES`."""
    if category.__module__.split(".")[0] in packages:
        return True
    if message.startswith(LIBRARY_MESSAGES):
        return True
    dirs = _package_dirs(packages)
    files = [os.path.realpath(f) for f in (filename, caller) if f]
    return bool(dirs) and any(f.startswith(dirs) for f in files)


@contextmanager
def library_warnings_to_log(packages: tuple[str, ...] = LIBRARY_PACKAGES) -> Iterator[None]:
    """Within the block, warnings of ``packages`` go to the ``privrepro.warnings`` logger only
    (each distinct one once per block); the others are shown as before."""
    seen: set[tuple[str, str, int]] = set()
    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: Any = None,
            line: str | None = None,
        ) -> None:
            if not is_library_warning(category, filename, packages, str(message), _warn_caller()):
                shown(message, category, filename, lineno, file, line)
                return
            key = (str(message), filename, lineno)
            if key not in seen:
                seen.add(key)
                # INFO: the console shows WARNING and above; the unit's log file takes INFO
                log.info("%s: %s (%s:%d)", category.__name__, message, filename, lineno)

        warnings.showwarning = show
        yield
