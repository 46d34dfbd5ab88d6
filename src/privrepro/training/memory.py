"""Peak device memory of one DP-SGD step, predicted from shapes before any compute.

A FiLM step's peak (:func:`film_step_memory`) is reached while the per-sample pieces of the last
physical chunk are held, before they are summed (more in ``docs/modules.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from privrepro.config import ConfigError
from privrepro.training.precision import check_precision

__all__ = [
    "MEMORY_ENGINES",
    "RUNTIME_BYTES",
    "VIT_B16",
    "StepMemory",
    "ViTShape",
    "film_step_memory",
    "head_step_memory",
    "settings_that_fit",
]

#: the per-sample clipping methods priced (``auto`` resolves to ``privrepro`` for FiLM)
MEMORY_ENGINES = ("privrepro", "opacus")
#: the CUDA context, cuBLAS workspaces and the caching allocator's slack, counted once
RUNTIME_BYTES = 2**30
_F32 = 4


@dataclass(frozen=True)
class ViTShape:
    """The shape of a timm ``VisionTransformer`` with a class token.

    Attributes:
        image, patch: input side and patch side (pixels); ``(image / patch)² + 1`` tokens.
        dim, depth, heads: width ``h``, blocks and attention heads ``a``.
        mlp_ratio: the MLP's hidden width over ``h`` (4 in ViT-B/16).
        channels: input channels.
    """

    image: int
    patch: int
    dim: int
    depth: int
    heads: int
    mlp_ratio: float = 4.0
    channels: int = 3

    @property
    def tokens(self) -> int:
        return (self.image // self.patch) ** 2 + 1

    @property
    def layer_norms(self) -> int:
        """Two per block and the final one: FiLM's trainable modules besides the head."""
        return 2 * self.depth + 1

    @property
    def backbone_params(self) -> int:
        """Parameters of the backbone without a head (ViT-B/16: 85,798,656)."""
        h, m = self.dim, int(self.mlp_ratio * self.dim)
        embed = self.channels * self.patch**2 * h + h + (self.tokens + 1) * h
        block = 4 * h * h + 4 * h + 2 * h * m + m + h + 4 * h
        return embed + self.depth * block + 2 * h

    def trainable_params(self, labels: int) -> int:
        """FiLM's trainable parameters: LayerNorm scale and shift, and a head of ``labels``
        (cl paper Sec. 6: 38,400 + 769·C on ViT-B/16)."""
        return 2 * self.layer_norms * self.dim + labels * (self.dim + 1)


#: ViT-B/16 at 224 × 224 (the cl paper's backbone): 197 tokens, width 768, 12 blocks and heads
VIT_B16 = ViTShape(image=224, patch=16, dim=768, depth=12, heads=12)


@dataclass(frozen=True)
class StepMemory:
    """A predicted peak, in bytes, by named term (see ``docs/modules.md``)."""

    terms: dict[str, int]

    @property
    def bytes(self) -> int:
        return sum(self.terms.values())

    @property
    def largest(self) -> str:
        """The name of the largest term."""
        return max(self.terms, key=lambda k: self.terms[k])


def _check(labels: int, chunk: int, precision: str, engine: str) -> None:
    check_precision(precision)
    if engine not in MEMORY_ENGINES:
        raise ConfigError("engine", engine, f"must be one of {list(MEMORY_ENGINES)}")
    if labels < 1:
        raise ConfigError("labels", labels, "must be >= 1")
    if chunk < 1:
        raise ConfigError("physical_batch", chunk, "must be >= 1")


def film_step_memory(
    shape: ViTShape,
    labels: int,
    chunk: int,
    precision: str = "fp32",
    engine: str = "privrepro",
) -> StepMemory:
    """Peak device memory of one FiLM DP-SGD step (see ``docs/modules.md``).

    Args:
        shape: the backbone; labels: the head's outputs (dummy labels included).
        chunk: samples whose per-sample pieces are held at once (``film.physical_batch``).
        precision: ``fp32``, ``tf32`` or ``bf16`` (the forward's arithmetic).
        engine: ``privrepro`` (the project's clipper) or ``opacus`` (``GradSampleModule``).
    """
    _check(labels, chunk, precision, engine)
    s, h, a = shape.tokens, shape.dim, shape.heads
    m = int(shape.mlp_ratio * h)
    low = 2 if precision == "bf16" else _F32
    trainable = shape.trainable_params(labels)
    ln_params = 2 * shape.layer_norms * h
    weights = _F32 * (shape.backbone_params + 6 * trainable)
    if precision == "bf16":
        weights += 2 * trainable
    per_block = s * (2 * h * _F32 + (3 * h + a * s + m) * low)
    image = shape.channels * shape.image**2 * _F32
    activations = chunk * (shape.depth * per_block + s * h * _F32 + image)
    if engine == "privrepro":
        per_sample = chunk * _F32 * (shape.layer_norms * s * h + 2 * ln_params + 2 * s * h + h)
    else:
        # every grad_sample, and the largest (the head's weight) twice while opacus copies it
        per_sample = chunk * _F32 * (trainable + labels * h)
    return StepMemory(
        {
            "weights": weights,
            "activations": activations,
            "per-sample gradients": per_sample,
            "logits": 4 * chunk * labels * _F32,
            "workspace": 2 * chunk * s * m * _F32,
            "runtime": RUNTIME_BYTES,
        }
    )


def head_step_memory(dim: int, labels: int, rows: int, batch: int) -> StepMemory:
    """Peak device memory of a head-only DP-SGD step on cached features
    (:func:`~privrepro.training.dpsgd.train_linear_head`): the ``rows × dim`` features, the
    head six times (as FiLM's), and per batch row its features, logits, softmax, residual and
    clipped residual (``dim + 4 L`` float32 values); no per-sample gradient is formed."""
    if labels < 1:
        raise ConfigError("labels", labels, "must be >= 1")
    return StepMemory(
        {
            "features": _F32 * rows * dim,
            "weights": 6 * _F32 * labels * (dim + 1),
            "batch": _F32 * batch * (dim + 4 * labels),
            "runtime": RUNTIME_BYTES,
        }
    )


@dataclass(frozen=True)
class _FilmStep:
    shape: ViTShape
    labels: int
    chunk: int
    precision: str
    engine: str

    def bytes(self) -> int:
        return film_step_memory(
            self.shape, self.labels, self.chunk, self.precision, self.engine
        ).bytes


def settings_that_fit(
    shape: ViTShape, labels: int, chunk: int, precision: str, engine: str, budget: int
) -> list[tuple[str, object]]:
    """One-setting changes under which a FiLM step fits in ``budget`` bytes, in the order
    ``engine`` (the project's clipper), ``precision`` (``bf16``), ``physical_batch`` (the
    largest power of two below ``chunk`` that fits): ``[(setting, value), …]``, empty when
    none does (the weights alone exceed the budget)."""
    step = _FilmStep(shape, labels, chunk, precision, engine)
    out: list[tuple[str, object]] = []
    if engine != "privrepro" and replace(step, engine="privrepro").bytes() <= budget:
        out.append(("engine", "privrepro"))
    if precision != "bf16" and replace(step, precision="bf16").bytes() <= budget:
        out.append(("precision", "bf16"))
    c = 1 << ((chunk - 1).bit_length() - 1) if chunk > 1 else 0  # the power of two below
    while c >= 1:
        if replace(step, chunk=c).bytes() <= budget:
            out.append(("physical_batch", c))
            break
        c //= 2
    return out
