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

__all__ = ["ANALYTIC", "REHEARSAL_MARKER", "DataSource", "is_rehearsal_root"]

#: The marker file at a data root (or dataset folder) written by the rehearsal's stand-in writers.
REHEARSAL_MARKER = "PRIVREPRO_REHEARSAL_STAND_IN"


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
        """The value of a table's ``data`` column and the plot title's data clause."""
        if self.stand_in_for is None:
            return self.name
        return f"{self.name} (stand-in for {self.stand_in_for})"


#: The ``data`` of a figure computed from formulas alone (no dataset involved).
ANALYTIC = DataSource("none (analytic)")


def is_rehearsal_root(path: str | Path) -> bool:
    """Whether ``path`` or one of its parents holds the rehearsal stand-in marker."""
    p = Path(path).expanduser().resolve()
    return any((q / REHEARSAL_MARKER).is_file() for q in (p, *p.parents))
