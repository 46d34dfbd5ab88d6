"""Peak-memory predictions of the pac figures' units (checked before any compute).

Each counts the arrays a unit holds at once, in bytes; the parameter that makes the largest term
grow is the one an error names. The pools' shapes are those of the datasets (or stand-ins)
:func:`privrepro.pac.pools.load_pool` reads.
"""

from __future__ import annotations

from privrepro.figures.api import MemoryEstimate

__all__ = ["POOL_LOADING", "algorithm1_bytes", "largest", "pool_shape"]

# (rows per split, dimension) of each pool; "all" is the sum of the splits.
_POOLS = {
    "cifar10": ({"train": 50_000, "test": 10_000}, 3 * 32 * 32),
    "mnist": ({"train": 60_000, "test": 10_000}, 28 * 28),
    "digits": ({"all": 1_797, "train": 1_797, "test": 1_797}, 8 * 8),
    "synthetic_images": ({"train": 2_000, "test": 2_000}, 3 * 8 * 8),
}


def pool_shape(dataset: str, splits: str) -> tuple[int, int]:
    """``(N, d)`` of the pool ``dataset`` with ``splits`` (``all``, ``train`` or ``test``)."""
    sizes, d = _POOLS[dataset]
    if splits in sizes:
        return sizes[splits], d
    return sum(v for k, v in sizes.items() if k != "all"), d


# Loading a pool (decoding, float conversion) holds about this much beside the pool itself.
POOL_LOADING = 64 * 2**20


def algorithm1_bytes(m: int, d: int) -> int:
    """Algorithm 1 on ``m x d`` float64 samples: the samples (and their float32 draw), their
    centred and scaled copies, LAPACK's copy and work space, and the thin SVD's factors
    (``k = min(m, d)``). Measured within 15% (``benchmarks/memory_estimates.py``)."""
    k = min(m, d)
    return 8 * (6 * m * d + k * (m + d) + 2 * k * k)


def largest(terms: dict[str, tuple[int, object]], detail: str) -> MemoryEstimate:
    """The estimate from named terms ``{key: (bytes, value)}``: their sum, named by the largest."""
    key = max(terms, key=lambda k: terms[k][0])
    return MemoryEstimate(sum(b for b, _ in terms.values()), key, terms[key][1], detail)
