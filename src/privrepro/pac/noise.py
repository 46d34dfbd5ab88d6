"""A Gaussian noise ``N(0, Sigma_B)`` stored as low rank plus isotropic, never as a d x d matrix.

Algorithm 1 (pac paper) calibrates noise along the eigenvectors of an estimated covariance; with
``m`` samples of a ``d``-dimensional output only ``k = min(m, d)`` directions are estimated and the
remaining ``d - k`` share one variance. So

    ``Sigma_B = V^T diag(variances) V + floor * (I_d - V^T V)``

with ``V`` a ``k x d`` matrix of orthonormal rows. ``d = 24,790`` (Example 4) stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from privrepro.config.validation import ConfigError

__all__ = ["GaussianNoise"]


@dataclass(frozen=True)
class GaussianNoise:
    """``N(0, Sigma_B)`` with ``Sigma_B = V^T diag(variances) V + floor (I - V^T V)``.

    Attributes:
        dim: the output dimension ``d``.
        basis: ``k x d`` orthonormal rows ``V`` (``k = 0`` for isotropic noise).
        variances: the ``k`` variances along the rows of ``basis``.
        floor: the variance on the orthogonal complement of ``basis`` (all of R^d if ``k = 0``).
    """

    dim: int
    basis: NDArray[np.float64]
    variances: NDArray[np.float64]
    floor: float

    def __post_init__(self) -> None:
        if self.basis.shape != (self.variances.shape[0], self.dim):
            expected = (self.variances.shape[0], self.dim)
            raise ConfigError("basis", f"shape {self.basis.shape}", f"must have shape {expected}")
        if self.floor < 0:
            raise ConfigError("floor", self.floor, "must lie in [0, inf)")
        if np.any(self.variances < 0):
            smallest = float(self.variances.min())
            raise ConfigError("variances", smallest, "every variance must lie in [0, inf)")

    @classmethod
    def isotropic(cls, dim: int, variance: float) -> GaussianNoise:
        """``N(0, variance * I_d)``."""
        return cls(dim, np.zeros((0, dim)), np.zeros(0), float(variance))

    @property
    def trace(self) -> float:
        """``E||B||^2 = Tr(Sigma_B)``."""
        k = self.variances.shape[0]
        return float(self.variances.sum() + (self.dim - k) * self.floor)

    @property
    def expected_norm_upper(self) -> float:
        """``sqrt(Tr Sigma_B) >= E||B||_2`` (Jensen), the paper's reported noise magnitude."""
        return float(np.sqrt(self.trace))

    @property
    def is_isotropic(self) -> bool:
        return self.variances.shape[0] == 0 or bool(np.allclose(self.variances, self.floor))

    def expected_norm(self, rng: np.random.Generator, draws: int = 2000) -> tuple[float, float]:
        """Monte-Carlo ``E||B||_2`` and its standard error from ``draws`` samples."""
        norms = np.linalg.norm(self.sample(rng, draws), axis=1)
        return float(norms.mean()), float(norms.std(ddof=1) / np.sqrt(draws))

    def sample(self, rng: np.random.Generator, size: int) -> NDArray[np.float64]:
        """``size`` draws, shape ``(size, d)``: ``sqrt(floor) z + V^T ((sd - sqrt(floor)) * V z)``."""
        z = rng.standard_normal((size, self.dim))
        root_floor = np.sqrt(self.floor)
        out = root_floor * z
        if self.variances.shape[0]:
            coef = (np.sqrt(self.variances) - root_floor) * (z @ self.basis.T)
            out = out + coef @ self.basis
        return np.asarray(out, dtype=np.float64)

    def dense(self) -> NDArray[np.float64]:
        """The ``d x d`` covariance (for tests and small ``d`` only)."""
        v = self.basis
        return np.asarray(
            v.T @ np.diag(self.variances - self.floor) @ v + self.floor * np.eye(self.dim),
            dtype=np.float64,
        )

    def mi_bound(self, cov_m: NDArray[np.float64]) -> float:
        """Theorem 3, eq. (4), against a true output covariance ``cov_m`` (``d x d``)."""
        from privrepro.pac.gaussian import logdet_mi_bound

        return logdet_mi_bound(cov_m, self.dense())
