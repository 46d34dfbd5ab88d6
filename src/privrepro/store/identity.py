"""A run unit's identity: its ``config.json`` and the hash that names its folder.

The identity is a JSON object of one form (``paper``, ``figure``, ``profile``, ``seed``,
``recipe``, ``version``, ``unit`` and, for a unit that read a data root, ``data``) naming the
figure it belongs to. **A unit belongs to one figure**: :func:`identity_problem` says why an
identity is not one of ``paper/figure``, so a unit copied into another figure's folder fails
verification. The folder's name is :func:`unit_hash` of the identity.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "IDENTITY_KEYS",
    "UNIT_ID",
    "canonical_json",
    "identity_problem",
    "is_of",
    "unit_belongs",
    "unit_hash",
]

UNIT_ID = re.compile(r"^[0-9a-f]{16}$")


def canonical_json(obj: Any) -> str:
    """Stable JSON: sorted keys, no whitespace, floats in their shortest round-trip form."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str, allow_nan=True)


def unit_hash(identity: Mapping[str, Any]) -> str:
    """The 16-hex-digit hash that names a unit's folder."""
    return hashlib.sha256(canonical_json(identity).encode()).hexdigest()[:16]


#: The keys of a unit's identity (``config.json``) and the JSON type each must have; ``data``
#: (the fingerprint of the data a unit read from a data root) is present only for such units.
IDENTITY_KEYS: dict[str, type] = {
    "paper": str,
    "figure": str,
    "profile": str,
    "seed": int,
    "recipe": str,
    "version": int,
    "unit": dict,
}
_OPTIONAL_KEYS: dict[str, type] = {"data": str}


def is_of(value: Any, kind: type) -> bool:
    """Whether ``value`` has the JSON type ``kind`` (a ``bool`` is not an ``int``)."""
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def identity_problem(identity: Any, paper: str, figure: str) -> str | None:
    """Why ``identity`` (a parsed ``config.json``) is not a unit of ``paper/figure``, or ``None``.

    The identity must be a JSON object with exactly the keys of :data:`IDENTITY_KEYS` (plus, for a
    unit that read a data root, ``data``), each of its type (``seed`` and ``version`` integers,
    ``seed >= 0``, ``unit`` an object), and name ``paper`` and ``figure``.
    """
    if not isinstance(identity, dict):
        return f"config.json holds a {type(identity).__name__}, not an object"
    allowed = {**IDENTITY_KEYS, **_OPTIONAL_KEYS}
    unknown = sorted(set(identity) - set(allowed))
    if unknown:
        return f"config.json has the unknown key {unknown[0]!r}"
    for key, kind in allowed.items():
        if key not in identity and key in _OPTIONAL_KEYS:
            continue
        value = identity.get(key)
        if not is_of(value, kind):
            return f"config.json: {key} = {json.dumps(value, default=str)[:60]} is not a {kind.__name__}"
    if identity["seed"] < 0:
        return f"config.json: seed = {identity['seed']} is negative"
    if (identity["paper"], identity["figure"]) != (paper, figure):
        return (
            f"config.json names the figure {identity['paper']}/{identity['figure']}, "
            f"not {paper}/{figure}"
        )
    return None


def unit_belongs(identity: Any, paper: str, figure: str) -> bool:
    """Whether ``identity`` is a well-formed unit identity of ``paper/figure``."""
    return identity_problem(identity, paper, figure) is None
