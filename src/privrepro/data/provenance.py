"""What a number was computed on: the real dataset, or a named stand-in for it.

Every results table carries a ``data`` column with :attr:`DataSource.label`, so a value computed
on a stand-in (embedded digits for MNIST or CIFAR-10, synthetic features for Split-CIFAR-100,
full-size files written by the rehearsal) is never mistaken for a reproduction: plot titles,
tables and report sections name it, and the scorecard never compares it with a paper value.

A data root written by the rehearsal's stand-in writers holds the marker file
:data:`REHEARSAL_MARKER`; loaders that find it label what they read as a rehearsal stand-in.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

__all__ = [
    "ANALYTIC",
    "REHEARSAL_MARKER",
    "STAND_IN_DATASETS",
    "UNDECLARED",
    "DataSource",
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
        fingerprint: what identifies the files read from a data root
            (:func:`privrepro.data.standin.data_fingerprint`: the release for a dataset whose
            every file is checked against the release's checksums, else a hash of the files or
            of a stand-in marker's listing); ``None`` for data that does not come from a data
            root (formulas, embedded or generated data). It is part of a unit's identity: the
            same unit on other data is another unit. It is not part of :attr:`label`.
    """

    name: str
    stand_in_for: str | None = None
    shaped: str | None = None
    fingerprint: str | None = None

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

    The real dataset (its paper name, :data:`privrepro.data.standin.PAPER_NAMES`), unless the
    dataset's folder under the root (or the root, or a parent) holds :data:`REHEARSAL_MARKER`:
    then the files are the rehearsal's format-real stand-ins and the label says so. Its
    ``fingerprint`` says which files these are (part of a unit's identity). The loaders
    label what they read with the same function (:func:`privrepro.data.standin.data_source_of`),
    so a table's ``data`` column and the loaders' ``data_source`` never disagree.
    """
    from privrepro.data.standin import PAPER_NAMES, data_source_of  # standin imports this module

    if data_dir is None or dataset not in PAPER_NAMES:
        return DataSource(PAPER_NAMES.get(dataset, dataset))
    return data_source_of(data_dir, dataset, identify=True)


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
    from privrepro.data.standin import PAPER_NAMES

    source = read_from(dataset, data_dir)
    name = PAPER_NAMES.get(dataset, dataset)
    if not source.is_stand_in and name != paper_dataset:
        return replace(source, stand_in_for=paper_dataset)
    return source


def is_rehearsal_root(path: str | Path) -> bool:
    """Whether ``path`` or one of its parents holds the rehearsal stand-in marker."""
    p = Path(path).expanduser().resolve()
    return any((q / REHEARSAL_MARKER).is_file() for q in (p, *p.parents))
