"""The contract between a figure's recipe and the runner.

A figure (or table) of a paper is a :class:`Figure` subclass with three pure steps (more in
``docs/modules.md``).
"""

from __future__ import annotations

import itertools
import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, get_args, get_origin

import numpy as np
import pandas as pd

from privrepro.config.validation import ConfigError, param
from privrepro.data.provenance import UNDECLARED, DataSource
from privrepro.loops import PLAIN, Loops
from privrepro.metrics import MetricLogger
from privrepro.seeding import numpy_stream, torch_stream

__all__ = [
    "MAX_UNITS",
    "Figure",
    "MemoryEstimate",
    "PaperValue",
    "UnitContext",
    "check_unit_count",
    "grid_units",
    "param",
]

#: The most run units one figure may have: the largest figure of the paper profile has 180
#: (cl Fig. 5 PEFT), so this leaves room for fifty times its repeats while the plan of the
#: whole list (its identities and hashes) stays a few seconds and a few hundred MB.
MAX_UNITS = 10_000

P = TypeVar("P")


@dataclass
class UnitContext:
    """What a unit's computation may use: seeded streams, device, paths, log, loops.

    Attributes:
        seed: the run's root seed (``seed=`` on the command line).
        unit_id: the hash of the unit's config; mixed into every random stream, so two units of a
            sweep never share noise, and one unit gets the same noise whatever else runs.
        profile: ``"smoke"``, ``"paper"`` or ``"tiny"``.
        device: a torch device string, resolved (``"cpu"`` or ``"cuda"``).
        data_dir: the data root (``PRIVREPRO_DATA`` or ``paths.data_dir``).
        cache_dir: a folder shared by all units of all figures for expensive reusable artefacts
            (feature caches, trained base models), keyed by the caller.
        log: the unit's logger; its records go to the unit's ``log.txt``.
        loops: how the unit's long loops run (:mod:`privrepro.loops`): plain iteration by
            default; the runner passes progress bars.
        metrics: ``log(name, value, step)`` for the unit's per-step metrics
            (:mod:`privrepro.metrics`; the ``tracking`` switch), or ``None``.
    """

    seed: int
    unit_id: str
    profile: str
    device: str
    data_dir: Path
    cache_dir: Path
    log: logging.Logger = field(default_factory=lambda: logging.getLogger("privrepro.unit"))
    loops: Loops = PLAIN
    metrics: MetricLogger | None = None

    def rng(self, stream: str) -> np.random.Generator:
        """An independent numpy generator for the named stream (``"noise"``, ``"data"``, ...)."""
        return numpy_stream(self.seed, self.unit_id, stream)

    def torch_generator(self, stream: str, device: str | None = None) -> Any:
        """An independent ``torch.Generator`` for the named stream, on ``device`` (default: ours)."""
        return torch_stream(self.seed, self.unit_id, stream, device=device or self.device)


@dataclass(frozen=True)
class MemoryEstimate:
    """The predicted peak memory of a figure's largest run unit, and what drives it.

    Attributes:
        bytes: the predicted peak of host memory, in bytes.
        key: the parameter that makes it grow (``params.pool_size``): the one an error names.
        value: that parameter's value.
        detail: how the estimate is made, in a few words (``N × d × 8 B``).
    """

    bytes: int
    key: str
    value: Any
    detail: str = ""


@dataclass(frozen=True)
class PaperValue:
    """A value the paper printed for a figure, to be marked on its plot.

    Attributes:
        id: the reference's id (the report's).
        metric: the summary row's ``metric`` it matches (:meth:`Figure.summarize`).
        where: the summary columns and values selecting that row (``{"epsilon": 1.0}``).
        value: the number the paper printed.
        quantity: what it is, in words; source: where the paper printed it.
    """

    id: str
    metric: str
    where: Mapping[str, Any]
    value: float
    quantity: str = ""
    source: str = ""

    def matches(self, row: Mapping[str, Any]) -> bool:
        """``row`` (a summary row) is the one this value is about."""
        if row.get("metric") != self.metric:
            return False
        for key, want in self.where.items():
            got = row.get(key)
            if isinstance(want, float) and isinstance(got, (int, float)):
                if abs(float(got) - want) > 1e-9 * max(1.0, abs(want)):
                    return False
            elif str(got) != str(want):
                return False
        return True


