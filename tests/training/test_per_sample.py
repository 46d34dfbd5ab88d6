"""The project's per-sample clipping against opacus' GradSampleModule (the reference).

Every comparison runs in float64; the per-sample gradients are the same sums in another order,
so they agree to 1e-10 (absolute, on gradients of order 1).
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from privrepro.config import ConfigError
from privrepro.training.dpsgd import DPSGDHyper, clip_factors, privacy_record, train_dpsgd
from privrepro.training.per_sample import (
    InPlaceOutputError,
    PerSampleClipper,
    conv2d_grad_sample,
    unsupported_modules,
)

TOL = 1e-10
D = torch.float64


def _opacus_grad_samples(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> list[torch.Tensor]:
    from opacus import GradSampleModule

    gsm = GradSampleModule(model, batch_first=True, loss_reduction="sum")
    try:
        nn.functional.cross_entropy(gsm(x), y, reduction="sum").backward()
        out = [p.grad_sample.clone() for p in model.parameters() if p.requires_grad]
    finally:
        for p in model.parameters():
            p.grad_sample = None
            p.grad = None
        gsm._close()
    return out


def _convnet(groups: int = 1, stride: int = 1, dilation: int = 1, padding: object = 0) -> nn.Module:
    """Conv(3×3, padding 1) → ReLU → Conv((3, 2), the case's stride, dilation, groups and
    padding; "same" pads the width 0 left, 1 right) → tanh → Linear."""
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1, dtype=D),
        nn.ReLU(),
        nn.Conv2d(
            4,
            6,
            (3, 2),
            stride=stride,
            dilation=dilation,
            groups=groups,
            padding=padding,  # type: ignore[arg-type]
            dtype=D,
        ),
        nn.Tanh(),
        nn.Flatten(),
        nn.LazyLinear(3, dtype=D),
    )


def _data(n: int = 7, seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 2, 9, 8, generator=g, dtype=D), torch.randint(0, 3, (n,), generator=g)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"padding": 2},
        {"groups": 2},
        {"stride": 2},
        {"dilation": 2, "stride": 3},
        {"padding": "same"},
        {"padding": "valid"},
    ],
    ids=["plain", "padding", "groups", "stride", "dilation+stride", "same", "valid"],
)
@pytest.mark.parametrize("method", ["grouped", "unfold"])
def test_conv2d_grad_sample_equals_opacus(kw, method):
    """Reference: opacus' per-sample gradients of the summed cross-entropy."""
    model = _convnet(**kw)
    x, y = _data()
    model(x)  # materialise the lazy layer
    ref = _opacus_grad_samples(model, x, y)
    convs = [m for m in model if isinstance(m, nn.Conv2d)]
    keep: dict[nn.Module, tuple[torch.Tensor, torch.Tensor]] = {}
    hooks = [m.register_forward_hook(lambda m, i, o: keep.__setitem__(m, (i[0], o))) for m in convs]
    loss = nn.functional.cross_entropy(model(x), y, reduction="sum")
    for h in hooks:
        h.remove()
    backs = torch.autograd.grad(loss, [keep[m][1] for m in convs])
    got = [
        conv2d_grad_sample(m, keep[m][0].detach(), b, method)
        for m, b in zip(convs, backs, strict=True)
    ]
    assert torch.allclose(got[0], ref[0], atol=TOL, rtol=0)
    assert torch.allclose(got[1], ref[2], atol=TOL, rtol=0)


def _clipped_sums_opacus(model, x, y, clip):
    gs = _opacus_grad_samples(model, x, y)
    norms = torch.stack([g.reshape(g.shape[0], -1).norm(dim=1) for g in gs]).norm(dim=0)
    c = clip_factors(norms, clip)
    return norms, [torch.einsum("i,i...->...", c, g) for g in gs]


class _Seq(nn.Module):
    """A linear layer on token sequences (B, T, d) (per-sample gradients by einsum) and one on
    flat inputs (ghost norm), a frozen layer between them, and a layer called twice."""

    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Linear(5, 4, dtype=D)
        self.frozen = nn.Linear(4, 4, dtype=D).requires_grad_(False)
        self.twice = nn.Linear(4, 4, bias=False, dtype=D)
        self.head = nn.Linear(4, 3, dtype=D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.frozen(torch.tanh(self.tok(x)))).mean(1)
        return self.head(torch.tanh(self.twice(torch.tanh(self.twice(h)))))


