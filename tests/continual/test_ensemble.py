"""PEFT Ensemble prediction rules against brute force (cl paper, Eq. 8, Eq. A107, SAFE Eq. 11)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from privrepro.continual.ensemble import aggregate_scores, predict


def _case(seed: int, members: int = 4, n: int = 25, c: int = 9, shared: bool = False):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(members, n, c)) * 3
    labels = np.ones((members, c), bool) if shared else rng.random((members, c)) < 0.5
    labels[np.arange(members), rng.integers(0, c, members)] = True
    return torch.tensor(logits), torch.tensor(labels)


def _brute(logits: np.ndarray, labels: np.ndarray, rule: str) -> np.ndarray:
    m, n, c = logits.shape
    out = np.empty(n, int)
    for i in range(n):
        best, arg = -math.inf, -1
        if rule == "entropy":
            h = []
            for mm in range(m):
                z = logits[mm, i, labels[mm]]
                p = np.exp(z - z.max())
                p /= p.sum()
                h.append(-(p * np.log(p)).sum())
            w = np.exp(-np.array(h) - (-np.array(h)).max())
            w /= w.sum()
            for o in range(c):
                if not labels[:, o].any():
                    continue
                s = sum(w[mm] * logits[mm, i, o] for mm in range(m) if labels[mm, o])
                if s > best:
                    best, arg = s, o
        else:
            for mm in range(m):
                shift = np.median(logits[mm, i, labels[mm]]) if rule == "median" else 0.0
                for o in range(c):
                    if labels[mm, o] and logits[mm, i, o] - shift > best:
                        best, arg = logits[mm, i, o] - shift, o
        out[i] = arg
    return out


@pytest.mark.parametrize("rule", ["argmax", "median", "entropy"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("shared", [False, True])
def test_rules_match_brute_force(rule, seed, shared):
    logits, labels = _case(seed, shared=shared)
    got = predict(logits, labels, rule).numpy()
    np.testing.assert_array_equal(got, _brute(logits.numpy(), labels.numpy(), rule))


def test_entropy_weights_identical_members_reduce_to_one_member():
    # With identical members the SAFE weights are 1/m each, so Σ w_l f_l = f_1.
    logits, labels = _case(3, members=1, shared=True)
    rep = logits.repeat(5, 1, 1)
    lab = labels.repeat(5, 1)
    scores = aggregate_scores(rep, lab, "entropy")
    assert torch.allclose(scores, logits[0], atol=1e-12)


def test_prediction_restricted_to_member_labels():
    logits, labels = _case(4)
    pred = predict(logits, labels, "argmax")
    union = labels.any(dim=0)
    assert bool(union[pred].all())


def test_bad_shapes_raise():
    logits, labels = _case(0)
    with pytest.raises(ValueError, match="labels.shape"):
        predict(logits, labels[:, :3], "argmax")
    with pytest.raises(ValueError, match="rule"):
        predict(logits, labels, "vote")


@pytest.mark.parametrize("rule", ["argmax", "median"])
def test_member_best_combination_equals_full_stack(rule):
    from privrepro.continual.ensemble import combine_best, member_best

    logits, labels = _case(7, members=5, shared=False)
    scores, labs = [], []
    for m in range(logits.shape[0]):
        ids = torch.nonzero(labels[m]).flatten()
        s, lab = member_best(logits[m][:, ids], ids, rule)
        scores.append(s)
        labs.append(lab)
    got = combine_best(torch.stack(scores), torch.stack(labs))
    np.testing.assert_array_equal(got.numpy(), predict(logits, labels, rule).numpy())


def test_accuracy_matrix_by_hand():
    from privrepro.continual.ensemble import accuracy_matrix

    y = torch.tensor([0, 1, 2, 3])
    task = torch.tensor([0, 0, 1, 1])
    preds = torch.tensor([[0, 1, 0, 0], [0, 0, 2, 3]])
    acc = accuracy_matrix(preds, y, task, 3)
    assert acc[0, 0] == 1.0 and acc[0, 1] == 0.0 and acc[1, 0] == 0.5 and acc[1, 1] == 1.0
    assert torch.isnan(acc[:, 2]).all()  # no test samples for task 2
