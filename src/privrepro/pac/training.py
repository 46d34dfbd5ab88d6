"""Batched Monte-Carlo training: ``m`` full-batch gradient-descent runs of one MLP at once.

Algorithm 1 on the mechanism "train a model on X" (pac paper, Example 4) needs ``m`` independent
trainings, one per data draw ``X^(k)``. They share the architecture, the initialisation (the
mechanism is deterministic: a fixed init, assumed) and the step schedule, and differ only in their
data subset. Here their parameters are stacked into ``[m, ...]`` tensors and trained together:

- ``train_batched``: hand-written forward/backward. The default ``"wide"`` mode trains the
  models as one wide model over the shared pool: the first layer of all of them is one GEMM
  ``X [N, in] @ [W1_1 | ... | W1_m]`` and its gradient one GEMM ``X^T @ G``, each model's subset
  selects rows of the hidden activations (an index list, never a copy of the inputs), and the
  later, narrow layers run as batched matmuls on ``[m, n, h]``. Two older layouts stay for
  comparison: ``"gather"`` copies each model's inputs ``X[idx_k]`` (``[m, n, in]``: the memory
  traffic of a loop) and ``"mask"`` runs every layer of every model on the whole pool with
  weights ``1/n`` on its subset.
- ``train_vmap``: ``torch.func.vmap`` of ``torch.func.grad`` over stacked parameters and data.
- ``train_single``: one model, ``torch.nn`` + autograd: the loop baseline and the reference.

All three give the same weights up to float rounding (tests check it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from privrepro.config.validation import ConfigError
from privrepro.rehearsal.cap import capped

__all__ = [
    "MLPSpec",
    "init_mlp",
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


MODES = ("wide", "gather", "mask")


def _step_wide(
    spec: MLPSpec,
    params: list[Tensor],
    x: Tensor,
    rows: Tensor,
    onehot: Tensor,
    inv_n: float,
    lr: float,
    grad_wide: Tensor,
) -> None:
    """One full-batch GD step of ``mc`` models as one wide model over the shared pool ``x``.

    Layer 1 of every model is one GEMM ``x [N, in] @ W1 [in, mc·h1]``; each model then keeps its
    own subset's rows (``rows``: flat indices ``i·mc + k`` into ``[N·mc, h1]``, a gather of hidden
    activations, never of inputs); layers 2… run batched on ``[mc, n, h]``. Backward scatters
    the layer-1 gradients into ``grad_wide [N, mc·h1]`` (zero outside the subsets, written at
    the same places every step) and one GEMM ``x^T @ grad_wide`` gives every model's ``W1``
    gradient. ``params[0]`` is ``W1`` as ``[in, mc, h1]``; the others are ``[mc, ...]``.
    """
    n_layers = len(spec.sizes) - 1
    mc, h1 = params[1].shape
    n = rows.shape[0] // mc
    z1 = torch.addmm(params[1].reshape(1, -1), x, params[0].reshape(x.shape[1], -1))
    h = z1.view(-1, h1).index_select(0, rows).view(mc, n, h1)
    acts: list[Tensor] = []  # the input of layers 2… (post-ReLU)
    for li in range(1, n_layers):
        h = torch.relu_(h)
        acts.append(h)
        h = torch.baddbmm(params[2 * li + 1].unsqueeze(1), h, params[2 * li])
    g = _loss_grad(h, onehot, inv_n)
    for li in reversed(range(1, n_layers)):
        a = acts[li - 1]
        w = params[2 * li]
        gw = torch.bmm(a.transpose(1, 2), g)
        gb = g.sum(dim=1)
        g = torch.ops.aten.threshold_backward(torch.bmm(g, w.transpose(1, 2)), a, 0)  # ReLU'
        w.sub_(gw, alpha=lr)
        params[2 * li + 1].sub_(gb, alpha=lr)
    grad_wide.view(-1, h1).index_copy_(0, rows, g.reshape(-1, h1))
    params[0].view(x.shape[1], -1).sub_(x.T @ grad_wide, alpha=lr)
    params[1].sub_(g.sum(dim=1), alpha=lr)


def _loss_grad(logits: Tensor, onehot: Tensor, weight: float) -> Tensor:
    """``d/dz Σ_n w CE_n = w (softmax(z) − onehot)``, in place on ``logits`` (a by-hand softmax:
    ``torch.softmax`` over a last dimension of 10 is slow on CPU)."""
    g = (logits - logits.amax(dim=-1, keepdim=True)).exp_()
    return g.div_(g.sum(dim=-1, keepdim=True)).sub_(onehot).mul_(weight)


def train_batched(
    spec: MLPSpec,
    init: Tensor,
    x: Tensor,
    y: Tensor,
    subsets: Tensor,
    steps: int,
    lr: float,
    chunk: int = 64,
    mode: str = "wide",
    progress: Callable[[Any], Any] | None = None,
) -> Tensor:
    """Full-batch gradient descent of ``m`` models, model ``k`` on ``(x, y)[subsets[k]]``.

    Args:
        spec: the architecture. init: the shared initial parameters ``[P]``.
        x, y: the pool ``[N, in]`` and labels ``[N]``, on the training device (CUDA when
            present: every mode is device-agnostic torch).
        subsets: ``[m, n]`` indices into the pool (one data draw ``X^(k)`` per row), distinct
            within a row.
        steps, lr: the GD schedule (Example 4: 1,500 steps at 0.05); loss: mean cross-entropy.
        chunk: models trained at once (bounds memory: ``wide`` holds ``2·N·chunk·h1`` floats
            for layer 1 and ``chunk·n·h`` per later layer).
        mode: ``"wide"`` (default: one wide model over the shared pool, :func:`_step_wide`),
            ``"gather"`` (each model's inputs copied out, ``[chunk, n, in]``: as much memory
            traffic as a loop) or ``"mask"`` (every model on the whole pool, weights ``1/n`` on
            its subset and 0 elsewhere: no copies, but every layer does ``N/n`` times the work).
        progress: optional wrapper of the chunk iterator (a progress bar).

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
    m = subsets.shape[0]
    starts = list(range(0, m, chunk))
    results = []
    it = progress(starts) if progress is not None else starts
    with torch.no_grad():
        for s in it:
            idx = subsets[s : s + chunk]
            train = _train_chunk_wide if mode == "wide" else _train_chunk_bmm
            results.append(train(spec, init, x, y, idx, steps, lr, mode))
    return torch.cat(results)


