"""Configuration: Hydra structured-config schemas and the validation of every value."""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.config.validation import ConfigError as ConfigError
    from privrepro.config.validation import build_params as build_params
    from privrepro.config.validation import param as param
    from privrepro.config.validation import validate as validate

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
