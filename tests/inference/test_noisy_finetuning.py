"""Noisy fine-tuning: ``repo_compat`` changes only BatchNorm statistics, ``corrected`` trains."""

from __future__ import annotations

import numpy as np
import torch

from privrepro.inference.evaluate import gauss_input_accuracy
from privrepro.inference.networks import NormalizedNet
from privrepro.inference.noisy_finetuning import fine_tune_noisy, select_tuned
from privrepro.models.resnet import small_resnet
from privrepro.training.classifier import TrainConfig, seeded_build


def _setup() -> tuple[NormalizedNet, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    net = seeded_build(
        lambda: NormalizedNet(small_resnet(3, 1, width=4, blocks=1), [0.5], [0.3]), g
    )
    x = torch.rand(60, 1, 6, 6, generator=g)
    y = torch.randint(0, 3, (60,), generator=g)
    return net, x, y


def test_repo_compat_changes_only_bn_statistics() -> None:
    base, x, y = _setup()
    before = {k: v.clone() for k, v in base.state_dict().items()}
    cfg = TrainConfig(epochs=2, batch_size=20, lr=1e-2)
    tuned, _ = fine_tune_noisy(
        base, x, y, x[:20], y[:20], 0.5, 0.3, "repo_compat", cfg, torch.Generator().manual_seed(1)
    )
    after = tuned.state_dict()
    for name, p in tuned.named_parameters():  # every parameter, BN affine included
        assert torch.equal(p.detach(), before[name]), name
    stats = [k for k in after if k.endswith("running_mean") or k.endswith("running_var")]
    assert stats and any(not torch.equal(after[k], before[k]) for k in stats)
    # the base model itself is untouched
    assert all(torch.equal(v, before[k]) for k, v in base.state_dict().items())


def test_corrected_updates_parameters_and_selects_on_validation() -> None:
    base, x, y = _setup()
    cfg = TrainConfig(epochs=2, batch_size=20, lr=1e-2)
    tuned, val = fine_tune_noisy(
        base, x, y, x[:20], y[:20], 0.5, 0.3, "corrected", cfg, torch.Generator().manual_seed(1)
    )
    conv = dict(tuned.named_parameters())["body.0.weight"]
    assert not torch.equal(conv, dict(base.named_parameters())["body.0.weight"])
    assert len(val) == 2
    chosen, acc = select_tuned(
        [base, tuned],
        [0.0, 0.5],
        "corrected",
        x[:20],
        y[:20],
        x[20:],
        y[20:],
        2,
        lambda name: torch.Generator().manual_seed(len(name)),
    )
    assert chosen.shape == (2,) and acc.shape == (2, 2)
    # corrected: each σ's model is the one with the best mean *validation* accuracy (stream
    # "tune-val"), reported on the test set (stream "tune-test")
    gen_for = lambda name: torch.Generator().manual_seed(len(name))  # noqa: E731
    val_means = np.stack(
        [
            gauss_input_accuracy(m, x[:20], y[:20], [0.0, 0.5], 2, gen_for("tune-val"), "pixel")
            for m in (base, tuned)
        ]
    ).mean(2)
    test_acc = np.stack(
        [
            gauss_input_accuracy(m, x[20:], y[20:], [0.0, 0.5], 2, gen_for("tune-test"), "pixel")
            for m in (base, tuned)
        ]
    )
    assert chosen.tolist() == val_means.argmax(0).tolist()
    assert np.array_equal(acc, test_acc[chosen, np.arange(2)])
    chosen_r, acc_r = select_tuned(
        [base, tuned],
        [0.0, 0.5],
        "repo_compat",
        x[:20],
        y[:20],
        x[20:],
        y[20:],
        2,
        lambda name: torch.Generator().manual_seed(3),
    )
    assert acc_r.shape == (2, 2) and chosen_r.shape == (2,)
    # repo_compat picks the best on the test set (normalised-space noise, the notebooks'): at each
    # σ its mean test accuracy is the larger of the two models' on the same draws, never below
    per_model = np.stack(
        [
            gauss_input_accuracy(
                m, x[20:], y[20:], [0.0, 0.5], 2, torch.Generator().manual_seed(3), "normalized"
            )
            for m in (base, tuned)
        ]
    ).mean(2)
    np.testing.assert_array_equal(acc_r.mean(1), per_model.max(0))
    assert (acc_r.mean(1) >= per_model.min(0)).all()
    assert chosen_r.tolist() == per_model.argmax(0).tolist()
