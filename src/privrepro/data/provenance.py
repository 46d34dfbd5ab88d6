"""What a number was computed on: the real dataset, or a named stand-in for it.

Every results table carries a ``data`` column with :attr:`DataSource.label`, so a value computed
on a stand-in (embedded digits for MNIST or CIFAR-10, synthetic features for Split-CIFAR-100,
full-size files written by the rehearsal) is never mistaken for a reproduction: plot titles,
tables and report sections name it, and the scorecard never compares it with a paper value.

A data root written by the rehearsal's stand-in writers holds the marker file
:data:`REHEARSAL_MARKER`; loaders that find it label what they read as a rehearsal stand-in.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ANALYTIC",
    "PAPER_NAMES",
    "REHEARSAL_MARKER",
    "REHEARSAL_NAME",
    "STAND_IN_DATASETS",
    "UNDECLARED",
    "DataSource",
    "data_source_of",
    "dataset_folder",
    "folder_source",
    "is_rehearsal_root",
    "is_stand_in_label",
    "read_from",
    "registry_source",
]

#: The marker file at a data root (or dataset folder) written by the rehearsal's stand-in writers.
REHEARSAL_MARKER = "PRIVREPRO_REHEARSAL_STAND_IN"

_STAND_IN = "stand-in for"


@dataclass(frozen=True)
class DataSource:
    """The data a unit ran on.

    Attributes:
        name: what was read, in words ("CIFAR-10", "scikit-learn digits 8×8", "synthetic
            features").
        stand_in_for: the paper's dataset when ``name`` is a stand-in for it, else ``None``.
        shaped: when a stand-in was shaped to sit in the paper's regime (say, synthetic features
            whose non-private accuracy lands near the paper's), how, in words a reader cannot
            miss; else ``None``.
    """

    name: str
    stand_in_for: str | None = None
    shaped: str | None = None

    @property
    def is_stand_in(self) -> bool:
        """Whether the numbers come from anything but the paper's own data."""
        return self.stand_in_for is not None

    @property
    def label(self) -> str:
        """The value of a table's ``data`` column and the plot title's data clause.

        ``"CIFAR-10"``; ``"scikit-learn digits 8×8 (stand-in for CIFAR-10)"``; a shaped stand-in
        says how: ``"synthetic features (stand-in for X; shaped so that ...)"``.
        """
        if self.stand_in_for is None:
            return self.name
        shaped = f"; {self.shaped}" if self.shaped else ""
        return f"{self.name} ({_STAND_IN} {self.stand_in_for}{shaped})"


#: The ``data`` of a figure computed from formulas alone (no dataset involved).
ANALYTIC = DataSource("none (analytic)")

#: The ``data`` of a recipe that declares none: the report never compares its numbers.
UNDECLARED = DataSource("not declared by the recipe")


def is_stand_in_label(label: object) -> bool:
    """Whether a ``data`` column value names a stand-in (see :attr:`DataSource.label`)."""
    return isinstance(label, str) and f"({_STAND_IN} " in label


def read_from(dataset: str, data_dir: str | Path | None) -> DataSource:
    """What a loader reading the paper's ``dataset`` from the data root ``data_dir`` gets.

    The real dataset (its paper name, :data:`PAPER_NAMES`), unless the dataset's folder under
    the root (or the root, or a parent) holds :data:`REHEARSAL_MARKER`: then the files are the
    rehearsal's format-real stand-ins and the label says so. The loaders label what they read
    with the same function (:func:`data_source_of`), so a table's ``data`` column and the
    loaders' ``data_source`` never disagree.
    """
    if data_dir is None or dataset not in PAPER_NAMES:
        return DataSource(PAPER_NAMES.get(dataset, dataset))
    return data_source_of(data_dir, dataset)


#: Registry datasets that only ever stand in for a paper's dataset (embedded or generated).
STAND_IN_DATASETS = {
    "digits": "scikit-learn digits 8×8 (embedded)",
    "synthetic_images": "seeded synthetic images",
}


def registry_source(dataset: str, data_dir: str | Path | None, paper_dataset: str) -> DataSource:
    """The data a unit reading registry ``dataset`` gets, where the paper used ``paper_dataset``.

    An embedded or generated dataset (:data:`STAND_IN_DATASETS`) is a stand-in for the paper's;
    a paper dataset read from the data root goes through :func:`read_from`.
    """
    if dataset in STAND_IN_DATASETS:
        return DataSource(STAND_IN_DATASETS[dataset], stand_in_for=paper_dataset)
    source = read_from(dataset, data_dir)
    name = PAPER_NAMES.get(dataset, dataset)
    if not source.is_stand_in and name != paper_dataset:
        return DataSource(name, stand_in_for=paper_dataset)
    return source


def is_rehearsal_root(path: str | Path) -> bool:
    """Whether ``path`` or one of its parents holds the rehearsal stand-in marker."""
    p = Path(path).expanduser().resolve()
    return any((q / REHEARSAL_MARKER).is_file() for q in (p, *p.parents))


#: ``DataSource.name`` of everything read from a marked folder.
REHEARSAL_NAME = "rehearsal stand-in"

#: The paper's name of each dataset the loaders read, by the project's dataset key.
PAPER_NAMES: dict[str, str] = {
    "cifar10": "CIFAR-10",
    "cifar100": "CIFAR-100",
    "mnist": "MNIST",
    "fashionmnist": "Fashion-MNIST",
    "svhn": "SVHN",
    "notmnist": "notMNIST",
    "imagenet-r": "ImageNet-R",
    "5-datasets": "5-Datasets",
    "adult": "UCI Adult",
}

# Where each dataset's files live under the data root (torchvision's and the archives' layouts).
_FOLDERS: dict[str, tuple[str, ...]] = {
    "cifar10": ("cifar-10-batches-py",),
    "cifar100": ("cifar-100-python",),
    "mnist": ("MNIST",),
    "fashionmnist": ("FashionMNIST",),
    "svhn": ("",),  # torchvision's SVHN reads <root>/{train,test}_32x32.mat
    "notmnist": ("notMNIST_small",),
    "imagenet-r": ("imagenet-r",),
    "adult": ("adult",),
    "5-datasets": ("MNIST", "", "notMNIST_small", "FashionMNIST", "cifar-10-batches-py"),
}


def dataset_folder(root: str | Path, dataset: str) -> Path:
    """The folder under ``root`` that holds ``dataset``'s files (the root itself for SVHN)."""
    if dataset not in _FOLDERS:
        raise ValueError(f"dataset = {dataset!r}: must be one of {sorted(_FOLDERS)}")
    return Path(root) / _FOLDERS[dataset][0]


def data_source_of(root: str | Path, dataset: str) -> DataSource:
    """What a loader reads for ``dataset`` under ``root``: the real dataset, or the rehearsal
    stand-in for it when its folder or a parent holds the rehearsal marker.

    ``dataset`` is a key of :data:`PAPER_NAMES` (``5-datasets`` is a stand-in as soon as one
    member's folder is marked).
    """
    if dataset not in _FOLDERS:
        raise ValueError(f"dataset = {dataset!r}: must be one of {sorted(_FOLDERS)}")
    marked = any(is_rehearsal_root(Path(root) / sub) for sub in _FOLDERS[dataset])
    paper = PAPER_NAMES[dataset]
    return DataSource(REHEARSAL_NAME, stand_in_for=paper) if marked else DataSource(paper)


def folder_source(folder: str | Path, name: str) -> DataSource:
    """The :class:`DataSource` of files read from ``folder`` (any folder): ``name`` (its paper
    name when :data:`PAPER_NAMES` knows it), or the rehearsal stand-in for it when ``folder`` or
    a parent holds the marker."""
    paper = PAPER_NAMES.get(name, name)
    if is_rehearsal_root(folder):
        return DataSource(REHEARSAL_NAME, stand_in_for=paper)
    return DataSource(paper)
