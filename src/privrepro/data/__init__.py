"""Datasets: a registry of loaders over one data root (``PRIVREPRO_DATA`` or ``paths.data_dir``)."""

from privrepro.data.arrays import ArrayDataset
from privrepro.data.registry import (
    MissingDataError,
    data_root,
    dataset_names,
    get_dataset,
    load_dataset,
    register_dataset,
)

__all__ = [
    "ArrayDataset",
    "MissingDataError",
    "data_root",
    "dataset_names",
    "get_dataset",
    "load_dataset",
    "register_dataset",
]
