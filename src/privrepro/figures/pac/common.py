"""What the pac recipes share: the data pools (their parameters and labels) and the noise table
of Examples 2 and 3 (one row per noise method, :func:`privrepro.pac.private.noise_rows`)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from privrepro.data.provenance import DataSource, registry_source
from privrepro.figures.api import Figure, MemoryEstimate, UnitContext, param
from privrepro.figures.pac._memory import POOL_LOADING, algorithm1_bytes, largest, pool_shape
from privrepro.pac import plots
from privrepro.pac.pools import Pool, load_pool
from privrepro.pac.private import noise_rows

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["DATA_LABELS", "STAND_IN_POOLS", "CifarPoolParams", "Draws", "NoiseTable", "pool_param"]

DATA_LABELS = {
    "cifar10": "CIFAR-10 (60,000 × 3,072)",
    "mnist": "MNIST",
    "digits": "scikit-learn digits (stand-in)",
    "synthetic_images": "synthetic images (stand-in)",
}

STAND_IN_POOLS = ["digits", "synthetic_images"]
"""The pools that stand in for a paper's dataset (:func:`privrepro.pac.pools.load_pool`)."""


def pool_param(paper: str, doc: str) -> Any:
    """The ``dataset`` parameter of a pool: the paper's ``paper`` dataset or a stand-in."""
    return param(paper, choices=[paper, *STAND_IN_POOLS], doc=doc)


@dataclass
class CifarPoolParams:
    """The pool U of Examples 2 and 3: CIFAR-10's images in the paper."""

    dataset: str = pool_param("cifar10", "the pool U (smoke: digits stands in for CIFAR-10)")
    splits: str = param(
        "all", choices=["all", "train", "test"], doc="all = train + test (CIFAR-10's 60,000 images)"
    )


P = TypeVar("P", bound="DataclassInstance")


class Draws(NamedTuple):
    """What a noise table needs of its mechanism (:func:`privrepro.pac.private.noise_rows`)."""

    samples: NDArray[np.float64]  # m outputs M(X^(k)), m x d
    spectrum: NDArray[np.float64]  # the eigenvalues of the exact output covariance
    r: float  # the radius of the output ball (Algorithm 1's eigengap test)
    baseline: tuple[str, float]  # the DP mechanism's name and E||B||


class NoiseTable(Figure[P]):
    """The noise of one mechanism on a data pool: PAC (Algorithm 1, Theorem 3) against DP.

    One unit holds every parameter; a subclass names its ``mechanism`` (samples, exact spectrum,
    output radius and DP baseline on the pool) and the ``paper`` values, printed for CIFAR-10.
    """

    kind = "table"
    paper: ClassVar[dict[str, float]]

    @abstractmethod
    def mechanism(self, pool: Pool, unit: dict[str, Any], ctx: UnitContext) -> Draws:
        """The mechanism's samples on ``pool``, its exact spectrum, radius and DP baseline."""

    def data_source(self, unit: Mapping[str, Any], data_dir: Path) -> DataSource:
        return registry_source(unit["dataset"], data_dir, "CIFAR-10")

    def units(self, params: P) -> list[dict[str, Any]]:
        return [asdict(params)]

    def estimate_memory(self, params: P) -> MemoryEstimate:
        """The float32 pool and its d × d Gram matrix, and Algorithm 1 on m samples."""
        dataset, m = params.dataset, params.m  # type: ignore[attr-defined]
        n, d = pool_shape(dataset, params.splits)  # type: ignore[attr-defined]
        return largest(
            {
                "params.dataset": (POOL_LOADING + 4 * n * d + 8 * 3 * d * d, dataset),
                "params.m": (algorithm1_bytes(m, d), m),
            },
            f"pool {n} × {d} × 4 B + d² × 24 B + Algorithm 1 on m × d",
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        pool = load_pool(unit["dataset"], ctx.data_dir, unit["splits"], seed=ctx.seed)
        samples, spectrum, r, baseline = self.mechanism(pool, unit, ctx)
        v, beta, c = unit["v"], unit["beta"], unit["c"]
        out = pd.DataFrame(noise_rows(samples, v, beta, c, r, spectrum, baseline))
        # the paper's numbers are for CIFAR-10; a stand-in pool gets none
        out["paper_value"] = (
            out["method"].map(self.paper) if unit["dataset"] == "cifar10" else np.nan
        )
        out.insert(0, "pool", f"{DATA_LABELS[unit['dataset']]}: {pool.size} × {pool.dim}")
        out["v"] = v
        return out

    def summarize(self, table: pd.DataFrame, params: Any) -> pd.DataFrame:
        exact = table.loc[table["method"] == "pac_theorem3_exact", "dp_over_pac"].iloc[0]
        return pd.DataFrame(
            [
                {"metric": f"noise_norm_{r['method']}", "value": r["noise_norm"]}
                for _, r in table.iterrows()
            ]
            + [{"metric": "dp_over_pac_theorem3_exact", "value": float(exact)}]
        )

    def mark_paper_values(self, fig: Any, values: Any, table: pd.DataFrame, params: Any) -> None:
        """Nothing more to mark: the plot draws the paper's printed values itself, as crosses,
        from the table's ``paper_value`` column."""

    def plot(self, table: pd.DataFrame, params: Any) -> Any:
        return plots.noise_norms(table, self.title)