@pytest.mark.parametrize("clip", [0.05, 1.0, math.inf])
@pytest.mark.parametrize("kind", ["convnet", "sequence"])
def test_norms_and_clipped_sums_equal_opacus(kind, clip):
    torch.manual_seed(3)
    if kind == "convnet":
        model = _convnet(groups=2)
        x, y = _data(n=9)
        model(x)
    else:
        model = _Seq()
        g = torch.Generator().manual_seed(2)
        x, y = torch.randn(9, 6, 5, generator=g, dtype=D), torch.randint(0, 3, (9,), generator=g)
    ref_norms, ref_sums = _clipped_sums_opacus(model, x, y, clip)
    params = [p for p in model.parameters() if p.requires_grad]
    with PerSampleClipper(model, params) as clipper:
        norms = clipper.norms(nn.functional.cross_entropy(model(x), y, reduction="sum"), 9)
        sums = clipper.weighted_sums(clip_factors(norms, clip))
    assert torch.allclose(norms, ref_norms, atol=TOL, rtol=0)
    if clip == 0.05:
        assert (norms > clip).all()  # clipping is active for every sample
    for got, want in zip(sums, ref_sums, strict=True):
        assert torch.allclose(got, want, atol=TOL, rtol=0)
    assert all(p.grad is None for p in params)  # no batch gradient was computed


def test_train_dpsgd_engines_agree_with_clipping_noise_and_chunks():
    """The whole DP-SGD run (Poisson batches split in physical chunks, clipping active, σ > 0,
    Adam) with either engine: same draws from the generator, same parameters to 1e-10."""
    x, y = _data(n=60, seed=4)
    hp = DPSGDHyper(epochs=2, batch_size=12, lr=1e-2, clip=0.3, epsilon=1.0, accountant="rdp")
    rec = privacy_record(60, hp)
    a = _convnet(stride=2)
    a(x)
    b = _convnet(stride=2)
    b(x)
    b.load_state_dict(a.state_dict())
    logs = [
        train_dpsgd(
            m,
            x,
            y,
            hp,
            generator=torch.Generator().manual_seed(7),
            privacy=rec,
            physical_batch=5,
            engine=e,
        )
        for m, e in ((a, "privrepro"), (b, "opacus"))
    ]
    assert rec.noise_multiplier > 0 and logs[0].steps == 10
    assert logs[0].mean_batch == logs[1].mean_batch
    assert logs[0].last_loss == pytest.approx(logs[1].last_loss, abs=1e-9)
    for (name, pa), pb in zip(a.named_parameters(), b.parameters(), strict=True):
        assert torch.allclose(pa, pb, atol=TOL, rtol=0), name


def _film(labels: int = 5) -> nn.Module:
    """The smoke FiLM model in float64: the small timm ViT (2 blocks, 5 LayerNorms) with only
    LayerNorm scale and shift and a linear head trainable (cl paper, Sec. 6); the LayerNorms and
    the head get random values, so every parameter has a gradient (a zero head would back-propagate
    nothing into the LayerNorms)."""
    from privrepro.continual.peft import make_film, small_vit

    g = torch.Generator().manual_seed(5)
    model = make_film(small_vit(torch.Generator().manual_seed(0)).double(), labels)
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad:
                p.add_(0.5 * torch.randn(p.shape, generator=g, dtype=D))
    return model