class Figure(ABC, Generic[P]):
    """One figure or table of a paper: units → rows → plot. Subclasses set the class attributes.

    Attributes:
        params_type: the dataclass of this figure's parameters (fields declared with :func:`param`):
            the ``P`` of ``class MyFigure(Figure[P])`` (or of a generic subclass of ``Figure``,
            ``NoiseTable[P]``), set from it when the class does not set it itself.
        title: a one-line description, shown by ``make help`` and in the report.
        kind: ``"figure"`` or ``"table"``.
        data: what every unit runs on, when it does not depend on the unit
            (:data:`~privrepro.data.provenance.ANALYTIC` for formulas alone); otherwise override
            :meth:`data_source`.
    """

    params_type: ClassVar[type]
    title: ClassVar[str] = ""
    kind: ClassVar[str] = "figure"
    data: ClassVar[DataSource | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "params_type" not in cls.__dict__:
            for base in cls.__dict__.get("__orig_bases__", ()):
                origin, args = get_origin(base), get_args(base)
                if isinstance(origin, type) and issubclass(origin, Figure) and args:
                    if isinstance(args[0], type):  # not a TypeVar: a generic base stays generic
                        cls.params_type = args[0]

    @abstractmethod
    def units(self, params: P) -> list[dict[str, Any]]:
        """The run units of this figure under ``params``: JSON-serialisable dicts."""

    @abstractmethod
    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        """The tidy rows of one unit. Must depend only on ``unit`` and ``ctx``'s seeded streams."""

    @abstractmethod
    def plot(self, table: pd.DataFrame, params: P) -> Any:
        """A ``matplotlib.figure.Figure`` drawn from the gathered table alone."""

    def data_source(self, unit: Mapping[str, Any], data_dir: Path) -> DataSource:
        """The data ``unit`` runs on when read from the data root ``data_dir``.

        The runner writes its :attr:`~privrepro.data.provenance.DataSource.label` into the
        table's ``data`` column. The default returns the class attribute ``data``, or
        :data:`~privrepro.data.provenance.UNDECLARED` (never compared with a paper value).
        """
        return UNDECLARED if self.data is None else self.data

    def summarize(self, table: pd.DataFrame, params: P) -> pd.DataFrame | None:
        """Named scalars for the report: columns ``metric``, ``value`` and any config columns."""
        return None

    def mark_paper_values(
        self, fig: Any, values: Sequence[PaperValue], table: pd.DataFrame, params: P
    ) -> None:
        """Mark the paper's printed ``values`` on ``fig`` (drawn by :meth:`plot` from
        ``table``). The default lists them under the axes, one short line each; a recipe that
        knows where a value sits on its axes overrides this to draw it there."""
        if not values:
            return
        summary = self.summarize(table, params)
        rows: list[dict[str, Any]] = (
            []
            if summary is None
            else [{str(k): v for k, v in r.items()} for r in summary.to_dict("records")]
        )
        shown = []
        first = values if len(values) <= 4 else values[:3]
        for v in first:
            ours = [r["value"] for r in rows if v.matches(r)]
            here = f" (here {float(ours[0]):.4g})" if len(ours) == 1 else ""
            shown.append(f"paper, {v.source}: {v.quantity} = {v.value:g}{here}")
        if len(values) > len(first):
            shown.append(f"… and {len(values) - len(first)} more paper values (REPORT.md)")
        fig.text(0.01, -0.01, "\n".join(shown), ha="left", va="top", fontsize=7, color="0.2")

    def estimate_memory(self, params: P) -> MemoryEstimate | None:
        """The predicted peak memory of the largest unit under ``params`` (``None``: small)."""
        return None

    def estimate_device_memory(
        self, unit: Mapping[str, Any], budget: int | None = None
    ) -> MemoryEstimate | None:
        """The predicted peak memory of ``unit`` on the device it computes on (a GPU's memory,
        or the host's on a CPU); ``None``: small. With ``budget`` (bytes) and a peak above it,
        ``detail`` names the settings under which the unit would fit."""
        return None


def grid_units(fixed: Mapping[str, Any], **axes: Sequence[Any]) -> list[dict[str, Any]]:
    """One run unit per point of the grid ``axes``, each also holding the ``fixed`` entries.

    The first axis varies slowest, as in ``[... for a in A for b in B]``; ``fixed`` entries are
    copied into every unit. With no axes the result is the single unit ``dict(fixed)``.

    The number of units is the product of the axes' lengths, checked against :data:`MAX_UNITS`
    before a single unit is made (:func:`check_unit_count`): ``repeat=range(10**9)`` is one
    :class:`~privrepro.config.ConfigError`, not a list that fills the memory.

    >>> grid_units({"delta": 1e-5}, dataset=["a", "b"], repeat=range(2))[1]
    {'delta': 1e-05, 'dataset': 'a', 'repeat': 1}
    """
    names = list(axes)
    check_unit_count({n: len(axes[n]) for n in names})
    return [
        {**fixed, **dict(zip(names, point, strict=True))}
        for point in itertools.product(*(axes[n] for n in names))
    ]


def check_unit_count(axes: Mapping[str, int], extra: int = 0) -> int:
    """The number of run units of a grid with these axis lengths (plus ``extra`` units made
    apart from it), computed without making them; a one-line
    :class:`~privrepro.config.ConfigError` above :data:`MAX_UNITS`, naming the axes and the
    longest one (a figure's ``repeats`` make its ``repeat`` axis, and so on).

    >>> check_unit_count({"epsilon": 3, "repeat": 5})
    15
    """
    count = math.prod(axes.values()) + extra
    if count > MAX_UNITS:
        grid = " × ".join(f"{n} {k}" for k, n in axes.items()) or "1"
        longest = max(axes, key=lambda k: axes[k]) if axes else None
        hint = f"; the longest axis is {longest} ({axes[longest]})" if longest else ""
        more = f" + {extra}" if extra else ""
        raise ConfigError(
            "params",
            f"{count} run units ({grid}{more})",
            f"a figure may have at most {MAX_UNITS} run units{hint}",
        )
    return count
