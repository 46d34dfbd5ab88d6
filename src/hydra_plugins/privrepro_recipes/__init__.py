"""Hydra config source ``privrepro://``: the config group ``recipe`` made from the recipes.

``recipe/<module>:<Class>`` is the config of that recipe: ``figure.recipe`` and every
parameter's default, read from the recipe's parameter dataclass (the one place defaults are
written; see :mod:`privrepro.runner.recipe_config`). The root config puts this source on the
search path (``hydra.searchpath: [privrepro://recipes]``); an experiment config names its recipe
in its defaults list (``- /recipe: privrepro.figures.pb.fig2:PrivacyVsRegionSize``). Only the
recipe an experiment names is imported, when that experiment is composed.

Hydra finds this module by scanning the ``hydra_plugins`` namespace package and imports every
module there, so it imports nothing of privrepro until a recipe config is loaded.
"""

from __future__ import annotations

import builtins

from hydra.core.object_type import ObjectType
from hydra.errors import ConfigCompositionException
from hydra.plugins.config_source import ConfigLoadError, ConfigResult, ConfigSource
from omegaconf import OmegaConf

GROUP = "recipe"


def _recipe_path(config_path: str) -> str | None:
    """``recipe/pkg.module:Class(.yaml)`` → ``pkg.module:Class``; anything else → None."""
    path = config_path.strip("/")
    if not path.startswith(GROUP + "/"):
        return None
    name = path[len(GROUP) + 1 :]
    if name.endswith(".yaml"):
        name = name[: -len(".yaml")]
    module, _, cls = name.partition(":")
    return name if module and cls and "/" not in name else None


class RecipeConfigSource(ConfigSource):
    """The ``recipe`` config group: one config per importable recipe, made on demand."""

    @staticmethod
    def scheme() -> str:
        return "privrepro"

    def load_config(self, config_path: str) -> ConfigResult:
        path = _recipe_path(config_path)
        if path is None:
            raise ConfigLoadError(f"{self.full_path()} has no config '{config_path}'")
        from privrepro.runner.recipe_config import recipe_node

        try:
            node = recipe_node(path)
        except ValueError as exc:  # ConfigError: not importable, not a Figure subclass
            raise ConfigCompositionException(f"In '{config_path}': {exc}") from exc
        return ConfigResult(
            config=OmegaConf.create(node),
            path=self.full_path(),
            provider="privrepro",
            header={"package": "_global_"},
        )

    def available(self) -> bool:
        return True

    def is_group(self, config_path: str) -> bool:
        return config_path.strip("/") == GROUP

    def is_config(self, config_path: str) -> bool:
        return _recipe_path(config_path) is not None

    def list(self, config_path: str, results_filter: ObjectType | None) -> builtins.list[str]:
        return []  # recipes are named, not listed: importing every one would be slow
