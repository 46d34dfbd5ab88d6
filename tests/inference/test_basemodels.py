"""Base models: trained once and cached; a user's checkpoint loads with weights_only=True."""

from __future__ import annotations

from pathlib import Path

import torch

from privrepro.inference.basemodels import BaseModelSpec, get_base_model, save_state
from privrepro.inference.data import ImageData
from privrepro.inference.networks import ArchSpec
from privrepro.training.classifier import TrainConfig


def _data() -> ImageData:
    g = torch.Generator().manual_seed(0)
    x = torch.rand(90, 1, 4, 4, generator=g)
    y = torch.randint(0, 3, (90,), generator=g)
    return ImageData("toy", x[:50], y[:50], x[50:60], y[50:60], x[60:], y[60:], 3, (0.5,), (0.3,))


SPEC = BaseModelSpec(
    ArchSpec("sll", depth_conv=1, depth_linear=1, width=2, conv_inner=2, linear_inner=8, pool=2),
    "toy",
    TrainConfig(epochs=1, batch_size=25),
    loss="margin_xent",
)


def test_trained_once_then_loaded(tmp_path: Path) -> None:
    data = _data()
    first = get_base_model(SPEC, data, tmp_path, seed=3)
    assert (first.path / "model.pt").is_file()
    again = get_base_model(SPEC, data, tmp_path, seed=3)
    assert torch.equal(first.test_logits, again.test_logits)
    assert again.clean_accuracy == first.clean_accuracy
    for a, b in zip(
        first.model.state_dict().values(), again.model.state_dict().values(), strict=True
    ):
        assert torch.equal(a, b)
    other = get_base_model(SPEC, data, tmp_path, seed=4)  # another root seed: another model
    assert other.key != first.key


def test_user_checkpoint_of_the_body(tmp_path: Path) -> None:
    data = _data()
    trained = get_base_model(SPEC, data, tmp_path / "a", seed=1)
    ckpt = tmp_path / "body.pt"
    save_state(trained.model.body, ckpt)  # a checkpoint without the normaliser
    spec = BaseModelSpec(SPEC.arch, "toy", SPEC.train, loss="margin_xent", checkpoint=str(ckpt))
    loaded = get_base_model(spec, data, tmp_path / "b", seed=2)
    assert torch.allclose(loaded.test_logits, trained.test_logits)
