"""Output label spaces O_t and their privacy (cl paper, Sec. 4 and App. C).

More in ``docs/modules.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from privrepro.config import ConfigError
from privrepro.continual.scenarios import Scenario

__all__ = [
    "DUMMY_REFERENCES",
    "LABEL_POLICIES",
    "LabelSpace",
    "add_dummy_labels",
    "class_drop_curve",
    "class_drop_summary",
    "data_label_space",
    "label_config",
    "label_config_name",
    "label_spaces_for",
    "laplace_keep_probability",
    "laplace_threshold",
    "learned_label_space",
    "prior_const_label_spaces",
    "prior_label_spaces",
    "remap_task",
    "thm_c4_delta",
]

IntArray = NDArray[np.int64]

LABEL_POLICIES = ("prior", "prior_const", "data")
#: How "×f dummy labels" is read (cl Sec. 7.1 does not say; see :func:`add_dummy_labels`).
DUMMY_REFERENCES = ("base", "task")


@dataclass(frozen=True)
class LabelSpace:
    """A released output label set: sorted real class ids and ``n_dummy`` dummy labels."""

    classes: IntArray
    n_dummy: int = 0

    def __post_init__(self) -> None:
        c = np.unique(np.asarray(self.classes, dtype=np.int64))
        object.__setattr__(self, "classes", c)
        if self.n_dummy < 0:
            raise ConfigError("n_dummy", self.n_dummy, "must be >= 0")

    @property
    def size(self) -> int:
        return len(self.classes) + self.n_dummy

    def ids(self, num_classes: int) -> IntArray:
        """All label ids, dummies numbered from ``num_classes``."""
        return np.concatenate([self.classes, num_classes + np.arange(self.n_dummy)]).astype(
            np.int64
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, LabelSpace)
            and self.n_dummy == other.n_dummy
            and np.array_equal(self.classes, other.classes)
        )

    def __hash__(self) -> int:
        return hash((tuple(self.classes.tolist()), self.n_dummy))


def data_label_space(task_y: ArrayLike) -> LabelSpace:
    """S_data: the labels present in the task's data. NOT differentially private (Prop. 4.1):
    adding one sample with a new label changes the release with certainty."""
    return LabelSpace(np.unique(np.asarray(task_y, dtype=np.int64)))


def prior_label_spaces(scenario: Scenario) -> list[LabelSpace]:
    """S_prior exact: task t releases the public classes of its schedule (cl Sec. 7.1, "label
    match": 10 labels per Split-CIFAR-100 task, 20 per Split-ImageNet-R task)."""
    return [LabelSpace(c) for c in scenario.task_classes]


def prior_const_label_spaces(num_classes: int, nb_tasks: int) -> list[LabelSpace]:
    """S_prior^const: every task releases all ``num_classes`` base labels (the paper's default)."""
    all_classes = np.arange(num_classes, dtype=np.int64)
    return [LabelSpace(all_classes) for _ in range(nb_tasks)]


def add_dummy_labels(
    spaces: Sequence[LabelSpace],
    factor: int,
    num_classes: int,
    reference: str = "base",
    task_sizes: Sequence[int] | None = None,
) -> list[LabelSpace]:
    """Grow each label space to ``factor ×`` a reference size with dummy labels (cl Sec. 7.1).

    ``reference="base"`` (default): task t releases ``factor · num_classes`` labels, e.g. 1,000 /
    10,000 / 100,000 for CIFAR-100 at ×10/×100/×1000. Chosen because under the other reading ×10
    on CIFAR-100 equals S_prior^const (10 · 10 = 100), which Table A3 lists as a separate column.
    ``reference="task"``: ``factor ·`` (labels in the task's data), i.e. "1000× more labels per
    task than appear in the task data" read literally; ``task_sizes`` gives those counts.
    A space already at least that large is left unchanged; factor 1 adds nothing.
    """
    if factor < 1:
        raise ConfigError("dummy factor", factor, "must be >= 1")
    if reference not in DUMMY_REFERENCES:
        raise ConfigError("dummy reference", reference, f"must be one of {list(DUMMY_REFERENCES)}")
    out = []
    for t, s in enumerate(spaces):
        if reference == "base":
            target = factor * num_classes
        else:
            if task_sizes is None:
                raise ConfigError("task_sizes", None, "needed by dummy reference 'task'")
            target = factor * int(task_sizes[t])
        out.append(LabelSpace(s.classes, max(s.n_dummy, target - len(s.classes))))
    return out


def label_spaces_for(
    policy: str,
    scenario: Scenario,
    dummy_factor: int = 1,
    dummy_reference: str = "base",
    train_y: ArrayLike | None = None,
) -> list[LabelSpace]:
    """The released label space of every task under a policy name.

    ``policy``: ``"prior"`` (exact per task), ``"prior_const"`` (all base labels) or ``"data"``
    (S_data, needs ``train_y``; for the attack demonstration only). Dummy labels are added on top
    when ``dummy_factor > 1``.
    """
    if policy == "prior":
        spaces = prior_label_spaces(scenario)
    elif policy == "prior_const":
        spaces = prior_const_label_spaces(scenario.num_classes, scenario.nb_tasks)
    elif policy == "data":
        if train_y is None:
            raise ConfigError("train_y", None, "needed by label policy 'data'")
        y = np.asarray(train_y)
        spaces = [data_label_space(y[idx]) for idx in scenario.train_tasks]
    else:
        raise ConfigError("label policy", policy, f"must be one of {list(LABEL_POLICIES)}")
    if dummy_factor > 1:
        sizes = [len(c) for c in scenario.task_classes]
        spaces = add_dummy_labels(
            spaces, dummy_factor, scenario.num_classes, dummy_reference, sizes
        )
    return spaces


def remap_task(
    y: ArrayLike, mapping: Mapping[int, int | None], prior: LabelSpace
) -> tuple[NDArray[np.bool_], IntArray]:
    """R_t^task of Eq. (3): relabel each y by ``mapping`` (default: itself), drop ``None``.

    Labels outside ``prior`` after mapping are dropped too (they have no output). Returns the
    keep mask over the input samples and the new labels of the kept samples. Prop. 4.2: the
    remapped datasets of neighbours are equal or neighbours, so DP of the training carries over.
    """
    yy = np.asarray(y, dtype=np.int64)
    uniq, inverse = np.unique(yy, return_inverse=True)
    target = np.array(
        [-1 if mapping.get(int(u), int(u)) is None else mapping.get(int(u), int(u)) for u in uniq],
        dtype=np.int64,
    )
    vals = target[inverse.reshape(-1)] if len(yy) else np.zeros(0, np.int64)
    keep = (vals >= 0) & np.isin(vals, prior.classes)
    return keep, vals[keep]


# --------------------------------------------------------------------------------------------
# S_learned: Laplace noisy-count threshold (Def. C.3 with B_Lap, App. C.4; Thm. C.4)


def laplace_threshold(epsilon: float, delta: float) -> float:
    """τ = 1 + ln(1/(2δ))/ε, the smallest threshold for which L_{B_Lap} is (ε, δ)-DP.

    From Thm. C.4: for τ ≥ 1 the third term Pr[L(D') ∈ S*] = Pr[1 + Lap(1/ε) > τ]
    = ½ exp(−ε(τ − 1)) is the binding one (the first two are negative for ε > ln 2).
    Note check values: τ(1, 1e-5) = 11.8198, τ(1, 1e-7) = 16.4249.
    """
    if not epsilon > 0:
        raise ConfigError("epsilon", epsilon, "must be > 0")
    if not 0 < delta < 0.5:
        raise ConfigError("delta", delta, "must lie in (0, 0.5)")
    return 1.0 + float(np.log(1.0 / (2.0 * delta))) / epsilon


def laplace_keep_probability(count: ArrayLike, epsilon: float, tau: float) -> NDArray[np.float64]:
    """Pr[B_Lap(D_y) = true] = Pr[|D_y| + Lap(1/ε) > τ] for a label with ``count`` samples."""
    c = np.asarray(count, dtype=float)
    z = epsilon * (c - tau)
    return np.where(c > tau, 1.0 - 0.5 * np.exp(-np.abs(z)), 0.5 * np.exp(-np.abs(z)))


def thm_c4_delta(epsilon: float, tau: float) -> tuple[float, float, float, float]:
    """The δ of Thm. C.4 for B_Lap: ``(δ, term1, term2, term3)`` with δ = max of the terms.

    δ* = Pr[1 + Lap(1/ε) ≤ τ] (Eq. A69); term1 = 1 − e^ε δ*, term2 = 1/δ* − e^ε,
    term3 = Pr[L_B(D') ∈ S*] = 1 − δ* (a dataset with the new label alone in its class).
    """
    keep_one = float(laplace_keep_probability(1.0, epsilon, tau))
    d_star = 1.0 - keep_one
    t1 = 1.0 - np.exp(epsilon) * d_star
    t2 = 1.0 / d_star - np.exp(epsilon)
    t3 = keep_one
    return float(max(t1, t2, t3)), float(t1), float(t2), float(t3)


def learned_label_space(
    task_y: ArrayLike, epsilon: float, tau: float, rng: np.random.Generator
) -> LabelSpace:
    """S_learned by L_{B_Lap} (Def. C.3): keep label y iff |D_y| + Lap(1/ε) > τ.

    Labels are handled independently (parallel composition over the disjoint D_y), the output
    is always a subset of O^data, and a label with few samples is dropped with high probability.
    """
    labels, counts = np.unique(np.asarray(task_y, dtype=np.int64), return_counts=True)
    noisy = counts + rng.laplace(0.0, 1.0 / epsilon, size=len(counts))
    return LabelSpace(labels[noisy > tau])


def label_config(name: str) -> tuple[str, int]:
    """A label configuration of Table A3 by its column name: ``(label policy, dummy factor)``.

    ``"prior"`` (exact S_prior), ``"prior_const"`` or ``"const"`` (S_prior^const), ``"x<f>"``
    (S_prior^const with ×f dummy labels, e.g. ``"x1000"``).
    """
    if name == "prior":
        return "prior", 1
    if name in ("prior_const", "const"):
        return "prior_const", 1
    if name.startswith("x") and name[1:].isdigit() and int(name[1:]) >= 1:
        return "prior_const", int(name[1:])
    raise ConfigError("label config", name, "must be 'prior', 'prior_const', 'const' or 'x<f>'")


def label_config_name(name: str) -> str:
    """A Table A3 column as the paper writes it: ``S_prior``, ``S_prior^const``, ``+1000×``."""
    policy, factor = label_config(name)
    if factor > 1:
        return f"+{factor}×"
    return "S_prior" if policy == "prior" else "S_prior^const"


def class_drop_curve(epsilon: float, delta: float, k_max: int) -> pd.DataFrame:
    """The lower bound 1 − δ_k on the probability that any (ε, δ)-DP label release drops a class
    of k examples, for k = 1..``k_max`` (cl paper, Sec. 4.4, Fig. 2; δ_k of group privacy,
    :func:`privrepro.dp.group.drop_probability_lower_bound`). Columns ``epsilon``, ``delta``,
    ``k``, ``drop_probability_lb``."""
    from privrepro.dp.group import drop_probability_lower_bound

    if k_max < 1:
        raise ConfigError("k_max", k_max, "must be >= 1")
    k = np.arange(1, int(k_max) + 1)
    bound = drop_probability_lower_bound(epsilon, delta, k)
    return pd.DataFrame({"epsilon": epsilon, "delta": delta, "k": k, "drop_probability_lb": bound})


def class_drop_summary(curves: pd.DataFrame, threshold: float = 0.99) -> list[dict[str, object]]:
    """Per (ε, δ) of :func:`class_drop_curve` tables: the largest k dropped with probability at
    least ``threshold`` (``largest_k_dropped_<threshold %>``; 0 if none, the caption: 12 at
    ε = 1, δ = 1e-7 and 0.99) and the smallest k whose bound is 0 (``smallest_k_bound_zero``;
    NaN when beyond the curve's k)."""
    rows: list[dict[str, object]] = []
    for (eps, delta), group in curves.groupby(["epsilon", "delta"]):
        kept = group.loc[group["drop_probability_lb"] >= threshold, "k"]
        zero = group.loc[group["drop_probability_lb"] <= 0.0, "k"]
        for metric, value in (
            (f"largest_k_dropped_{round(threshold * 100)}", int(kept.max()) if len(kept) else 0),
            ("smallest_k_bound_zero", int(zero.min()) if len(zero) else np.nan),
        ):
            rows.append({"metric": metric, "epsilon": eps, "delta": delta, "value": value})
    return rows
