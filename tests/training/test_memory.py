"""Device-memory predictions of a DP-SGD step (``privrepro.training.memory``) against closed
forms: timm's parameter counts, the per-sample gradient sizes of each clipping method, and the
search for settings that fit."""

from __future__ import annotations

import pytest

from privrepro.config import ConfigError
from privrepro.training.memory import (
    RUNTIME_BYTES,
    VIT_B16,
    ViTShape,
    film_step_memory,
    head_step_memory,
    settings_that_fit,
)


def test_vit_b16_parameter_counts_are_timms_and_the_papers() -> None:
    """Reference: timm's ``vit_base_patch16_224`` without a head (built on the meta device) and
    the cl paper's 115,300 FiLM parameters for 100 labels (Sec. 6)."""
    import timm
    import torch

    from privrepro.continual.peft import vit_b16_film_count

    with torch.device("meta"):
        vit = timm.create_model("vit_base_patch16_224", pretrained=False, num_classes=0)
    assert VIT_B16.backbone_params == sum(p.numel() for p in vit.parameters())
    assert VIT_B16.tokens == 197 and VIT_B16.layer_norms == 25
    assert VIT_B16.trainable_params(100) == vit_b16_film_count(100) == 115_300


def test_opacus_holds_the_heads_per_sample_gradients_the_own_clipper_does_not() -> None:
    """opacus' grad_sample is B × (trainable parameters) float32 values: 78.75 GB for CIFAR-100
    ×1000 (100,000 labels) at a chunk of 256 (cl paper Sec. 7.1), plus, while opacus 1.5's
    ``create_or_accumulate_grad_sample`` copies it into a new zero buffer, the head weight's
    B × L × h once more; the project's clipper grows
    by the head's weights and the logits only, linearly in labels: slope 6·4·(h + 1) + 4·4·B
    bytes per label (weights, Adam, gradient, sum, noise; four B × L float32 logits)."""
    big = film_step_memory(VIT_B16, 100_000, 256, "fp32", "opacus")
    head_weight = 256 * 4 * 100_000 * VIT_B16.dim
    held = big.terms["per-sample gradients"] - head_weight
    assert held == 256 * 4 * VIT_B16.trainable_params(100_000)
    assert held == pytest.approx(78.75e9, rel=1e-3)
    own = [film_step_memory(VIT_B16, n, 256, "fp32", "privrepro") for n in (100, 100_100)]
    assert own[1].terms["per-sample gradients"] == own[0].terms["per-sample gradients"]
    assert own[1].bytes - own[0].bytes == 100_000 * (6 * 4 * 769 + 4 * 4 * 256)
    assert own[1].bytes < big.bytes / 3
    # bf16 halves the 16-bit activations (LayerNorm inputs stay float32) and adds a bf16 copy
    # of the trainable parameters
    half = film_step_memory(VIT_B16, 100, 256, "bf16", "privrepro")
    assert own[0].terms["activations"] / 2 < half.terms["activations"] < own[0].terms["activations"]
    assert film_step_memory(VIT_B16, 100, 256, "tf32").bytes == own[0].bytes


def test_settings_that_fit_name_the_largest_chunk_that_fits() -> None:
    shape = ViTShape(image=32, patch=8, dim=64, depth=2, heads=2)
    step = film_step_memory(shape, 50_000, 64, "fp32", "opacus")
    own = film_step_memory(shape, 50_000, 64, "fp32", "privrepro")
    budget = (own.bytes + step.bytes) // 2
    fits = settings_that_fit(shape, 50_000, 64, "fp32", "opacus", budget)
    assert fits[0] == ("engine", "privrepro")
    chunk = dict(fits)["physical_batch"]
    assert isinstance(chunk, int)
    assert film_step_memory(shape, 50_000, chunk, "fp32", "opacus").bytes <= budget
    assert film_step_memory(shape, 50_000, 2 * chunk, "fp32", "opacus").bytes > budget
    assert settings_that_fit(shape, 50_000, 64, "fp32", "opacus", RUNTIME_BYTES) == []


def test_head_step_and_bad_values() -> None:
    step = head_step_memory(768, 100_000, 60_000, 5_000)
    assert step.terms["batch"] == 4 * 5_000 * (768 + 4 * 100_000)
    assert step.largest == "batch"
    with pytest.raises(ConfigError, match="engine"):
        film_step_memory(VIT_B16, 10, 8, "fp32", "jax")
    with pytest.raises(ConfigError, match="physical_batch"):
        film_step_memory(VIT_B16, 10, 0)
    with pytest.raises(ConfigError, match="precision"):
        film_step_memory(VIT_B16, 10, 8, "fp16")
