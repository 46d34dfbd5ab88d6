"""Clipped per-sample gradient sums for ``nn.Linear``, ``nn.Conv2d`` and ``nn.LayerNorm`` without
opacus.

More in ``docs/modules.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from privrepro.training.precision import exact_arithmetic, widened

__all__ = [
    "InPlaceOutputError",
    "PerSampleClipper",
    "conv2d_grad_sample",
    "layer_norm_grad_sample",
    "linear_grad_sample",
    "unsupported_modules",
]


class InPlaceOutputError(RuntimeError):
    """A hooked layer's output was modified in place (``ReLU(inplace=True)``), so its backprop
    cannot be read off it (opacus' backward hooks refuse such a model too)."""


def _supported(module: nn.Module) -> bool:
    # exact types: a subclass may change ``forward`` and with it the gradient
    if type(module) is nn.Linear or type(module) is nn.LayerNorm:
        return True
    return type(module) is nn.Conv2d and module.padding_mode == "zeros"


def unsupported_modules(model: nn.Module) -> list[str]:
    """Why :class:`PerSampleClipper` cannot train ``model``: the names of modules that own a
    trainable parameter and are not ``nn.Linear`` / ``nn.Conv2d`` (zero padding) /
    ``nn.LayerNorm``, and of
    parameters held by more than one module. Empty: supported."""
    owners: dict[int, str] = {}
    out: list[str] = []
    for name, module in model.named_modules(remove_duplicate=False):
        own = [(pn, p) for pn, p in module.named_parameters(recurse=False) if p.requires_grad]
        if not own:
            continue
        label = name or type(model).__name__
        if not _supported(module):
            out.append(f"{label} ({type(module).__name__})")
        for pn, p in own:
            if id(p) in owners and owners[id(p)] != label:
                out.append(f"{label}.{pn} (shared with {owners[id(p)]})")
            owners.setdefault(id(p), label)
    return out


def linear_grad_sample(a: Tensor, b: Tensor) -> Tensor:
    """Per-sample weight gradients ``(B, out, in)`` of ``z = a Wᵀ + bias`` from the input ``a``
    ``(B, …, in)`` and the backprops ``b = ∂loss/∂z`` ``(B, …, out)``: ``Σ_t b_{i,t} a_{i,t}ᵀ``."""
    return torch.einsum("b...o,b...i->boi", b, a)


def layer_norm_grad_sample(m: nn.LayerNorm, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Per-sample gradients of the LayerNorm ``m``'s scale and shift, each
    ``(B, *m.normalized_shape)``, from its input ``a`` ``(B, …, *normalized_shape)`` and backprops
    ``b``: ``(Σ_t b_{i,t} ⊙ x̂_{i,t}, Σ_t b_{i,t})`` with ``x̂ = (a − μ) / sqrt(σ² + eps)`` over the
    normalised dimensions (Ba et al. 2016, Eq. 4)."""
    shape = tuple(m.normalized_shape)
    xhat = F.layer_norm(a, shape, eps=m.eps)
    n = a.shape[0]
    gw = (b * xhat).reshape(n, -1, *shape).sum(1)
    gb = b.reshape(n, -1, *shape).sum(1)
    return gw, gb


def _conv_padding(m: nn.Conv2d) -> tuple[int, int, int, int]:
    """The zero padding ``m`` applies, in ``F.pad``'s order (left, right, top, bottom)."""
    if isinstance(m.padding, str):
        if m.padding == "valid":
            return (0, 0, 0, 0)
        # "same": total d (k − 1) per dimension, the smaller half first (torch's convention)
        pads: list[int] = []
        for d, k in zip(reversed(m.dilation), reversed(m.kernel_size), strict=True):
            total = d * (k - 1)
            pads += [total // 2, total - total // 2]
        return (pads[0], pads[1], pads[2], pads[3])
    ph, pw = m.padding
    return (pw, pw, ph, ph)


def conv2d_grad_sample(m: nn.Conv2d, a: Tensor, b: Tensor, method: str = "auto") -> Tensor:
    """Per-sample weight gradients ``(B, *m.weight.shape)`` of the convolution ``m`` from its
    input ``a`` ``(B, C_in, H, W)`` and backprops ``b`` ``(B, C_out, H', W')``.

    ``∇_W ℓ_i[o, c, u, v] = Σ_{h,w} b[i, o, h, w] · a_pad[i, c, s h + d u, s w + d v]`` (stride s,
    dilation d, within a group). ``method``: ``"grouped"`` — one convolution of the input (samples
    × groups as channels) with the backprops as kernels, stride and dilation swapped (Rochette et
    al. 2019); ``"unfold"`` — im2col then a batched matmul (opacus' ``compute_conv_grad_sample``);
    ``"auto"``: grouped on CPU, unfold elsewhere.
    """
    if method == "auto":
        method = "grouped" if a.device.type == "cpu" else "unfold"
    n, groups = a.shape[0], m.groups
    cin, cout = m.in_channels // groups, m.out_channels // groups
    kh, kw = m.kernel_size
    pad = _conv_padding(m)
    if any(pad):
        a = F.pad(a, pad)
    if method == "grouped":
        x = a.reshape(n * groups, cin, *a.shape[-2:]).transpose(0, 1)
        w = b.reshape(n * groups * cout, 1, *b.shape[-2:])
        g = F.conv2d(x, w, stride=m.dilation, dilation=m.stride, groups=n * groups)
        g = g[..., :kh, :kw].reshape(cin, n, groups * cout, kh, kw)
        return g.permute(1, 2, 0, 3, 4).contiguous()
    if method != "unfold":
        raise ValueError(f"method = {method!r}: must be 'auto', 'grouped' or 'unfold'")
    cols = F.unfold(a, (kh, kw), dilation=m.dilation, stride=m.stride)  # (B, C_in k², L)
    cols = cols.reshape(n, groups, cin * kh * kw, -1)
    bb = b.reshape(n, groups, cout, -1)
    g = torch.einsum("bgol,bgkl->bgok", bb, cols)
    return g.reshape(n, groups * cout, cin, kh, kw)


def _sq_norms(g: Tensor) -> Tensor:
    """``‖g_i‖²`` of per-sample tensors ``g`` ``(B, …)``."""
    return torch.linalg.vector_norm(g.reshape(g.shape[0], -1), dim=1).square()


@dataclass
class _Layer:
    module: nn.Module
    calls: list[tuple[Tensor, Tensor, int]] = field(default_factory=list)  # (a, z, z._version)


class PerSampleClipper:
    """Hooks on the trainable ``nn.Linear`` / ``nn.Conv2d`` / ``nn.LayerNorm`` layers of ``model``
    that turn one physical batch into the clipped sums of its per-sample gradients (see ``docs/modules.md``).

    Use as a context manager (the hooks are removed on exit) or call :meth:`close`.
    """

    def __init__(self, model: nn.Module, params: list[nn.Parameter], exact: bool = False) -> None:
        self.exact = exact  # a reduced-precision model: the pieces in exact float32
        bad = unsupported_modules(model)
        if bad:
            raise ValueError("per-sample clipping does not support: " + ", ".join(bad))
        self.params = params
        self._parts: dict[int, tuple[str, Tensor, Tensor | None]] = {}
        modules = [
            m for m in model.modules() if any(p.requires_grad for p in m.parameters(recurse=False))
        ]
        hooked = {id(p) for m in modules for p in m.parameters(recurse=False)}
        if any(id(p) not in hooked for p in params):
            raise ValueError("params holds parameters that are not trainable ones of the model")
        self._layers = [_Layer(m) for m in modules]
        self._handles = [la.module.register_forward_hook(self._hook(la)) for la in self._layers]

    @staticmethod
    def _hook(layer: _Layer):  # type: ignore[no-untyped-def]
        def hook(module: nn.Module, inputs: tuple[Tensor, ...], output: Tensor) -> None:
            if torch.is_grad_enabled():
                layer.calls.append((inputs[0].detach(), output, output._version))

        return hook

    def close(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []
        for layer in self._layers:
            layer.calls.clear()
        self._parts = {}

    def __enter__(self) -> PerSampleClipper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def norms(self, loss: Tensor, batch: int) -> Tensor:
        """Per-sample gradient norms ``‖g_i‖`` over all parameters of ``params`` for the
        ``batch`` samples whose summed ``loss`` was just computed through the hooked model; keeps
        what :meth:`weighted_sums` needs."""
        try:
            calls = [(la.module, a, z, v) for la in self._layers for a, z, v in la.calls]
            counts = {id(la.module): len(la.calls) for la in self._layers}
            for m, _, z, version in calls:
                if z._version != version:
                    raise InPlaceOutputError(
                        f"the output of a trainable {type(m).__name__} was modified in place "
                        "(e.g. ReLU(inplace=True)): use the out-of-place activation"
                    )
            backs = torch.autograd.grad(loss, [z for _, _, z, _ in calls], allow_unused=True)
        finally:
            for la in self._layers:
                la.calls.clear()
        per_layer: dict[int, list[tuple[Tensor, Tensor]]] = {}
        for (m, a, z, _), b in zip(calls, backs, strict=True):
            b = torch.zeros_like(z) if b is None else b
            if self.exact:  # a reduced-precision forward: 16-bit pieces cast to float32
                a, b = widened(a), widened(b)
            per_layer.setdefault(id(m), []).append((a, b))
        self._parts = {}
        sq = torch.zeros(batch, device=loss.device, dtype=loss.dtype)
        with exact_arithmetic(self.exact):
            for la in self._layers:
                if counts[id(la.module)]:
                    self._layer_parts(la.module, per_layer[id(la.module)], self._parts, sq)
        return sq.sqrt()

    def weighted_sums(self, factors: Tensor) -> list[Tensor]:
        """``Σ_i factors_i · g_i``, one tensor per parameter of ``params`` (in that order), for
        the batch of the last :meth:`norms` call (DP-SGD: the clip factors)."""
        with exact_arithmetic(self.exact):
            return self._weighted_sums(factors)

    def _weighted_sums(self, factors: Tensor) -> list[Tensor]:
        sums: list[Tensor] = []
        for p in self.params:
            if id(p) not in self._parts:  # a layer the forward did not call
                sums.append(torch.zeros_like(p))
                continue
            kind, u, v = self._parts[id(p)]
            if kind == "ghost":
                assert v is not None
                sums.append((v * factors[:, None]).T @ u)  # (c ⊙ b)ᵀ a
            else:
                sums.append((factors @ u.reshape(u.shape[0], -1)).reshape(p.shape))
        self._parts = {}
        return sums

    @staticmethod
    def _layer_parts(
        m: nn.Module,
        calls: list[tuple[Tensor, Tensor]],
        parts: dict[int, tuple[str, Tensor, Tensor | None]],
        sq: Tensor,
    ) -> None:
        """Per-sample pieces of one layer's parameters and their squared norms (added to sq)."""
        weight, bias = m.weight, m.bias  # type: ignore[union-attr]
        if isinstance(m, nn.Linear):
            if weight.requires_grad:
                if len(calls) == 1 and calls[0][0].dim() == 2:
                    a, b = calls[0]
                    sq += (a * a).sum(1) * (b * b).sum(1)
                    parts[id(weight)] = ("ghost", a, b)
                else:
                    g = sum(linear_grad_sample(a, b) for a, b in calls)
                    assert isinstance(g, Tensor)
                    sq += _sq_norms(g)
                    parts[id(weight)] = ("full", g, None)
            if bias is not None and bias.requires_grad:
                gb = sum(b.reshape(b.shape[0], -1, b.shape[-1]).sum(1) for _, b in calls)
                assert isinstance(gb, Tensor)
                sq += _sq_norms(gb)
                parts[id(bias)] = ("full", gb, None)
            return
        if isinstance(m, nn.LayerNorm):
            pieces = [layer_norm_grad_sample(m, a, b) for a, b in calls]
            for p, g in ((weight, sum(w for w, _ in pieces)), (bias, sum(c for _, c in pieces))):
                if p is not None and p.requires_grad:
                    assert isinstance(g, Tensor)
                    sq += _sq_norms(g)
                    parts[id(p)] = ("full", g, None)
            return
        assert isinstance(m, nn.Conv2d)
        if weight.requires_grad:
            g = sum(conv2d_grad_sample(m, a, b) for a, b in calls)
            assert isinstance(g, Tensor)
            sq += _sq_norms(g)
            parts[id(weight)] = ("full", g, None)
        if bias is not None and bias.requires_grad:
            gb = sum(b.sum((2, 3)) for _, b in calls)
            assert isinstance(gb, Tensor)
            sq += _sq_norms(gb)
            parts[id(bias)] = ("full", gb, None)
