"""Configuration: Hydra structured-config schemas and the validation of every value."""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.config.validation import ConfigError, build_params, param, validate

_EXPORTS = {
    "privrepro.config.validation": ("ConfigError", "build_params", "param", "validate"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["ConfigError", "build_params", "param", "validate"]
