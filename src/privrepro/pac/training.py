"""Batched Monte-Carlo training: ``m`` full-batch gradient-descent runs of one MLP at once.

Algorithm 1 on the mechanism "train a model on X" (pac paper, Example 4) needs ``m`` independent
trainings, one per data draw ``X^(k)``. They share the architecture, the initialisation (the
mechanism is deterministic: a fixed init, assumed) and the step schedule, and differ only in their
data subset. Here their parameters are stacked into ``[m, ...]`` tensors and trained together (more
in ``docs/modules.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from privrepro.config.validation import ConfigError
from privrepro.loops import PLAIN, Loops

__all__ = [
    "MACHINES",
    "MODES",
    "MLPSpec",
    "choose_layout",
    "init_mlp",
    "layout_costs",
    "mlp_accuracy",
    "mlp_logits",
    "train_batched",
    "train_single",
    "train_vmap",
]


@dataclass(frozen=True)
class MLPSpec:
    """A fully connected ReLU network: ``sizes = (in, h1, ..., out)``; Example 4 is
    ``(784, 30, 30, 10)`` with 24,790 parameters (weights and biases)."""

    sizes: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.sizes) < 2 or any(s < 1 for s in self.sizes):
            raise ConfigError("sizes", self.sizes, "need >= 2 layer widths, each in [1, inf)")

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        """Parameter shapes, in order ``W1 (in x h1), b1, W2, b2, ...``."""
        out: list[tuple[int, ...]] = []
        for a, b in zip(self.sizes[:-1], self.sizes[1:], strict=True):
            out += [(a, b), (b,)]
        return out

    @property
    def n_params(self) -> int:
        return sum(math.prod(s) for s in self.shapes)

    def unflatten(self, flat: Tensor) -> list[Tensor]:
        """``[..., P]`` → per-layer tensors ``[..., *shape]``."""
        out, i = [], 0
        for s in self.shapes:
            n = math.prod(s)
            out.append(flat[..., i : i + n].reshape(*flat.shape[:-1], *s))
            i += n
        return out

    def flatten(self, params: Sequence[Tensor], batch_dims: int = 0) -> Tensor:
        """Per-layer tensors → ``[..., P]`` (``batch_dims`` leading dimensions kept)."""
        return torch.cat([p.reshape(*p.shape[:batch_dims], -1) for p in params], dim=-1)


def init_mlp(
    spec: MLPSpec,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float32,
    device: str | torch.device = "cpu",
) -> Tensor:
    """PyTorch's default ``nn.Linear`` initialisation (``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` for
    weights and biases), drawn from ``generator``, as one flat ``[P]`` vector (assumed: the paper
    does not state the initialisation)."""
    parts = []
    for shape in spec.shapes:
        fan_in = shape[0] if len(shape) == 2 else None
        parts.append((fan_in, shape))
    flat = []
    for i, (_, shape) in enumerate(parts):
        fan_in = spec.sizes[i // 2]
        bound = 1.0 / math.sqrt(fan_in)
        u = torch.rand(shape, generator=generator, dtype=torch.float64, device="cpu")
        flat.append(((2 * u - 1) * bound).reshape(-1))
    return torch.cat(flat).to(dtype=dtype, device=device)


def mlp_logits(spec: MLPSpec, flat: Tensor, x: Tensor) -> Tensor:
    """Logits of one model ``[P]`` on ``x [N, in]``, or of ``m`` models ``[m, P]`` → ``[m, N, out]``."""
    params = spec.unflatten(flat)
    h = x
    n_layers = len(spec.sizes) - 1
    for li in range(n_layers):
        w, b = params[2 * li], params[2 * li + 1]
        h = h @ w + b.unsqueeze(-2)
        if li < n_layers - 1:
            h = torch.relu(h)
    return h


def mlp_accuracy(spec: MLPSpec, flat: Tensor, x: Tensor, y: Tensor) -> Tensor:
    """Accuracy of one model (scalar) or each of ``m`` models (``[m]``) on ``(x, y)``."""
    with torch.no_grad():
        pred = mlp_logits(spec, flat, x).argmax(dim=-1)
        return (pred == y).to(torch.float64).mean(dim=-1)


def _step_batched(
    spec: MLPSpec,
    params: list[Tensor],
    x: Tensor,
    onehot: Tensor,
    weights: Tensor | float,
    lr: float,
) -> None:
    """One full-batch GD step of ``mc`` models in place. ``x`` is ``[N, in]`` (shared pool,
    ``weights [mc, N]``) or ``[mc, n, in]`` (gathered subsets, ``weights`` a scalar ``1/n``)."""
    n_layers = len(spec.sizes) - 1
    mc = params[0].shape[0]
    shared = x.dim() == 2
    acts: list[Tensor] = []  # the input of each layer (post-ReLU for hidden layers)
    h = x
    for li in range(n_layers):
        w, b = params[2 * li], params[2 * li + 1]
        acts.append(h)
        if li == 0 and shared:
            # one GEMM for all models: [N, in] @ [in, mc*h1] -> [mc, N, h1]
            z = torch.addmm(b.reshape(1, -1), h, w.permute(1, 0, 2).reshape(w.shape[1], -1))
            z = z.reshape(h.shape[0], mc, -1).permute(1, 0, 2)
        else:
            z = torch.baddbmm(b.unsqueeze(1), h, w)
        h = torch.relu_(z) if li < n_layers - 1 else z
    # cross-entropy gradient, weighted per example: d/dz sum_n w_n CE_n = w_n (softmax - onehot)
    # softmax by hand: torch.softmax over a last dimension of 10 is slow on CPU
    g = (h - h.amax(dim=-1, keepdim=True)).exp_()
    g = g.div_(g.sum(dim=-1, keepdim=True)).sub_(onehot)
    g = g.mul_(weights.unsqueeze(-1)) if isinstance(weights, Tensor) else g.mul_(weights)
    for li in reversed(range(n_layers)):
        a = acts[li]
        w = params[2 * li]
        if li == 0 and shared:
            # [in, N] @ [N, mc*h1] -> [mc, in, h1]
            gw = (a.T @ g.permute(1, 0, 2).reshape(a.shape[0], -1)).reshape(a.shape[1], mc, -1)
            gw = gw.permute(1, 0, 2)
        else:
            gw = torch.bmm(a.transpose(1, 2), g)
        gb = g.sum(dim=1)
        if li > 0:
            g = torch.bmm(g, w.transpose(1, 2)).masked_fill_(a <= 0, 0.0)  # ReLU'
        params[2 * li].sub_(gw, alpha=lr)
        params[2 * li + 1].sub_(gb, alpha=lr)


MODES = ("auto", "wide", "gather", "mask")

# The cost model's machine: a sustained GEMM rate (flop/s) and the bandwidth (bytes/s) at which a
# GEMM with a narrow output (h1 columns) streams its operands. Only their ratio (flops worth one
# byte moved) decides between the layouts. CPU: 2 cores of a current x86 server (AVX-512), the
# bandwidth set from two measurements on one (pac bench rows at m = 128 and Example 4's size, in
# one process under load): gather was 1.4x faster than wide on the digits (64-16-16-10, half of
# 1,797 images per model, each model's inputs 230 KB, in cache) and wide 1.4x faster than gather
# at Example 4's size (each model's inputs 110 MB, streamed from memory by a GEMM with 30
# outputs per row). CUDA: one H100 at half of its FP32 (non-tensor) peak and HBM3 bandwidth.
MACHINES = {"cpu": (100e9, 4e9), "cuda": (33e12, 1.6e12)}


def layout_costs(
    n_pool: int, n: int, sizes: Sequence[int], device: str | torch.device = "cpu", itemsize: int = 4
) -> dict[str, float]:
    """Predicted seconds per model and step of the ``"wide"`` and ``"gather"`` layouts of
    :func:`train_batched` (the part where they differ: layer 1) on ``device``'s kind of machine
    (:data:`MACHINES`), ``flops / rate + bytes / bandwidth``.

    Layer 1 with its bias row is ``[in+1] → h1``. ``gather`` multiplies each model's own
    ``n`` inputs (``4·n·(in+1)·h1`` flops forward and weight gradient) and streams them twice
    (``2·n·(in+1)`` items); ``wide`` multiplies the whole pool (``4·N·(in+1)·h1`` flops: ``N/n``
    times more) but streams only hidden-sized arrays: its output and gradient over the pool
    written and read (``4·N·h1``) and the subsets' rows picked and scattered (``4·n·h1``).
    """
    rate, bandwidth = MACHINES["cuda" if torch.device(device).type == "cuda" else "cpu"]
    k, h1 = sizes[0] + 1, sizes[1]
    gather = 4 * n * k * h1 / rate + 2 * n * k * itemsize / bandwidth
    wide = 4 * n_pool * k * h1 / rate + 4 * (n_pool + n) * h1 * itemsize / bandwidth
    return {"wide": wide, "gather": gather}


def choose_layout(
    n_pool: int, n: int, sizes: Sequence[int], device: str | torch.device = "cpu", itemsize: int = 4
) -> str:
    """The cheaper of ``"wide"`` and ``"gather"`` by :func:`layout_costs` (``"auto"`` mode)."""
    costs = layout_costs(n_pool, n, sizes, device, itemsize)
    return min(costs, key=costs.__getitem__)


_threshold_backward: Any = torch.ops.aten.threshold_backward.grad_input


def train_batched(
    spec: MLPSpec,
    init: Tensor,
    x: Tensor,
    y: Tensor,
    subsets: Tensor,
    steps: int,
    lr: float,
    chunk: int = 64,
    mode: str = "auto",
    loops: Loops = PLAIN,
) -> Tensor:
    """Full-batch gradient descent of ``m`` models, model ``k`` on ``(x, y)[subsets[k]]``.

    Args:
        x, y: the pool ``[N, in]`` and labels ``[N]`` on the training device; init: ``[P]``.
        subsets: ``[m, n]`` indices into the pool (one data draw ``X^(k)`` per row).
        steps, lr: the GD schedule (Example 4: 1,500 steps at 0.05); loss: mean cross-entropy.
        chunk: models trained at once (bounds memory).
        mode: ``"wide"`` (one wide model over the shared pool), ``"gather"`` (each model's inputs
            copied out once), both closed-form (:func:`_train_chunk_closed_form`); ``"mask"``
            (every model on the whole pool, weights ``1/n`` on its subset; kept for comparison);
            ``"auto"``: wide or gather, as :func:`choose_layout` predicts cheaper.

    Returns:
        ``[m, P]`` final parameters ``M(X^(k))``.
    """
    if mode not in MODES:
        raise ConfigError("mode", mode, f"must be one of {list(MODES)}")
    for key, value, ok, allowed in (
        ("steps", steps, steps >= 0, "[0, inf)"),
        ("lr", lr, lr > 0, "(0, inf)"),
        ("chunk", chunk, chunk >= 1, "[1, inf)"),
    ):
        if not ok:
            raise ConfigError(key, value, f"must lie in {allowed}")
    if mode == "auto":
        mode = choose_layout(x.shape[0], subsets.shape[1], spec.sizes, x.device, x.element_size())
    m = subsets.shape[0]
    starts = list(range(0, m, chunk))
    results = []
    with torch.no_grad():
        for s in loops(starts, "trainings"):
            idx = subsets[s : s + chunk]
            train = _train_chunk_bmm if mode == "mask" else _train_chunk_closed_form
            results.append(train(spec, init, x, y, idx, steps, lr, mode, loops))
    return torch.cat(results)


def _stacked(spec: MLPSpec, init: Tensor, mc: int) -> list[Tensor]:
    """``mc`` copies of each layer of ``init``: ``[mc, *shape]``."""
    return [p.unsqueeze(0).repeat(mc, *([1] * p.dim())).contiguous() for p in spec.unflatten(init)]


def _train_chunk_closed_form(
    spec: MLPSpec,
    init: Tensor,
    x: Tensor,
    y: Tensor,
    idx: Tensor,
    steps: int,
    lr: float,
    mode: str,
    loops: Loops = PLAIN,
) -> Tensor:
    """``steps`` full-batch GD steps of ``mc = len(idx)`` models: closed-form gradients (no
    autograd graph), every buffer allocated once, every GEMM written into its buffer (``out=``).

    Layer 1 takes its bias as one more input row (the pool with a column of ones appended), so
    that one GEMM gives its output and one its weight-and-bias gradient:

    - ``"gather"``: each model's inputs copied out once, ``[mc, n, in+1]``, and layer 1 a batched
      GEMM per model — the flops of a loop of single trainings, none of its per-call overhead.
    - ``"wide"``: layer 1 of every model is one GEMM over the shared pool ``[N, in+1] @ [in+1,
      mc·h1]`` (``N/n`` times the flops of ``gather``'s, in one wide, efficient GEMM, and no
      copy of the inputs); each model's subset picks rows of the hidden activations, and the
      gradient is one GEMM ``[in+1, N] @ [N, mc·h1]`` of the subsets' rows scattered into a
      buffer that is zero elsewhere.

    Later layers are batched GEMMs on ``[mc, n, h]`` in both, their biases added by ``baddbmm``.
    """
    mc, n = idx.shape
    n_pool, d = x.shape
    sizes = spec.sizes
    n_layers = len(sizes) - 1
    h1 = sizes[1]
    dt, dev = x.dtype, x.device
    p = spec.unflatten(init.to(dtype=dt, device=dev))
    w1_aug = torch.cat([p[0], p[1].unsqueeze(0)])  # [in+1, h1]: bias as the last input row
    # copies (``repeat``, never ``expand(...).contiguous()``: with mc = 1 that is a view of init)
    ws = [p[2 * li].repeat(mc, 1, 1) for li in range(1, n_layers)]
    bs = [p[2 * li + 1].repeat(mc, 1) for li in range(1, n_layers)]
    # outputs of every layer [mc, n, h_l] (the last: logits, then their gradient, in place)
    acts = [torch.empty((mc, n, s), dtype=dt, device=dev) for s in sizes[1:]]
    grads = [torch.empty((mc, n, s), dtype=dt, device=dev) for s in sizes[1:-1]]
    bias_grads = [torch.empty((mc, s), dtype=dt, device=dev) for s in sizes[2:]]
    onehot = torch.nn.functional.one_hot(y[idx], sizes[-1]).to(dt).div_(n)  # mean CE: 1/n
    reduced = torch.empty((mc, n, 1), dtype=dt, device=dev)
    # each weight gradient into its own buffer, then subtracted: accumulating the GEMM straight
    # into the weights (baddbmm_ with alpha = -lr) adds each of the n small products at the
    # weights' magnitude and loses float32 precision (30x the rounding of a loop after 20 steps)
    weight_grads = [torch.empty_like(ws[li - 1]) for li in range(1, n_layers)]
    weight_grads.insert(0, torch.empty((mc, d + 1, h1), dtype=dt, device=dev))
    if mode == "wide":
        x_aug = torch.cat([x, torch.ones((n_pool, 1), dtype=dt, device=dev)], dim=1)
        w1 = w1_aug.unsqueeze(1).repeat(1, mc, 1)  # [in+1, mc, h1]
        w1_flat = w1.view(d + 1, mc * h1)
        z_wide = torch.empty((n_pool, mc * h1), dtype=dt, device=dev)
        g_wide = torch.zeros((n_pool, mc * h1), dtype=dt, device=dev)
        ks = torch.arange(mc, device=dev).unsqueeze(1)
        rows = (idx * mc + ks).reshape(-1)  # row i·mc + k of [N·mc, h1]: pool item i, model k
    else:
        xs_aug = torch.cat([x[idx], torch.ones((mc, n, 1), dtype=dt, device=dev)], dim=2)
        w1 = w1_aug.repeat(mc, 1, 1)  # [mc, in+1, h1]
    for _ in loops(range(steps), "pac training steps"):  # all of them, unless ``loops`` cuts it
        if mode == "wide":
            torch.mm(x_aug, w1_flat, out=z_wide)
            torch.index_select(z_wide.view(-1, h1), 0, rows, out=acts[0].view(-1, h1))
        else:
            torch.bmm(xs_aug, w1, out=acts[0])
        for li in range(1, n_layers):
            torch.relu_(acts[li - 1])
            torch.baddbmm(bs[li - 1].unsqueeze(1), acts[li - 1], ws[li - 1], out=acts[li])
        # mean cross-entropy's gradient in the logits, in place: (softmax(z) − onehot) / n
        g = acts[-1]
        torch.amax(g, dim=-1, keepdim=True, out=reduced)
        g.sub_(reduced).exp_()
        torch.sum(g, dim=-1, keepdim=True, out=reduced)
        g.div_(reduced.mul_(n)).sub_(onehot)
        for li in reversed(range(1, n_layers)):
            a, w = acts[li - 1], ws[li - 1]
            g_in = grads[li - 1]
            torch.bmm(g, w.transpose(1, 2), out=g_in)  # before w changes
            # ReLU' in place (a = relu(z) is 0 exactly where z <= 0); threshold_backward is one
            # vectorised pass, 40x faster on CPU than masked_fill_(a == 0, 0) at these shapes
            _threshold_backward(g_in, a, 0.0, grad_input=g_in)
            w.sub_(torch.bmm(a.transpose(1, 2), g, out=weight_grads[li]), alpha=lr)
            bs[li - 1].sub_(torch.sum(g, dim=1, out=bias_grads[li - 1]), alpha=lr)
            g = g_in
        if mode == "wide":
            g_wide.view(-1, h1).index_copy_(0, rows, g.view(-1, h1))
            w1_flat.sub_(torch.mm(x_aug.T, g_wide, out=weight_grads[0].view(d + 1, -1)), alpha=lr)
        else:
            w1.sub_(torch.bmm(xs_aug.transpose(1, 2), g, out=weight_grads[0]), alpha=lr)
    w1_models = w1.permute(1, 0, 2) if mode == "wide" else w1  # [mc, in+1, h1]
    params = [w1_models[:, :d], w1_models[:, d]]
    for w, b in zip(ws, bs, strict=True):
        params += [w, b]
    return spec.flatten(params, batch_dims=1)


def _train_chunk_bmm(
    spec: MLPSpec,
    init: Tensor,
    x: Tensor,
    y: Tensor,
    idx: Tensor,
    steps: int,
    lr: float,
    mode: str,
    loops: Loops = PLAIN,
) -> Tensor:
    mc, n = idx.shape
    out_dim = spec.sizes[-1]
    params = _stacked(spec, init, mc)
    if mode == "gather":
        xs = x[idx]
        onehot = torch.nn.functional.one_hot(y[idx], out_dim).to(x.dtype)
        weights: Tensor | float = 1.0 / n
    else:
        xs = x
        onehot = torch.nn.functional.one_hot(y, out_dim).to(x.dtype).expand(mc, -1, -1)
        weights = torch.zeros((mc, x.shape[0]), dtype=x.dtype, device=x.device)
        weights.scatter_(1, idx, 1.0 / n)
        onehot = onehot.contiguous()
    for _ in loops(range(steps), "pac training steps"):  # all of them, unless ``loops`` cuts it
        _step_batched(spec, params, xs, onehot, weights, lr)
    return spec.flatten(params, batch_dims=1)


def _loss_fn(spec: MLPSpec) -> Callable[[Tensor, Tensor, Tensor], Tensor]:
    def loss(flat: Tensor, xs: Tensor, ys: Tensor) -> Tensor:
        return torch.nn.functional.cross_entropy(mlp_logits(spec, flat, xs), ys)

    return loss


def train_vmap(
    spec: MLPSpec,
    init: Tensor,
    x: Tensor,
    y: Tensor,
    subsets: Tensor,
    steps: int,
    lr: float,
    chunk: int = 64,
) -> Tensor:
    """The same as :func:`train_batched` (gather mode) by ``torch.func.vmap(torch.func.grad(...))``
    over the stacked flat parameters and the gathered subsets."""
    from torch.func import grad, vmap

    g = vmap(grad(_loss_fn(spec)))
    results = []
    for s in range(0, subsets.shape[0], chunk):
        idx = subsets[s : s + chunk]
        xs, ys = x[idx], y[idx]
        flat = init.unsqueeze(0).repeat(idx.shape[0], 1)
        for _ in range(steps):
            flat = flat - lr * g(flat, xs, ys)
        results.append(flat.detach())
    return torch.cat(results)


def train_single(
    spec: MLPSpec, init: Tensor, x: Tensor, y: Tensor, steps: int, lr: float
) -> Tensor:
    """One model, ``torch.nn.Sequential`` + autograd + ``torch.optim.SGD`` (full batch): the
    plain reference that a loop of ``m`` calls would run. Returns the final ``[P]``."""
    layers: list[torch.nn.Module] = []
    params = spec.unflatten(init)
    n_layers = len(spec.sizes) - 1
    for li in range(n_layers):
        lin = torch.nn.utils.skip_init(  # no draw from torch's global generator
            torch.nn.Linear,
            spec.sizes[li],
            spec.sizes[li + 1],
            dtype=init.dtype,
            device=init.device,
        )
        with torch.no_grad():
            lin.weight.copy_(params[2 * li].T)
            lin.bias.copy_(params[2 * li + 1])
        layers.append(lin)
        if li < n_layers - 1:
            layers.append(torch.nn.ReLU())
    net = torch.nn.Sequential(*layers)
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
    out = []
    for mod in net:
        if isinstance(mod, torch.nn.Linear):
            out += [mod.weight.detach().T, mod.bias.detach()]
    return spec.flatten(out)
