"""The dataset registry: a name → a loader, and one data root for all of them.

A loader is a function registered with :func:`register_dataset`; it takes the data root first,
then keyword options (``split``, ``download``, ...). Every module of :mod:`privrepro.data` is
imported on the first lookup, so a new dataset is one new module with one decorator.

The data root, first found: the folder a caller passes (the runner passes ``paths.data_dir``,
which a command-line ``paths.data_dir=...`` sets and which otherwise resolves to
``PRIVREPRO_DATA`` or ``./data``), then ``PRIVREPRO_DATA``, then ``./data``.
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
    "DamagedDataError",
    "DatasetInfo",
    "MissingDataError",
    "data_root",
    "dataset_names",
    "get_dataset",
    "load_dataset",
    "register_dataset",
]


class MissingDataError(FileNotFoundError):
    """A dataset file that is not where it is expected, with how to obtain it.

    The message names the file, how to obtain it, and what points at the data root: the runner
    sets ``root_from`` (``paths.data_dir`` on the command line, ``PRIVREPRO_DATA``, or the
    default) before reporting it in one line.
    """

    def __init__(self, dataset: str, path: Path, how_to_obtain: str) -> None:
        self.dataset, self.path, self.how_to_obtain = dataset, Path(path), how_to_obtain
        self.root_from: str | None = None
        super().__init__(self._message())

    def _how_where(self) -> tuple[str, str]:
        """How to obtain the file (a sentence) and what set the data root."""
        how = self.how_to_obtain.strip()
        if how and not how.endswith("."):
            how += "."
        return how, f"the data root was set by {self.root_from}; " if self.root_from else ""

    def _message(self) -> str:
        how, where = self._how_where()
        return (
            f"dataset '{self.dataset}': expected file {self.path} is missing. {how} ({where}"
            "point paths.data_dir=... on the command line, or PRIVREPRO_DATA, at the folder "
            "that holds it)"
        )

    def __str__(self) -> str:
        return self._message()


class DamagedDataError(MissingDataError):
    """A dataset file that is present but is not what the release holds: a checksum, size or row
    count that differs, or a file that does not parse as its format.

    Reported like a missing file, in one line: the file, what differs, how to get a good copy
    and what points at the data root.
    """

    def __init__(self, dataset: str, path: Path, problem: str, how_to_obtain: str) -> None:
        self.problem = problem.strip().rstrip(".")
        super().__init__(dataset, path, how_to_obtain)

    def _message(self) -> str:
        how, where = self._how_where()
        return (
            f"dataset '{self.dataset}': the file {self.path} is damaged or not the release's: "
            f"{self.problem}. {how} ({where}point paths.data_dir=... on the command line, or "
            "PRIVREPRO_DATA, at a folder holding a good copy)"
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
    # the modules beside this one (the package's folder, read without importing the package)
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
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
    """The data root: ``configured`` (a command line's choice wins), else ``PRIVREPRO_DATA``,
    else ``./data``."""
    if configured is not None and str(configured) != "":
        return Path(configured).expanduser()
    return Path(os.environ.get("PRIVREPRO_DATA") or "data").expanduser()


def load_dataset(name: str, root: str | Path | None = None, **options: Any) -> Any:
    """Load dataset ``name`` from the data root with the loader's options."""
    return get_dataset(name).loader(data_root(root), **options)
