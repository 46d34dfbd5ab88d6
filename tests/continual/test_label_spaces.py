"""Label spaces (cl Sec. 4, App. C; note §7.1, §7.2, §7.4)."""

from __future__ import annotations

import numpy as np
import pytest

from privrepro.continual.label_spaces import (
    LabelSpace,
    add_dummy_labels,
    data_label_space,
    label_spaces_for,
    laplace_keep_probability,
    laplace_threshold,
    learned_label_space,
    prior_const_label_spaces,
    remap_task,
    thm_c4_delta,
)
from privrepro.continual.scenarios import class_incremental

# Fig. 1: D_t = {Healthy, Type 1}; D_t' adds one point labelled Type 2.
HEALTHY, TYPE1, TYPE2 = 0, 1, 2
D = np.array([HEALTHY, HEALTHY, TYPE1, TYPE1, TYPE1])
D_PRIME = np.append(D, TYPE2)


def test_s_data_attack_distinguishes_with_certainty() -> None:
    """Prop. 4.1: the attacker 'is Type 2 in the released label space?' has TPR 1 at FPR 0
    over any number of releases, so no (ε, δ < 1) bound can hold."""
    rel_d, rel_dp = data_label_space(D), data_label_space(D_PRIME)
    assert rel_d != rel_dp

    def attacker(space: LabelSpace) -> bool:
        return TYPE2 in space.classes

    tpr = np.mean([attacker(data_label_space(D_PRIME)) for _ in range(100)])
    fpr = np.mean([attacker(data_label_space(D)) for _ in range(100)])
    assert tpr == 1.0 and fpr == 0.0
    # DP would need Pr[A(D') ∈ S] ≤ e^ε Pr[A(D) ∈ S] + δ, i.e. 1 ≤ e^ε·0 + δ: δ ≥ 1
    assert tpr > np.exp(10.0) * fpr + 0.999


def test_s_prior_release_is_data_independent() -> None:
    """S_prior and S_prior^const release the same label set for D and D' (Prop. 4.2)."""
    for y in (D, D_PRIME):
        sc = class_incremental("fig1", y, y, 3, [3])
        assert label_spaces_for("prior_const", sc) == prior_const_label_spaces(3, 1)
        assert label_spaces_for("prior", sc)[0] == LabelSpace(np.arange(3))


def test_remap_drops_and_relabels() -> None:
    prior = LabelSpace(np.array([0, 1]))
    keep, new = remap_task(D_PRIME, {TYPE2: TYPE1}, prior)  # Type 2 remapped to Type 1
    assert keep.all() and new.tolist() == [0, 0, 1, 1, 1, 1]
    keep, new = remap_task(D_PRIME, {TYPE2: None}, prior)   # Type 2 dropped
    assert keep.tolist() == [True] * 5 + [False] and new.tolist() == D.tolist()
    _keep_d, new_d = remap_task(D, {TYPE2: None}, prior)
    # neighbours stay neighbours or become identical (Prop. 4.2, proof cases (i), (ii))
    assert abs(len(new) - len(new_d)) <= 1
    keep, _ = remap_task(D_PRIME, {}, prior)  # unmatched label outside the prior: dropped
    assert keep.sum() == 5


def test_dummy_label_readings() -> None:
    spaces = prior_const_label_spaces(100, 10)
    base = add_dummy_labels(spaces, 10, 100, "base")
    assert base[0].size == 1_000 and base[0].n_dummy == 900  # ×10 of the 100 base labels
    assert add_dummy_labels(spaces, 1000, 100, "base")[3].size == 100_000
    task = add_dummy_labels(spaces, 10, 100, "task", task_sizes=[10] * 10)
    assert task[0].size == 100  # ×10 of a task's 10 labels = S_prior^const itself
    assert add_dummy_labels(spaces, 100, 100, "task", task_sizes=[10] * 10)[0].size == 1_000


def test_laplace_threshold_values() -> None:
    # note §7.4: τ = 1 + ln(1/(2δ))/ε: τ(1, 1e-5) = 11.8198, τ(1, 1e-7) = 16.4249
    assert laplace_threshold(1.0, 1e-5) == pytest.approx(11.8198, abs=1e-4)
    assert laplace_threshold(1.0, 1e-7) == pytest.approx(16.4249, abs=1e-4)


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-5), (1.0, 1e-7), (2.0, 1e-6)])
def test_thm_c4_delta_is_target(eps: float, delta: float) -> None:
    d, t1, t2, _t3 = thm_c4_delta(eps, laplace_threshold(eps, delta))
    assert d == pytest.approx(delta, rel=1e-9)  # the third term binds
    assert t1 < 0 and t2 < 0


def test_keep_probabilities_note_values_and_monte_carlo() -> None:
    eps, tau = 1.0, laplace_threshold(1.0, 1e-5)
    sizes = np.array([1, 5, 10, 12, 15, 20, 30])
    p = laplace_keep_probability(sizes, eps, tau)
    # note §7.4 values (4 decimals)
    assert p == pytest.approx([0.0000, 0.0005, 0.0810, 0.5825, 0.9792, 0.9999, 1.0], abs=6e-5)
    rng = np.random.default_rng(0)
    n = 200_000
    noisy = sizes[:, None] + rng.laplace(0.0, 1 / eps, size=(len(sizes), n))
    mc = (noisy > tau).mean(axis=1)
    se = np.sqrt(np.maximum(p * (1 - p), 1 / n) / n)
    assert np.all(np.abs(mc - p) <= 3 * se + 1e-12)  # ±3 standard errors


def test_learned_release_lemma_c5_and_subset() -> None:
    eps, tau = 1.0, laplace_threshold(1.0, 1e-5)
    y = np.repeat([0, 1, 2], [10, 12, 15])  # 3 labels with keep probabilities .081/.58/.98
    p = laplace_keep_probability([10, 12, 15], eps, tau)
    rng = np.random.default_rng(1)
    n = 20_000
    outs = [tuple(learned_label_space(y, eps, tau, rng).classes.tolist()) for _ in range(n)]
    assert all(set(o) <= {0, 1, 2} for o in outs)  # always ⊆ O^data
    for target in [(1, 2), (2,), (0, 1, 2), ()]:
        # Lemma C.5: Pr[L = O] = Π_{y∈O} p_y · Π_{y∉O} (1 − p_y)
        exact = np.prod([p[k] if k in target else 1 - p[k] for k in range(3)])
        freq = np.mean([o == target for o in outs])
        assert abs(freq - exact) <= 3 * np.sqrt(exact * (1 - exact) / n) + 1e-4
