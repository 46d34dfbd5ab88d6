"""PEFT members: FiLM on a timm ViT (parameter count, DP-SGD path), head members, empty tasks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from privrepro.continual.peft import (
    film_parameter_count,
    local_targets,
    make_film,
    member_logits,
    small_vit,
    train_member,
    vit_b16_film_count,
)
from privrepro.training.dpsgd import DPSGDHyper

torch.set_num_threads(1)


def test_vit_b16_film_count_matches_paper():
    # cl paper, Sec. 6: 38,400 LayerNorm parameters + 768·100 + 100 head = 115,300 for C = 100.
    assert vit_b16_film_count(100) == 115_300
    assert vit_b16_film_count(10) == 38_400 + 768 * 10 + 10


def test_make_film_freezes_all_but_layernorm_and_zero_head():
    vit = small_vit(torch.Generator().manual_seed(0))
    film = make_film(vit, 7)
    names = [n for n, p in film.named_parameters() if p.requires_grad]
    assert all(("norm" in n) or n.startswith("head.") for n in names)
    # small ViT: (2·depth + 1) LayerNorms × 2 × 32 + 32·7 + 7
    assert film_parameter_count(film) == 5 * 2 * 32 + 32 * 7 + 7
    assert torch.count_nonzero(film.head.weight) == 0
    # the backbone itself is untouched, and its frozen weights are shared, not copied
    assert all(p.requires_grad for p in vit.parameters())
    own = dict(vit.named_parameters())
    for n, p in film.named_parameters():
        if n.startswith("head."):
            continue
        shares = p.data_ptr() == own[n].data_ptr()
        assert shares == (not p.requires_grad), n


def test_film_member_trains_with_dpsgd_and_changes_only_film_params():
    g = torch.Generator().manual_seed(1)
    vit = small_vit(g)
    x = torch.randn(24, 3, 16, 16, generator=g)
    y = np.array([3, 5] * 12)
    hp = DPSGDHyper(epochs=4, batch_size=2.4, lr=1e-2, clip=1.0, epsilon=1.0)
    m = train_member("film", x, y, [3, 5, 9], hp, generator=g, backbone=vit, physical_batch=4)
    assert m.privacy is not None and m.privacy.epsilon_spent <= 1.0
    frozen_before = dict(vit.named_parameters())
    for n, p in m.model.named_parameters():
        if not p.requires_grad:
            assert torch.equal(p, frozen_before[n]), n
    assert torch.count_nonzero(m.model.head.weight) > 0
    assert member_logits(m, x).shape == (24, 3)


def test_empty_task_still_yields_a_classifier():
    # Prop. C.1: a mechanism must release a proper classifier even for D_t = ∅.
    x = torch.zeros(0, 8)
    m = train_member(
        "head", x, np.zeros(0, int), [1, 4], DPSGDHyper(epsilon=1.0), generator=torch.Generator()
    )
    assert isinstance(m.model, nn.Linear) and m.model.out_features == 2
    out = member_logits(m, torch.randn(5, 8))
    assert out.shape == (5, 2) and torch.isfinite(out).all()


def test_head_member_learns_separable_task():
    g = torch.Generator().manual_seed(0)
    means = torch.randn(3, 16, generator=g) * 3
    y = torch.randint(0, 3, (300,), generator=g)
    x = means[y] + torch.randn(300, 16, generator=g)
    hp = DPSGDHyper(epochs=5, batch_size=30, lr=0.05, clip=math.inf, epsilon=None)
    m = train_member("head", x, (y + 10).numpy(), [10, 11, 12], hp, generator=g)
    acc = (member_logits(m, x).argmax(1) == y).float().mean()
    assert acc > 0.9  # well-separated Gaussian classes: near-perfect training accuracy


def test_local_targets_drop_unmatched():
    keep, local = local_targets([5, 2, 7, 2], [2, 5])
    np.testing.assert_array_equal(keep, [True, True, False, True])
    np.testing.assert_array_equal(local, [1, 0, 0])
    with pytest.raises(ValueError):
        local_targets([1], [5, 2])


def test_naive_continues_one_model_and_non_cl_is_single_run():
    """Alg. A1: the checkpoint after task 2 is task 1's model trained further on task 2 (exactly
    what ``train_member(init=...)`` gives from the same generator state), not a fresh model;
    Alg. A2: one DP-SGD run on the union of the tasks, a single release."""
    from privrepro.continual.baselines import iter_naive

    g = torch.Generator().manual_seed(0)
    x1, x2 = torch.randn(30, 4, generator=g), torch.randn(30, 4, generator=g)
    y1, y2 = np.zeros(30, int), np.ones(30, int)
    hp = DPSGDHyper(epochs=2, batch_size=10, lr=0.1, clip=math.inf, epsilon=None)
    ckpts = [
        m.model.weight.detach().clone()
        for m in iter_naive(
            "head",
            [(x1, y1), (x2, y2)],
            [0, 1],
            [hp, hp],
            generator=torch.Generator().manual_seed(5),
        )
    ]
    g_ref = torch.Generator().manual_seed(5)
    first = train_member("head", x1, y1, [0, 1], hp, generator=g_ref)
    assert torch.equal(ckpts[0], first.model.weight)
    second = train_member("head", x2, y2, [0, 1], hp, generator=g_ref, init=first.model)
    assert torch.equal(ckpts[1], second.model.weight)
    fresh = train_member("head", x2, y2, [0, 1], hp, generator=torch.Generator().manual_seed(5))
    assert not torch.allclose(ckpts[1], fresh.model.weight)
    # only task 1 (class 0) was seen first: its logit row moved, and task 2 moved the model on
    assert ckpts[0][0].norm() > 0 and not torch.equal(ckpts[0], ckpts[1])
    x, y = torch.cat([x1, x2]), np.r_[y1, y2]
    g_union = torch.Generator().manual_seed(7)
    m = train_member("head", x, y, [0, 1], hp, generator=g_union, composition="single")
    assert m.privacy.composition == "single" and m.n_train == 60


def test_naive_film_continues_across_tasks():
    """FiLM Naive: one model across tasks; task 2 starts from task 1's FiLM parameters."""
    from privrepro.continual.baselines import iter_naive

    g = torch.Generator().manual_seed(2)
    vit = small_vit(g)
    tasks = [(torch.randn(12, 3, 16, 16, generator=g), np.full(12, k)) for k in range(2)]
    hp = DPSGDHyper(epochs=1, batch_size=4, lr=1e-2, clip=math.inf, epsilon=None)
    heads = []
    for m in iter_naive(
        "film", tasks, [0, 1], [hp, hp], generator=torch.Generator().manual_seed(3), backbone=vit
    ):
        heads.append(m.model.head.weight.detach().clone())
    assert len(heads) == 2 and heads[1].shape == (2, 32)
    g_ref = torch.Generator().manual_seed(3)
    first = train_member("film", *tasks[0], [0, 1], hp, generator=g_ref, backbone=vit)
    second = train_member(
        "film", *tasks[1], [0, 1], hp, generator=g_ref, backbone=vit, init=first.model
    )
    assert torch.equal(heads[0], first.model.head.weight)
    assert torch.equal(heads[1], second.model.head.weight)
    assert not torch.equal(heads[0], heads[1])
