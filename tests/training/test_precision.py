"""The precision switch (``privrepro.training.precision``): fp32 changes nothing, tf32 and bf16
put the model's arithmetic in reduced precision and give the global flags back, and DP-SGD's
clipping stays exact: with a bfloat16 forward, every sample's clipped contribution has a norm
of at most C up to float32 rounding (the sensitivity the accountant assumes), on both per-sample
paths. Unit identities and caches carry the precision only when it is not fp32."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from privrepro.config import ConfigError
from privrepro.training.precision import (
    check_precision,
    compute_precision,
    exact_arithmetic,
    unit_precision,
)


@pytest.fixture(autouse=True)
def _one_thread() -> object:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_a_bad_precision_is_one_line_naming_key_value_and_choices() -> None:
    with pytest.raises(ConfigError) as err:
        check_precision("fp16", "params.train.precision")
    text = str(err.value)
    assert "params.train.precision" in text and "fp16" in text and "bf16" in text
    assert "\n" not in text
    assert check_precision("tf32") == "tf32"


def test_bf16_autocasts_the_model_and_fp32_leaves_it() -> None:
    lin = nn.Linear(8, 3)
    x = torch.randn(4, 8)
    with compute_precision("fp32"):
        assert lin(x).dtype == torch.float32
    with compute_precision("bf16", "cpu"):
        assert lin(x).dtype == torch.bfloat16
        with exact_arithmetic():
            assert lin(x).dtype == torch.float32  # the clipping arithmetic: never autocast
    assert lin(x).dtype == torch.float32


def test_tf32_flags_are_given_back() -> None:
    before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    with compute_precision("tf32"):
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
        with exact_arithmetic():
            assert not torch.backends.cuda.matmul.allow_tf32
            assert not torch.backends.cudnn.allow_tf32
        assert torch.backends.cuda.matmul.allow_tf32
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before


def _film() -> nn.Module:
    from privrepro.continual.peft import make_film, small_vit

    return make_film(small_vit(torch.Generator().manual_seed(0)), 4)


def _convnet() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 16 * 16, 4)
    )


@pytest.mark.parametrize(
    ("make", "engine"), [(_film, "opacus"), (_film, "privrepro"), (_convnet, "privrepro")]
)
def test_bf16_clipped_contributions_never_exceed_the_bound(make: object, engine: str) -> None:
    """One sample per physical batch: the clipped sum is that sample's clipped gradient."""
    from privrepro.training.dpsgd import _clipper

    model = make()  # type: ignore[operator]
    params = [p for p in model.parameters() if p.requires_grad]
    clipper = _clipper(engine, model, params, exact=True)
    g = torch.Generator().manual_seed(1)
    clip = 0.05  # far below the gradients' norms: every sample is clipped
    norms = []
    try:
        for _ in range(6):
            x = 10 * torch.rand(1, 3, 16, 16, generator=g)
            y = torch.randint(0, 4, (1,), generator=g)
            with compute_precision("bf16", "cpu"):
                logits = clipper.module(x)
            assert logits.dtype == torch.bfloat16
            loss = nn.functional.cross_entropy(logits.float(), y, reduction="sum")
            sums = clipper.clipped_sums(loss, 1, clip)
            assert all(s.dtype == torch.float32 for s in sums)
            norms.append(float(torch.sqrt(sum((s.double() ** 2).sum() for s in sums))))
    finally:
        clipper.close()
    assert max(norms) <= clip * (1 + 1e-6)  # float32 rounding only, as in fp32
    assert min(norms) > clip * 0.99  # and clipping was active


def test_fp32_training_is_unchanged_and_bf16_trains_close() -> None:
    from privrepro.training.dpsgd import DPSGDHyper, train_dpsgd

    g = torch.Generator().manual_seed(0)
    x, y = torch.rand(32, 3, 16, 16, generator=g), torch.randint(0, 4, (32,), generator=g)
    hp = DPSGDHyper(epochs=3, batch_size=16, lr=1e-2, clip=1.0, epsilon=None)
    base = _film()
    out = {}
    for name, kw in (
        ("default", {}),
        ("fp32", {"precision": "fp32"}),
        ("bf16", {"precision": "bf16"}),
    ):
        m = copy.deepcopy(base)
        train_dpsgd(m, x, y, hp, generator=torch.Generator().manual_seed(2), **kw)  # type: ignore[arg-type]
        out[name] = torch.cat([p.detach().flatten() for p in m.parameters() if p.requires_grad])
    assert torch.equal(out["fp32"], out["default"])  # bit for bit: the fp32 path is untouched
    start = torch.cat([p.detach().flatten() for p in base.parameters() if p.requires_grad])
    step32, step16 = out["default"] - start, out["bf16"] - start
    cosine = float(step16 @ step32 / (step16.norm() * step32.norm()))
    print(f"cosine of the bf16 and fp32 updates: {cosine:.4f}")
    # bf16 rounds the forward to 8-bit mantissas and Adam normalises each coordinate, so small
    # coordinates move differently; the update keeps its direction
    assert cosine > 0.9


def test_unit_precision_and_identities() -> None:
    from privrepro.continual.peft import FeatureSettings, TrainSettings, identity

    assert unit_precision({"train": {"epochs": 1}}) == "fp32"
    assert (
        unit_precision({"train": {"precision": "tf32"}, "features": {"precision": "bf16"}})
        == "bf16"
    )
    assert "precision" not in identity(TrainSettings())  # stored fp32 units keep their hashes
    assert identity(TrainSettings(precision="bf16"))["precision"] == "bf16"
    assert "precision" not in identity(FeatureSettings())


def test_a_bf16_feature_cache_is_apart() -> None:
    from privrepro.continual.benchmarks import FeatureSpec

    assert FeatureSpec().cache_backbone == FeatureSpec().backbone
    assert FeatureSpec(precision="bf16").cache_backbone.endswith("-bf16")


def test_a_bad_precision_setting_is_refused_before_any_compute() -> None:
    from privrepro.continual.peft import PeftRun, TrainSettings, check_settings

    with pytest.raises(ConfigError, match=r"train\.precision"):
        check_settings(PeftRun("cifar100", "peft_head", 1.0), train=TrainSettings(precision="fp16"))
