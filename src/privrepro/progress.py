"""Progress bars for long loops: on a terminal with an ETA, silent in logs and under CI.

One rule for every bar of the project (units, trials, epochs, Monte-Carlo trainings, audit
draws): a bar is shown only when asked for (``progress=true``, the default), when ``CI`` is not
set, and when stderr is a terminal (tqdm's own test, ``disable=None``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

__all__ = ["in_ci", "progress_bar", "progress_disabled"]


def in_ci() -> bool:
    """``CI`` is set to a true value (CI systems set ``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def progress_disabled(enabled: bool | None = None) -> bool | None:
    """tqdm's ``disable`` argument: ``True`` when switched off or under CI, else ``None`` (tqdm
    then shows the bar only on a terminal)."""
    if enabled is False or in_ci():
        return True
    return None


def progress_bar(
    iterable: Iterable[Any] | None = None,
    *,
    desc: str,
    total: float | None = None,
    enabled: bool | None = None,
    unit: str = "it",
    **kwargs: Any,
) -> Any:
    """A ``tqdm`` bar (ETA included) following :func:`progress_disabled`; it leaves no line
    behind when done, so nested bars (units › trials › epochs) stay readable."""
    from tqdm.auto import tqdm

    kwargs.setdefault("leave", False)
    kwargs.setdefault("dynamic_ncols", True)
    return tqdm(
        iterable, desc=desc, total=total, unit=unit, disable=progress_disabled(enabled), **kwargs
    )
