"""The precision switch on CUDA (``privrepro.training.precision``): TF32 and bf16 autocast put
ViT matmuls on the tensor cores while DP-SGD's clipping stays exact float32 — each sample's
clipped contribution has a norm of at most C up to float32 rounding, on the opacus (FiLM) and
the project's per-sample (convnet) paths; a bf16 FiLM training on CUDA stays close to fp32 in
direction; bf16 features agree with fp32 to bfloat16 precision.

Marked ``gpu``: skipped with one line where no CUDA device is present (``tests/conftest.py``).
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from privrepro.training.precision import compute_precision

pytestmark = pytest.mark.gpu

CUDA = torch.device("cuda")


def _film() -> nn.Module:
    from privrepro.continual.peft import make_film, small_vit

    return make_film(small_vit(torch.Generator().manual_seed(0)), 4).to(CUDA)


def _convnet() -> nn.Module:
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 16 * 16, 4)
    )
    return net.to(CUDA)


@pytest.mark.parametrize("precision", ["tf32", "bf16"])
@pytest.mark.parametrize(("make", "engine"), [(_film, "opacus"), (_convnet, "privrepro")])
def test_clipped_contributions_never_exceed_the_bound_on_cuda(
    make: object, engine: str, precision: str
) -> None:
    from privrepro.training.dpsgd import _clipper
    from privrepro.training.precision import backward_precision

    model = make()  # type: ignore[operator]
    params = [p for p in model.parameters() if p.requires_grad]
    clipper = _clipper(engine, model, params, exact=True)
    g = torch.Generator().manual_seed(1)
    clip, norms = 0.05, []
    try:
        for _ in range(6):
            x = (10 * torch.rand(1, 3, 16, 16, generator=g)).to(CUDA)
            y = torch.randint(0, 4, (1,), generator=g).to(CUDA)
            with compute_precision(precision, CUDA):
                logits = clipper.module(x)
            loss = nn.functional.cross_entropy(logits.float(), y, reduction="sum")
            with backward_precision(precision):
                sums = clipper.clipped_sums(loss, 1, clip)
            norms.append(float(torch.sqrt(sum((s.double() ** 2).sum() for s in sums))))
    finally:
        clipper.close()
    assert max(norms) <= clip * (1 + 1e-6)
    assert min(norms) > clip * 0.99


def test_bf16_film_training_on_cuda_keeps_the_fp32_direction() -> None:
    from privrepro.training.dpsgd import DPSGDHyper, train_dpsgd

    g = torch.Generator().manual_seed(0)
    x = torch.rand(32, 3, 16, 16, generator=g).to(CUDA)
    y = torch.randint(0, 4, (32,), generator=g).to(CUDA)
    hp = DPSGDHyper(epochs=3, batch_size=16, lr=1e-2, clip=1.0, epsilon=None)
    base = _film()
    start = torch.cat([p.detach().flatten() for p in base.parameters() if p.requires_grad])
    steps = {}
    for precision in ("fp32", "bf16"):
        m = copy.deepcopy(base)
        gen = torch.Generator(device=CUDA).manual_seed(2)
        train_dpsgd(m, x, y, hp, generator=gen, precision=precision)
        end = torch.cat([p.detach().flatten() for p in m.parameters() if p.requires_grad])
        steps[precision] = end - start
    cosine = steps["bf16"] @ steps["fp32"] / (steps["bf16"].norm() * steps["fp32"].norm())
    assert float(cosine) > 0.9


def test_bf16_features_agree_with_fp32_on_cuda() -> None:
    import numpy as np

    from privrepro.continual.features import extract_features
    from privrepro.continual.peft import small_vit

    vit = small_vit(torch.Generator().manual_seed(0), img_size=32, patch_size=8)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (16, 32, 32, 3), dtype=np.uint8)

    def tf(im: object) -> torch.Tensor:
        return torch.as_tensor(np.asarray(im), dtype=torch.float32).permute(2, 0, 1) / 255

    f32 = extract_features(vit, images, 8, "cuda", transform=tf)
    f16 = extract_features(vit, images, 8, "cuda", transform=tf, precision="bf16")
    assert f16.dtype == np.float32
    rel = np.linalg.norm(f16 - f32, axis=1) / np.linalg.norm(f32, axis=1)
    assert rel.max() < 0.05  # bfloat16's 8-bit mantissa through two blocks
