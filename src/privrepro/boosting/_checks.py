"""Argument checks of the boosting package: one :class:`~privrepro.config.ConfigError` naming the
key, the value and what is allowed, before any compute."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from privrepro.config import ConfigError
from privrepro.dp.checks import check_range

__all__ = ["check_choice", "check_range"]


def check_choice(key: str, value: Any, options: Iterable[Any]) -> None:
    """``ConfigError`` unless ``value`` is one of ``options``."""
    allowed = list(options)
    if value not in allowed:
        raise ConfigError(key, value, f"must be one of {allowed}")
