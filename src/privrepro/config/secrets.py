"""Credentials kept out of everything a run writes.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = ["REDACTED", "has_secret", "redact"]

T = TypeVar("T")

#: what stands in for a credential
REDACTED = "***"

# scheme://user:password@host  (the password runs to the last '@' of the word: a password
# written with a raw '@' or '/' is hidden whole; a later '@' in a path hides more, never less)
# (Hydra's override grammar escapes ':' as '\:' in the overrides it records: read through it)
_USERINFO = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*\\?://[^\s/:@\\]*\\?:)(?P<secret>\S*)@")
# ?password=… &sslpassword=… &token=… in a URL's query (libpq and HTTP conventions)
_QUERY = re.compile(
    r"(?P<head>[?&](?:password|passwd|pwd|sslpassword|token|access_token|api_key|apikey|secret)=)"
    r"(?P<secret>[^&\s#'\"]*)",
    re.IGNORECASE,
)


def _redact_text(text: str) -> str:
    if "://" not in text and "=" not in text:
        return text
    text = _USERINFO.sub(lambda m: f"{m['head']}{REDACTED}@", text)
    return _QUERY.sub(lambda m: f"{m['head']}{REDACTED}", text)


def redact(value: T) -> T:
    """``value`` with every credential in a URL replaced by ``***``: a string, or every string
    of a mapping, list or tuple (keys included), copied; anything else is returned as it is."""
    if isinstance(value, str):
        return _redact_text(value)  # type: ignore[return-value]
    if isinstance(value, Mapping):
        return {redact(k): redact(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [redact(v) for v in value]  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(redact(v) for v in value)  # type: ignore[return-value]
    return value


def has_secret(value: Any) -> bool:
    """Whether ``value`` (a string or a JSON-like value) holds a credential :func:`redact`
    would hide."""
    return redact(value) != value