def _stacked(spec: MLPSpec, init: Tensor, mc: int) -> list[Tensor]:
    """``mc`` copies of each layer of ``init``: ``[mc, *shape]``."""
    return [p.unsqueeze(0).repeat(mc, *([1] * p.dim())).contiguous() for p in spec.unflatten(init)]


def _train_chunk_wide(
    spec: MLPSpec,
    init: Tensor,
    x: Tensor,
    y: Tensor,
    idx: Tensor,
    steps: int,
    lr: float,
    mode: str = "wide",
) -> Tensor:
    mc, n = idx.shape
    params = _stacked(spec, init, mc)
    params[0] = params[0].permute(1, 0, 2).contiguous()  # W1 as [in, mc, h1]: one wide GEMM
    ks = torch.arange(mc, device=idx.device).unsqueeze(1)
    rows = (idx * mc + ks).reshape(-1)  # row i·mc + k of [N·mc, h1]: pool item i, model k
    onehot = torch.nn.functional.one_hot(y[idx], spec.sizes[-1]).to(x.dtype)
    grad_wide = torch.zeros((x.shape[0], mc * spec.sizes[1]), dtype=x.dtype, device=x.device)
    for _ in capped(range(steps), "pac training steps"):  # all of them, unless rehearsed
        _step_wide(spec, params, x, rows, onehot, 1.0 / n, lr, grad_wide)
    params[0] = params[0].permute(1, 0, 2)
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
    for _ in capped(range(steps), "pac training steps"):  # all of them, unless rehearsed
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
