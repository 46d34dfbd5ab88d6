"""The DP Cosine Classifier (cl paper, Alg. 1, Eqs. 6–7; after Janson et al. 2022).

Per task t and every label o of the released label space O_t:

    s_{t,o} = s_{t−1,o} + Σ_{x ∈ D_{t,o}} f(x)/‖f(x)‖₂ + z_t,   z_t ~ N(0, σ² I_K)

More in ``docs/modules.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from privrepro.config import ConfigError
from privrepro.continual.label_spaces import LabelSpace
from privrepro.continual.scenarios import Scenario
from privrepro.dp.gaussian import analytic_sigma

__all__ = [
    "DUMMY_SAMPLING",
    "CosineClassifier",
    "CosineResult",
    "noise_std",
    "normalize_rows",
    "run_cosine",
]

DUMMY_SAMPLING = ("exact", "marginal")

FloatArray = NDArray[np.floating]


def noise_std(epsilon: float | None, delta: float, sensitivity: float = 1.0) -> float:
    """σ of the Gaussian noise per task at (ε, δ); ``epsilon=None`` (non-DP) gives 0.

    The analytic Gaussian mechanism (Balle & Wang 2018) of :mod:`privrepro.dp.gaussian`.
    Check values (note §7.5): σ(1, 1e-5) = 3.7306, σ(8, 1e-5) = 0.6002.
    """
    if epsilon is None or (isinstance(epsilon, float) and np.isinf(epsilon)):
        return 0.0
    if not epsilon > 0:
        raise ConfigError("epsilon", epsilon, "must be > 0 (or None for non-DP)")
    if not 0 < delta < 1:
        raise ConfigError("delta", delta, "must lie in (0, 1)")
    return float(analytic_sigma(float(epsilon), float(delta), sensitivity=sensitivity))


def normalize_rows(x: ArrayLike, dtype: type = np.float32) -> NDArray[np.floating]:
    """Rows scaled to unit L2 norm (zero rows stay zero)."""
    a: np.ndarray = np.asarray(x, dtype=dtype)
    n = np.sqrt(np.einsum("ij,ij->i", a, a))
    return np.asarray(a / np.where(n > 0, n, 1)[:, None], dtype=dtype)


def _class_sums(
    xn: NDArray[np.floating], y: NDArray[np.int64], num_classes: int
) -> NDArray[np.float64]:
    """Σ of the rows of ``xn`` per label, as one (labels present × n) one-hot matmul."""
    out = np.zeros((num_classes, xn.shape[1]), dtype=np.float64)
    if len(y) == 0:
        return out
    labels, inverse = np.unique(y, return_inverse=True)
    onehot = np.zeros((len(labels), len(y)), dtype=xn.dtype)
    onehot[inverse.reshape(-1), np.arange(len(y))] = 1
    out[labels] = onehot @ xn
    return out


@dataclass
class CosineClassifier:
    """The state of Alg. 1: class sums, which labels were released, noise draws per label.

    Real labels 0..C−1 are tracked exactly (one Gaussian draw per released label per task);
    dummy labels (ids ≥ C) only by their number of draws (see ``docs/modules.md``).
    """

    num_classes: int
    dim: int
    sums: NDArray[np.float64] = field(init=False)
    released: NDArray[np.bool_] = field(init=False)
    draws: NDArray[np.int64] = field(init=False)
    dummy_draws: NDArray[np.int64] = field(init=False)

    def __post_init__(self) -> None:
        self.sums = np.zeros((self.num_classes, self.dim))
        self.released = np.zeros(self.num_classes, dtype=bool)
        self.draws = np.zeros(self.num_classes, dtype=np.int64)
        self.dummy_draws = np.zeros(0, dtype=np.int64)

    def update(
        self, x: ArrayLike, y: ArrayLike, space: LabelSpace, sigma: float, rng: np.random.Generator
    ) -> None:
        """One task of Alg. 1: add the task's normalised features to their class sums and one
        N(0, σ²I) draw to every label of ``space``. Samples whose label is not in ``space``
        must have been remapped or dropped before (Prop. 4.2); they raise here."""
        yy = np.asarray(y, dtype=np.int64)
        inside = np.isin(yy, space.classes)
        if not inside.all():
            raise ValueError(
                f"{int((~inside).sum())} samples have labels outside the released "
                "label space; remap or drop them first (cl Prop. 4.2)"
            )
        xn = normalize_rows(x)
        if xn.shape[1] != self.dim:
            raise ValueError(f"features of dimension {xn.shape[1]}, classifier has {self.dim}")
        self.sums += _class_sums(xn, yy, self.num_classes)
        cls = space.classes
        if sigma > 0 and len(cls):
            self.sums[cls] += sigma * rng.standard_normal((len(cls), self.dim))
        self.released[cls] = True
        self.draws[cls] += 1
        if space.n_dummy > len(self.dummy_draws):
            self.dummy_draws = np.concatenate(
                [self.dummy_draws, np.zeros(space.n_dummy - len(self.dummy_draws), np.int64)]
            )
        self.dummy_draws[: space.n_dummy] += 1

    def scores(self, x: ArrayLike, normalized: bool = False) -> NDArray[np.float32]:
        """cos(v, s_o) for every real label (−inf for labels never released, and for a released
        label whose sum is exactly zero: a zero vector has no direction). ``normalized``: the
        rows of ``x`` already have unit norm."""
        v = np.asarray(x, dtype=np.float32) if normalized else normalize_rows(x)
        norms = np.linalg.norm(self.sums, axis=1)
        ok = self.released & (norms > 0)
        unit = (self.sums / np.where(ok, norms, 1.0)[:, None]).astype(np.float32)
        sc = v @ unit.T
        sc[:, ~ok] = -np.inf
        return np.asarray(sc, dtype=np.float32)

    def best_dummy_score(
        self, x: ArrayLike, sigma: float, rng: np.random.Generator, chunk: int = 4096
    ) -> NDArray[np.float32]:
        """max over released dummies of cos(v, s_dummy), with s_dummy ~ N(0, draws·σ²I)."""
        v = normalize_rows(x)
        best = np.full(len(v), -np.inf, dtype=np.float32)
        d = self.dummy_draws[self.dummy_draws > 0]
        if sigma <= 0 or len(d) == 0:
            return best  # σ = 0: dummy sums are zero vectors, never predicted
        for start in range(0, len(d), chunk):
            # the scale of a dummy's sum does not change its cosine: only its direction counts
            z = rng.standard_normal((min(chunk, len(d) - start), self.dim)).astype(np.float32)
            z /= np.linalg.norm(z, axis=1, keepdims=True)
            np.maximum(best, (v @ z.T).max(axis=1), out=best)
        return best

    def best_dummy_score_marginal(
        self, n: int, sigma: float, rng: np.random.Generator
    ) -> NDArray[np.float32]:
        """The same maximum drawn from its exact marginal law, independently per test sample.

        For a unit v and a direction u uniform on S^{K−1}, (cos(v,u) + 1)/2 ~ Beta((K−1)/2,
        (K−1)/2); the max of M i.i.d. draws is F^{−1}(U^{1/M}). Exact per test sample in O(n)
        instead of O(n·M·K); it ignores that all test samples share the same dummies.
        """
        from scipy.stats import beta

        m = int((self.dummy_draws > 0).sum())
        if sigma <= 0 or m == 0:
            return np.full(n, -np.inf, dtype=np.float32)
        a = (self.dim - 1) / 2.0
        tail = -np.expm1(np.log(rng.random(n)) / m)  # 1 − U^{1/M}, without cancellation
        return np.asarray(2.0 * beta.isf(tail, a, a) - 1.0, dtype=np.float32)

    def predict(
        self,
        x: ArrayLike,
        sigma: float = 0.0,
        rng: np.random.Generator | None = None,
        dummy_sampling: str = "exact",
        normalized: bool = False,
    ) -> NDArray[np.int64]:
        """Eq. (7): argmax over ∪_{k≤t} O_k; a dummy winner is returned as −1 (always wrong).

        ``dummy_sampling``: ``"exact"`` draws every dummy's noise; ``"marginal"`` draws the best
        dummy score per test sample from its law (:meth:`best_dummy_score_marginal`).
        """
        if dummy_sampling not in DUMMY_SAMPLING:
            raise ConfigError(
                "dummy_sampling", dummy_sampling, f"must be one of {list(DUMMY_SAMPLING)}"
            )
        sc = self.scores(x, normalized)
        pred = np.argmax(sc, axis=1).astype(np.int64)
        if len(self.dummy_draws) and sigma > 0:
            if rng is None:
                raise ConfigError(
                    "rng", rng, "dummy labels need a numpy Generator to draw their noise"
                )
            if dummy_sampling == "exact":
                best = self.best_dummy_score(x, sigma, rng)
            else:
                best = self.best_dummy_score_marginal(len(pred), sigma, rng)
            pred[best > sc[np.arange(len(pred)), pred]] = -1
        return pred

    @property
    def memory_floats(self) -> int:
        """K · |∪_t O_t| (cl Sec. 5: memory of the cosine classifier)."""
        return int(self.dim * (self.released.sum() + (self.dummy_draws > 0).sum()))


@dataclass(frozen=True)
class CosineResult:
    """One run: ``acc[t, i]`` = accuracy on test task i after task t (NaN rows not evaluated),
    the final accuracy on the whole test set, σ, and the number of labels released."""

    acc: NDArray[np.float64]
    final_accuracy: float
    sigma: float
    labels_released: int


def run_cosine(
    train_x: ArrayLike,
    train_y: ArrayLike,
    test_x: ArrayLike,
    test_y: ArrayLike,
    scenario: Scenario,
    spaces: Sequence[LabelSpace],
    sigma: float,
    rng: np.random.Generator,
    evaluate: str = "every_task",
    dummy_sampling: str = "exact",
) -> CosineResult:
    """Alg. 1 over the tasks of ``scenario``, evaluated after every task (or only the last).

    ``sigma`` is the per-task noise std (:func:`noise_std` at the per-task (ε, δ)); ``spaces`` the
    released label space of every task. ``evaluate="final"`` fills only the last row of ``acc``
    (cheaper with many dummy labels); ``dummy_sampling`` see :meth:`CosineClassifier.predict`.
    """
    if evaluate not in ("every_task", "final"):
        raise ConfigError("evaluate", evaluate, "must be one of ['every_task', 'final']")
    if len(spaces) != scenario.nb_tasks:
        raise ConfigError("len(spaces)", len(spaces), f"must equal nb_tasks = {scenario.nb_tasks}")
    xtr = np.asarray(train_x)
    ytr = np.asarray(train_y, dtype=np.int64)
    xte = normalize_rows(test_x)
    yte = np.asarray(test_y, dtype=np.int64)
    T = scenario.nb_tasks
    clf = CosineClassifier(scenario.num_classes, xtr.shape[1])
    acc = np.full((T, T), np.nan)
    final_acc = float("nan")
    for t in range(T):
        idx = scenario.train_tasks[t]
        clf.update(xtr[idx], ytr[idx], spaces[t], sigma, rng)
        if evaluate == "every_task" or t == T - 1:
            pred = clf.predict(xte, sigma, rng, dummy_sampling, normalized=True)
            correct = pred == yte
            for i in range(T):
                ti = scenario.test_tasks[i]
                acc[t, i] = float(correct[ti].mean()) if len(ti) else float("nan")
            final_acc = float(correct.mean())
    return CosineResult(acc, final_acc, float(sigma), int(sum(s.size for s in spaces[-1:])))
