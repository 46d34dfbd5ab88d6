"""Datasets: a registry of loaders over one data root (``PRIVREPRO_DATA`` or ``paths.data_dir``).

Modules: :mod:`.registry` (the loaders by name, the data root, :class:`MissingDataError`),
:mod:`.arrays` (:class:`ArrayDataset`), the loaders (:mod:`.vision`, :mod:`.adult`,
:mod:`.digits`, :mod:`.synthetic`), :mod:`.provenance` (what a number was computed on: the
paper's dataset or a named stand-in) and :mod:`.standin_checks` (files accepted by a stand-in
marker's checksums).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.data.arrays import ArrayDataset
    from privrepro.data.registry import (
        DamagedDataError,
        DatasetInfo,
        MissingDataError,
        data_root,
        dataset_names,
        get_dataset,
        load_dataset,
        register_dataset,
    )

_EXPORTS = {
    "privrepro.data.arrays": ("ArrayDataset",),
    "privrepro.data.registry": (
        "DamagedDataError",
        "DatasetInfo",
        "MissingDataError",
        "data_root",
        "dataset_names",
        "get_dataset",
        "load_dataset",
        "register_dataset",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "ArrayDataset",
    "DamagedDataError",
    "DatasetInfo",
    "MissingDataError",
    "data_root",
    "dataset_names",
    "get_dataset",
    "load_dataset",
    "register_dataset",
]
