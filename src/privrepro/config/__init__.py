"""Configuration: Hydra structured-config schemas and the validation of every value."""

from privrepro.config.validation import ConfigError, build_params, param, validate

__all__ = ["ConfigError", "build_params", "param", "validate"]
