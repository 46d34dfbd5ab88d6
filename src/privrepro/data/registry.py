"""The dataset registry: a name → a loader, and one data root for all of them.

A loader is a function registered with :func:`register_dataset`; it takes the data root first,
then keyword options (``split``, ``download``, ...). Every module of :mod:`privrepro.data` is
imported on the first lookup, so a new dataset is one new module with one decorator.

The data root is ``PRIVREPRO_DATA`` when set, else the ``paths.data_dir`` config key (``./data``).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DatasetInfo",
    "MissingDataError",
    "data_root",
    "dataset_names",
    "get_dataset",
    "load_dataset",
    "register_dataset",
]


class MissingDataError(FileNotFoundError):
    """A dataset file that is not where it is expected, with how to obtain it."""

    def __init__(self, dataset: str, path: Path, how_to_obtain: str) -> None:
        self.dataset, self.path, self.how_to_obtain = dataset, Path(path), how_to_obtain
        super().__init__(
            f"dataset '{dataset}': expected file {self.path} is missing. {how_to_obtain} "
            f"(data root: set PRIVREPRO_DATA or paths.data_dir=...)"
        )


@dataclass(frozen=True)
class DatasetInfo:
    """A registered dataset: its loader and a line about where its files come from."""

    name: str
    loader: Callable[..., Any]
    description: str
    source: str


_REGISTRY: dict[str, DatasetInfo] = {}
_DISCOVERED = False


def register_dataset(
    name: str, description: str = "", source: str = ""
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``loader(root, **options)`` under ``name``."""

    def wrap(loader: Callable[..., Any]) -> Callable[..., Any]:
        if name in _REGISTRY and _REGISTRY[name].loader is not loader:
            existing = _REGISTRY[name].loader
            if (existing.__module__, existing.__qualname__) != (
                loader.__module__,
                loader.__qualname__,
            ):
                raise ValueError(f"dataset '{name}' is registered twice")
        _REGISTRY[name] = DatasetInfo(
            name, loader, description or (loader.__doc__ or "").strip().split("\n")[0], source
        )
        return loader

    return wrap


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    import privrepro.data as package

    for module in pkgutil.iter_modules(package.__path__):
        if not module.name.startswith("_") and module.name != "registry":
            importlib.import_module(f"privrepro.data.{module.name}")
    _DISCOVERED = True


def dataset_names() -> list[str]:
    """All registered dataset names, sorted."""
    _discover()
    return sorted(_REGISTRY)


def get_dataset(name: str) -> DatasetInfo:
    """The registered dataset ``name``; an unknown name lists the known ones."""
    _discover()
    if name not in _REGISTRY:
        from privrepro.config.validation import ConfigError

        raise ConfigError("dataset.name", name, f"must be one of {sorted(_REGISTRY)}")
    return _REGISTRY[name]


def data_root(configured: str | Path | None = None) -> Path:
    """The data root: ``PRIVREPRO_DATA``, else ``configured``, else ``./data``."""
    env = os.environ.get("PRIVREPRO_DATA")
    return Path(env or configured or "data").expanduser()


def load_dataset(name: str, root: str | Path | None = None, **options: Any) -> Any:
    """Load dataset ``name`` from the data root with the loader's options."""
    return get_dataset(name).loader(data_root(root), **options)
