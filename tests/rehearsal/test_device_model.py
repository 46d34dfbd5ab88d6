"""The device model against closed forms: datasheet peaks per precision, per-class efficiencies,
attention FLOPs the CPU's fused kernel hides from ``FlopCounterMode``, and a FiLM step's
counted FLOPs per image against a ViT's shapes."""

from __future__ import annotations

import pytest
import torch

from privrepro.rehearsal.device_model import (
    A100,
    DEVICES,
    EFFICIENCIES,
    H100,
    H100_PCIE,
    V100,
    DeviceModel,
    operator_class,
)
from privrepro.rehearsal.film_pricing import (
    StepCount,
    closed_form_vit_flops,
    count_film_steps,
    count_operators,
)


@pytest.mark.parametrize(
    ("device", "fp32", "tf32", "bf16", "bandwidth"),
    [
        # NVIDIA datasheets, dense (half the "with sparsity" tensor-core figures)
        (H100, 67e12, 494e12, 989e12, 3.35e12),
        (H100_PCIE, 51e12, 378e12, 756e12, 2.0e12),
        (A100, 19.5e12, 156e12, 312e12, 2.039e12),
        # no TF32 on a V100: at its FP32 rate; reduced precision on its FP16 tensor cores
        (V100, 15.7e12, 15.7e12, 125e12, 0.9e12),
    ],
)
def test_peaks_follow_the_datasheets_per_precision(
    device: DeviceModel, fp32: float, tf32: float, bf16: float, bandwidth: float
) -> None:
    assert device.peak("matmul", "fp32") == fp32
    assert device.peak("matmul", "tf32") == device.peak("attention", "tf32") == tf32
    assert device.peak("matmul", "bf16") == device.peak("convolution", "bf16") == bf16
    assert device.peak("convolution", "fp32") == tf32  # cuDNN's TF32 default
    assert device.bandwidth == bandwidth
    assert DEVICES[device.name] is device


def test_each_class_runs_at_its_own_efficiency() -> None:
    """A compute-bound operator of F FLOPs takes F / (peak × efficiency(class)); a FLOP-free
    one its bytes at the memory efficiency; nothing under one launch."""
    f, b = 1e15, 1.0
    for c in ("matmul", "attention", "convolution"):
        eff = EFFICIENCIES[c][0]
        assert H100.op_seconds(c, f, b, "bf16") == pytest.approx(f / (989e12 * eff))
    nbytes = 1e12
    assert H100.op_seconds("memory", 0.0, nbytes) == pytest.approx(
        nbytes / (3.35e12 * EFFICIENCIES["memory"][0])
    )
    assert H100.op_seconds("memory", 0.0, 1.0) == H100.launch_s
    assert all(len(why) > 20 for _, why in EFFICIENCIES.values())  # each states its source


def test_the_cpu_fused_attention_is_counted_from_its_shapes() -> None:
    """``FlopCounterMode`` counts nothing for ``_scaled_dot_product_flash_attention_for_cpu``;
    the count adds QKᵀ and AV (2 · B·H·L²·D each) forward, 2.5× that backward (torch's
    ``sdpa_backward_flop_count``: five products)."""
    from torch.utils.flop_counter import FlopCounterMode

    b, h, seq, d = 2, 3, 17, 8
    q = torch.randn(b, h, seq, d, requires_grad=True)

    def run() -> None:
        torch.nn.functional.scaled_dot_product_attention(q, q, q).sum().backward()

    with FlopCounterMode(display=False) as plain:
        run()
    assert plain.get_total_flops() == 0  # the gap this count closes
    ops = count_operators(run)
    attention = [(n, f) for n, f, _ in ops if operator_class(n, f) == "attention"]
    forward = 4 * b * h * seq * seq * d
    assert [f for _, f in attention] == [forward, 2.5 * forward]


def test_a_film_step_counts_a_vits_flops_per_image() -> None:
    """One FiLM DP-SGD step of a two-block ViT (dim 32, 32² images, 8² patches: 17 tokens),
    per image: the patch embedding once (its input is the image, its weight frozen), the
    blocks' products forward and backward to the input (2×), the attention 3.5× its forward,
    plus the head's few products (2 · dim · labels each, at most six)."""
    import timm

    vit = timm.create_model(
        "vit_tiny_patch16_224",
        pretrained=False,
        num_classes=0,
        img_size=32,
        patch_size=8,
        depth=2,
        embed_dim=32,
        num_heads=2,
    )
    step = count_film_steps("fp32", backbone=vit, img_size=32, labels=10)
    per = step.flops_per_image()
    ref = closed_form_vit_flops(depth=2, dim=32, tokens=17, patch=8)
    assert per["convolution"] == pytest.approx(ref["convolution"])
    assert per["attention"] == pytest.approx(3.5 * ref["attention"])
    head = 2 * 32 * 10
    assert 2 * ref["matmul"] <= per["matmul"] <= 2 * ref["matmul"] + 6 * head
    # priced at a batch: the same operators, larger; a larger batch amortises the launches
    small, big = step.seconds_per_image(H100, 4), step.seconds_per_image(H100, 256)
    assert sum(big.values()) < sum(small.values())


def test_two_counts_of_another_code_path_are_refused() -> None:
    with pytest.raises(ValueError, match="differ"):
        StepCount(1, 2, (("mm", 1.0, 1.0),), (("addmm", 2.0, 2.0),), "fp32")


def test_a_cap_prices_on_the_device_model_it_is_given(tmp_path: object) -> None:
    """The same loop of 1024³ matmuls (compute-bound on both rooflines: 2.1 GFLOP against
    12.6 MB) under an H100 SXM cap and a V100 cap (``--gpu-model``): equal FLOPs, device times
    67 / 15.7 apart (their FP32 peaks); the setting survives the trip to a figure's process."""
    from pathlib import Path

    from privrepro.rehearsal.cap import RehearsalCap
    from privrepro.rehearsal.rehearse import _child_settings, settings_json
    from privrepro.rehearsal.settings import RehearsalSettings

    root = Path(str(tmp_path))
    a = torch.ones(1024, 1024)
    device_s = {}
    for gpu in (H100, V100):
        cap = RehearsalCap(items=2, gpu=gpu)
        with cap.active():
            for _ in cap(range(4), "steps"):
                a @ a
        device_s[gpu.name] = cap.records[0].device_s
    assert device_s[V100.name] / device_s[H100.name] == pytest.approx(67 / 15.7, rel=1e-6)
    settings = RehearsalSettings(root, root, gpu_model=V100.name)
    assert _child_settings(settings_json(settings)).gpu_model == V100.name
