"""A settings dataclass as the plain dict that enters an identity (a run unit's hash, a study's
or a cache's key)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

__all__ = ["identity"]


def identity(settings: Any) -> dict[str, Any]:
    """Every field of the dataclass ``settings``, except those named in its class attribute
    ``IDENTITY_DEFAULTS`` while they hold the value given there: fields added after units,
    studies and caches were stored, which keep their hashes while the new field is at its
    default (the computation they describe is unchanged)."""
    left_out: Mapping[str, Any] = getattr(settings, "IDENTITY_DEFAULTS", {})
    return {k: v for k, v in asdict(settings).items() if not (k in left_out and v == left_out[k])}
