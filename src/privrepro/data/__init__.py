"""Datasets: a registry of loaders over one data root (``PRIVREPRO_DATA`` or ``paths.data_dir``)."""

from privrepro.data import registry
from privrepro.data.arrays import ArrayDataset
from privrepro.data.registry import *  # noqa: F403 (the registry's public names, below)

__all__ = ["ArrayDataset"]
__all__ += registry.__all__