def _brute_force_grads(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> list[torch.Tensor]:
    """Per-sample gradients one sample at a time by plain autograd: ``(B, *p.shape)`` each."""
    params = [p for p in model.parameters() if p.requires_grad]
    per = [
        torch.autograd.grad(
            nn.functional.cross_entropy(model(x[i : i + 1]), y[i : i + 1], reduction="sum"),
            params,
        )
        for i in range(x.shape[0])
    ]
    return [torch.stack(gs) for gs in zip(*per, strict=True)]


@pytest.mark.parametrize("clip", [0.05, math.inf])
def test_film_norms_and_clipped_sums_equal_opacus_and_brute_force(clip):
    """FiLM on the smoke ViT: the LayerNorm rule and the head's ghost norm give opacus'
    per-sample norms and clipped sums, and those of a per-sample autograd loop (float64,
    1e-10); no per-sample gradient of the head is formed and no batch gradient computed."""
    model = _film()
    g = torch.Generator().manual_seed(6)
    x, y = torch.rand(7, 3, 16, 16, generator=g, dtype=D), torch.randint(0, 5, (7,), generator=g)
    assert unsupported_modules(model) == []
    brute = _brute_force_grads(model, x, y)
    brute_norms = torch.stack([b.reshape(7, -1).norm(dim=1) for b in brute]).norm(dim=0)
    ref_norms, ref_sums = _clipped_sums_opacus(model, x, y, clip)
    params = [p for p in model.parameters() if p.requires_grad]
    with PerSampleClipper(model, params) as clipper:
        norms = clipper.norms(nn.functional.cross_entropy(model(x), y, reduction="sum"), 7)
        kinds = {
            n: clipper._parts[id(p)][0] for n, p in model.named_parameters() if p.requires_grad
        }
        sums = clipper.weighted_sums(clip_factors(norms, clip))
    assert kinds["head.weight"] == "ghost"  # ‖b_i‖·‖a_i‖: no (B, labels, d) tensor
    assert torch.allclose(norms, ref_norms, atol=TOL, rtol=0)
    assert torch.allclose(norms, brute_norms, atol=TOL, rtol=0)
    if clip == 0.05:
        assert (norms > clip).all()
    c = clip_factors(brute_norms, clip)
    for got, want, b in zip(sums, ref_sums, brute, strict=True):
        assert torch.allclose(got, want, atol=TOL, rtol=0)
        assert torch.allclose(got, torch.einsum("i,i...->...", c, b), atol=TOL, rtol=0)
    assert all(p.grad is None for p in params)


def test_film_trains_through_the_own_clipper_as_through_opacus():
    """A whole FiLM DP-SGD run (Poisson batches in physical chunks, clipping active, σ > 0):
    ``auto`` now takes the project's clipper; it draws the same batches and noise from the
    generator as opacus and ends at the same parameters (float64, 1e-9: the clipped sums agree
    to summation order, the noise N(0, (σC)²) is the same draw)."""
    g = torch.Generator().manual_seed(8)
    x, y = torch.rand(40, 3, 16, 16, generator=g, dtype=D), torch.randint(0, 5, (40,), generator=g)
    hp = DPSGDHyper(epochs=1, batch_size=10, lr=1e-2, clip=0.2, epsilon=2.0, accountant="rdp")
    rec = privacy_record(40, hp)
    a, b = _film(), _film()
    for m, e in ((a, "auto"), (b, "opacus")):
        train_dpsgd(
            m,
            x,
            y,
            hp,
            generator=torch.Generator().manual_seed(9),
            privacy=rec,
            physical_batch=4,
            engine=e,
        )
    assert rec.noise_multiplier > 0
    for (name, pa), pb in zip(a.named_parameters(), b.parameters(), strict=True):
        assert torch.allclose(pa, pb, atol=1e-9, rtol=0), name


def test_unsupported_modules_fall_back_to_opacus():
    gn = nn.Sequential(
        nn.Linear(4, 4, dtype=D), nn.GroupNorm(2, 4, dtype=D), nn.Linear(4, 2, dtype=D)
    )
    assert unsupported_modules(gn) == ["1 (GroupNorm)"]
    gn[1].requires_grad_(False)
    assert unsupported_modules(gn) == []
    ln = nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4), nn.LayerNorm(4, elementwise_affine=False))
    assert unsupported_modules(ln) == []  # the LayerNorm rule

    class _SubNorm(nn.LayerNorm):  # a subclass may change forward: refused
        pass

    assert unsupported_modules(nn.Sequential(_SubNorm(3))) == ["0 (_SubNorm)"]
    tied = nn.Sequential(nn.Linear(3, 3, bias=False), nn.Linear(3, 3, bias=False))
    tied[1].weight = tied[0].weight
    assert unsupported_modules(tied) == ["1.weight (shared with 0)"]
    with pytest.raises(ValueError, match="GroupNorm"):
        PerSampleClipper(nn.Sequential(nn.GroupNorm(1, 3)), [])
    # auto: the GroupNorm model trains through opacus, like engine="opacus", draw for draw
    gn[1].requires_grad_(True)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(20, 4, generator=g, dtype=D), torch.randint(0, 2, (20,), generator=g)
    hp = DPSGDHyper(epochs=1, batch_size=5, lr=1e-2, clip=0.5, epsilon=2.0, accountant="rdp")
    twin = nn.Sequential(
        nn.Linear(4, 4, dtype=D), nn.GroupNorm(2, 4, dtype=D), nn.Linear(4, 2, dtype=D)
    )
    twin.load_state_dict(gn.state_dict())
    for m, e in ((gn, "auto"), (twin, "opacus")):
        train_dpsgd(m, x, y, hp, generator=torch.Generator().manual_seed(1), engine=e)
    for pa, pb in zip(gn.parameters(), twin.parameters(), strict=True):
        assert torch.equal(pa, pb)


def test_inplace_activation_on_a_layer_output_is_refused():
    """``ReLU(inplace=True)`` overwrites the conv output the hook kept, so its backprop would be
    the ReLU's: refused with a one-line error before any update (opacus refuses it too)."""
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(2, 3, 3, dtype=D), nn.ReLU(inplace=True), nn.Flatten(), nn.LazyLinear(3, dtype=D)
    )
    x, y = _data(n=12)
    model(x)
    before = [p.detach().clone() for p in model.parameters()]
    hp = DPSGDHyper(epochs=1, batch_size=4, lr=1e-2, clip=0.5, epsilon=2.0, accountant="rdp")
    with pytest.raises(InPlaceOutputError, match="in place"):
        train_dpsgd(model, x, y, hp, generator=torch.Generator().manual_seed(1))
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), before, strict=True))
    with pytest.raises(RuntimeError, match="inplace"):
        train_dpsgd(model, x, y, hp, generator=torch.Generator().manual_seed(1), engine="opacus")


def test_bad_engine_is_a_config_error():
    with pytest.raises(ConfigError, match="engine"):
        train_dpsgd(
            nn.Linear(2, 2),
            torch.zeros(4, 2),
            torch.zeros(4, dtype=torch.long),
            DPSGDHyper(),
            generator=torch.Generator(),
            engine="jax",
        )
