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
    from privrepro.data.arrays import ArrayDataset as ArrayDataset
    from privrepro.data.registry import DamagedDataError as DamagedDataError
    from privrepro.data.registry import DatasetInfo as DatasetInfo
    from privrepro.data.registry import MissingDataError as MissingDataError
    from privrepro.data.registry import data_root as data_root
    from privrepro.data.registry import dataset_names as dataset_names
    from privrepro.data.registry import get_dataset as get_dataset
    from privrepro.data.registry import load_dataset as load_dataset
    from privrepro.data.registry import register_dataset as register_dataset

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
