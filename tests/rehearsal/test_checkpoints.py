"""Random checkpoints in the paper profile's formats load through the project's loading code."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from privrepro.rehearsal.standins import write_standin
from privrepro.rehearsal.standins.checkpoints import (
    VIT_B16,
    ip_checkpoint,
    ip_checkpoint_name,
    timm_checkpoint,
)
from privrepro.rehearsal.standins.marker import MarkedFolder


def test_timm_checkpoint_loads_as_the_backbone_weights(tmp_path: Path) -> None:
    """A small timm ViT written as its hub repository holds it (safetensors with the head)
    becomes create_backbone's weights: the head is dropped, every other tensor is the file's."""
    from safetensors.torch import load_file

    from privrepro.continual.features import create_backbone

    name = "vit_tiny_patch16_224"
    out = MarkedFolder(tmp_path, f"weights/timm/{name}", "vit-tiny", "test")
    summary = timm_checkpoint(out, name, seed=0)
    out.finish(summary)
    path = out.path / "model.safetensors"
    state = load_file(path)
    assert state["head.weight"].shape == (1000, 192)  # the checkpoint keeps timm's head
    model = create_backbone(name, weights=str(path))
    assert model.num_classes == 0 and model.num_features == 192
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key]), key
    again = timm_checkpoint(MarkedFolder(tmp_path, "again", "vit-tiny", "test"), name, seed=0)
    assert again == summary and load_file(tmp_path / "again" / "model.safetensors").keys() == (
        state.keys()
    )


def test_ip_resnet18_checkpoint_is_the_base_model(tmp_path: Path) -> None:
    """The ResNet-18 stand-in (bare state dict) is the ip base model get_base_model loads when
    ``checkpoints`` names it: its clean logits are those of the file's weights."""
    from privrepro.inference.basemodels import BaseModelSpec, get_base_model, load_state
    from privrepro.inference.data import load_image_data
    from privrepro.inference.networks import ArchSpec, build_network
    from privrepro.training.classifier import TrainConfig

    write_standin("cifar10", tmp_path / "data", {"train": 20, "test": 12})
    out = MarkedFolder(tmp_path / "data", "weights/ip", "ip-resnet18", "test")
    ip_checkpoint(out, "resnet18", "cifar10", seed=0)
    out.finish({})
    path = tmp_path / "data" / "weights" / "ip" / ip_checkpoint_name("resnet18", "cifar10")
    data = load_image_data("cifar10", tmp_path / "data", np.random.default_rng(0))
    spec = BaseModelSpec(
        ArchSpec("resnet18"), "cifar10", TrainConfig(epochs=0), checkpoint=str(path)
    )
    base = get_base_model(spec, data, tmp_path / "cache", seed=0)
    assert base.test_logits.shape == (12, 10)
    direct = build_network(ArchSpec("resnet18"), 10, 3, 32, data.mean, data.std).eval()
    load_state(direct, path)
    with torch.no_grad():
        torch.testing.assert_close(direct(data.x_test), base.test_logits, rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_ip_sll_checkpoint_loads_strictly(tmp_path: Path) -> None:
    """SLL small (20 conv, 7 dense, width 45; 41 M parameters) in a ``{"state_dict": ...}``."""
    from privrepro.inference.basemodels import load_state
    from privrepro.inference.data import CIFAR_STATS
    from privrepro.inference.networks import ArchSpec, build_network

    out = MarkedFolder(tmp_path, "weights/ip", "ip-sll", "test")
    n = ip_checkpoint(out, "sll", "cifar100", seed=0)
    path = tmp_path / "weights" / "ip" / "sll_small_cifar100.pt"
    assert "privrepro" in torch.load(path, weights_only=True)
    model = build_network(ArchSpec("sll"), 100, 3, 32, *CIFAR_STATS["cifar100"])
    load_state(model, path)  # strict: every key and shape matches
    assert n == sum(p.numel() for p in model.body.parameters())


@pytest.mark.slow
def test_vit_b16_stand_in_is_the_paper_backbone(tmp_path: Path) -> None:
    """The full ViT-B/16 stand-in (timm's ``vit_base_patch16_224.augreg_in21k``, 21,843-class
    head) loads as the cl paper profile's backbone: 768-d features of a 224 px image."""
    from privrepro.continual.features import create_backbone, extract_features

    written = write_standin("vit-b16", tmp_path)
    path = written.folder / "model.safetensors"
    # timm vit_base_patch16_224: 86,567,656 with a 1,000-class head (768·1000 + 1000 of it)
    assert written.summary["parameters"] == 86_567_656 - 769_000 + 768 * 21_843 + 21_843
    model = create_backbone(VIT_B16, weights=str(path))
    image = np.random.default_rng(0).integers(0, 256, (1, 224, 224, 3), dtype=np.uint8)
    assert extract_features(model, image).shape == (1, 768)
