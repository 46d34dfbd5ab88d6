"""A GPU's time for torch operators run elsewhere: counted FLOPs and bytes at a roofline.

A rehearsal on a machine without the target GPU still runs every torch operator of the paper
profile's code path (on the CPU). :class:`OperationCount` counts each one as it runs: its FLOPs
by the formulas of ``torch.utils.flop_counter.FlopCounterMode`` (matmuls, convolutions,
attention; other operators count 0 FLOPs) plus, for the CPU's fused attention
(``_scaled_dot_product_flash_attention_for_cpu`` and its backward, which that registry lacks),
the same formulas from the tensors' shapes (:data:`EXTRA_FLOPS`); the bytes of its tensor inputs
and outputs (what an unfused kernel reads and writes); and the CPU seconds spent in it. Each
operator falls in one class (:func:`operator_class`: ``matmul``, ``attention``,
``convolution``, ``memory``) and its time on a GPU is

    max(FLOPs / (peak(class, precision) × efficiency(class)),
        bytes / (bandwidth × efficiency("memory")), launch)

with the peak of the units that run it (:meth:`DeviceModel.peak`): matmuls and attention on
the FP32 cores in ``fp32`` (PyTorch's default keeps TF32 matmuls off), on the TF32 or BF16
tensor cores in ``tf32`` / ``bf16`` (:mod:`privrepro.training.precision`); convolutions on
TF32 tensor cores unless in ``bf16`` (cuDNN's TF32 is on by default). View operators count
nothing. It is a *prediction*, not a measurement: the efficiencies are stated per class with
their sources (:data:`EFFICIENCIES`), fusion and caching are ignored (bytes are an upper bound),
and the host's time (Python between operators, measured where the rehearsal ran) overlaps the
device's: a loop's own time on the GPU is the larger of the two, not their sum
(:attr:`privrepro.rehearsal.loop_record.LoopRecord.own_device_s`), as an asynchronous CUDA stream runs
it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "A100",
    "CONVOLUTIONS",
    "DEVICES",
    "EFFICIENCIES",
    "H100",
    "H100_PCIE",
    "OPERATOR_CLASSES",
    "TENSOR_CORE_PRECISIONS",
    "V100",
    "DeviceModel",
    "OperationCount",
    "OperationTally",
    "operator_class",
    "operator_counts",
]

#: the precisions whose matmuls run on tensor cores (:mod:`privrepro.training.precision`:
#: ``tf32`` turns on TF32 matmuls, ``bf16`` autocasts them to bfloat16); ``fp32`` keeps them on
#: the FP32 units
TENSOR_CORE_PRECISIONS = ("tf32", "bf16")

#: the classes an operator is priced in (:func:`operator_class`)
OPERATOR_CLASSES = ("matmul", "attention", "convolution", "memory")

#: the fraction of a peak each class of operator is assumed to reach, and why
#: (:attr:`DeviceModel.efficiencies`); the same on every device model
EFFICIENCIES: dict[str, tuple[float, str]] = {
    "matmul": (
        0.70,
        "ViT-B/16's products are [batch·197, 768] × [768, 768…3072]: large, but K = 768 is "
        "short; below the ~80-90 % cuBLAS reaches on square GEMMs, above the 60.6 % whole-model "
        "utilisation FlashAttention's GPT training reports on an A100 (FlashAttention README)",
    ),
    "attention": (
        0.35,
        "FlashAttention-2 (Dao 2023, abstract): 50-73 % of the A100's peak for its forward at "
        "sequence lengths 512-16k; 197 tokens and head dimension 64 are at the short end, and "
        "the backward runs slower than the forward there: taken at half of that range",
    ),
    "convolution": (
        0.50,
        "the patch embedding (16×16, stride 16: a GEMM of K = 768) through cuDNN; assumed",
    ),
    "memory": (
        0.85,
        "of the HBM bandwidth: copy and STREAM-triad kernels sustain ~90 % of an H100 SXM's "
        "3.35 TB/s (3.0-3.1 TB/s measured); unfused elementwise kernels somewhat less",
    ),
}


def operator_class(name: str, flops: float) -> str:
    """The class an operator is priced in: ``convolution`` (:data:`CONVOLUTIONS`),
    ``attention`` (a fused attention kernel), ``matmul`` (any other operator with FLOPs: mm,
    bmm, addmm, einsum's products) or ``memory`` (elementwise, reductions, copies: bytes)."""
    if name in CONVOLUTIONS:
        return "convolution"
    if "attention" in name:
        return "attention"
    return "matmul" if flops > 0 else "memory"


class OperationTally(Protocol):
    """Where :class:`OperationCount` adds what each operator did (a capped loop's record,
    :class:`privrepro.rehearsal.loop_record.LoopRecord`)."""

    op_s: float
    flops: float
    nbytes: float
    device_s: float
    ops: int
    overhead_s: float


@dataclass(frozen=True)
class DeviceModel:
    """A GPU as a roofline per class of operator (peaks: the vendor's datasheet, dense).

    Attributes:
        name: what it stands for.
        flops: peak FLOP/s in float32 on the FP32 (CUDA) cores: matmuls and attention in
            ``fp32`` (PyTorch keeps TF32 matmuls off by default).
        bandwidth: device memory bandwidth, bytes/s.
        efficiency: the one fraction of every peak used when ``efficiencies`` is empty (the
            earlier, single-efficiency model).
        launch_s: the least time of one operator (a kernel launch in eager PyTorch).
        tensor_core_flops: dense TF32 tensor-core peak: convolutions (cuDNN's default), and
            matmuls and attention in ``tf32``. ``None``: ``flops``.
        bf16_flops: dense BF16 tensor-core peak: matmuls, attention and convolutions in
            ``bf16`` (twice TF32's on Ampere and Hopper; a V100 has none and runs reduced
            precision as FP16 on its tensor cores). ``None``: ``tensor_core_flops``.
        memory_bytes: device memory (0: unknown).
        efficiencies: per operator class (:data:`OPERATOR_CLASSES`), the fraction of the peak
            reached (:data:`EFFICIENCIES`); a class missing falls back to ``efficiency``.
        source: where the peaks come from.
    """

    name: str
    flops: float
    bandwidth: float
    efficiency: float = 0.5
    launch_s: float = 5e-6
    tensor_core_flops: float | None = None
    bf16_flops: float | None = None
    memory_bytes: float = 0.0
    efficiencies: Mapping[str, float] = field(default_factory=dict)
    source: str = ""

    def eff(self, op_class: str) -> float:
        """The efficiency of ``op_class`` (``efficiency`` when none is stated for it)."""
        return float(self.efficiencies.get(op_class, self.efficiency))

    def peak(self, op_class: str, precision: str = "fp32") -> float:
        """The peak FLOP/s of the units that run ``op_class`` in ``precision``."""
        tf32 = self.tensor_core_flops or self.flops
        bf16 = self.bf16_flops or tf32
        if precision == "bf16" and op_class != "memory":
            return bf16
        if op_class == "convolution" or (precision == "tf32" and op_class != "memory"):
            return tf32
        return self.flops

    def op_seconds(
        self, op_class: str, flops: float, nbytes: float, precision: str = "fp32"
    ) -> float:
        """One operator's predicted time: the larger of its FLOPs at its class's peak and its
        bytes at the memory bandwidth (each at its efficiency), at least one launch."""
        compute = 0.0
        if flops > 0:
            compute = flops / (self.peak(op_class, precision) * self.eff(op_class))
        return max(compute, nbytes / (self.bandwidth * self.eff("memory")), self.launch_s)

    def seconds(self, flops: float, nbytes: float, tensor_cores: bool = False) -> float:
        """One operator's predicted time in the earlier form: a matmul (or, with
        ``tensor_cores``, a TF32 tensor-core operator) or, without FLOPs, memory traffic."""
        op_class = "memory" if flops <= 0 else "convolution" if tensor_cores else "matmul"
        return self.op_seconds(op_class, flops, nbytes, "fp32")

    def describe(self, precision: str = "fp32") -> str:
        """The model in words, for a prediction's "how" (operators as ``precision`` runs them)."""
        mm = self.peak("matmul", precision) / 1e12
        effs = ", ".join(f"{c} {self.eff(c):.0%}" for c in OPERATOR_CLASSES)
        return (
            f"{self.name} roofline ({precision}): matmuls and attention at {mm:.0f} TFLOP/s, "
            f"convolutions at {self.peak('convolution', precision) / 1e12:.0f}, "
            f"{self.bandwidth / 1e12:.2f} TB/s; efficiencies {effs}; "
            f"≥ {self.launch_s * 1e6:.0f} µs per operator; host time overlapped"
        )


_EFF = {k: v[0] for k, v in EFFICIENCIES.items()}

#: NVIDIA H100 SXM5 80 GB (NVIDIA H100 Tensor Core GPU datasheet; dense = half the "with
#: sparsity" figures): FP32 67 TFLOP/s, TF32 494, BF16 989, HBM3 3.35 TB/s
H100 = DeviceModel(
    "H100 SXM",
    flops=67e12,
    bandwidth=3.35e12,
    tensor_core_flops=494e12,
    bf16_flops=989e12,
    memory_bytes=80e9,
    efficiencies=_EFF,
    source="NVIDIA H100 Tensor Core GPU datasheet (SXM5), dense rates",
)
#: NVIDIA H100 PCIe 80 GB (same datasheet): FP32 51, TF32 378, BF16 756 TFLOP/s, HBM2e 2.0 TB/s
H100_PCIE = DeviceModel(
    "H100 PCIe",
    flops=51e12,
    bandwidth=2.0e12,
    tensor_core_flops=378e12,
    bf16_flops=756e12,
    memory_bytes=80e9,
    efficiencies=_EFF,
    source="NVIDIA H100 Tensor Core GPU datasheet (PCIe), dense rates",
)
#: NVIDIA A100 SXM4 80 GB (NVIDIA A100 Tensor Core GPU datasheet): FP32 19.5, TF32 156, BF16
#: 312 TFLOP/s (dense), HBM2e 2.039 TB/s
A100 = DeviceModel(
    "A100 SXM 80GB",
    flops=19.5e12,
    bandwidth=2.039e12,
    tensor_core_flops=156e12,
    bf16_flops=312e12,
    memory_bytes=80e9,
    efficiencies=_EFF,
    source="NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB), dense rates",
)
#: NVIDIA V100 SXM2 32 GB, the cl paper's GPU (App. E.4: "one NVIDIA V100 GPU with 32 GB";
#: NVIDIA Tesla V100 datasheet): FP32 15.7 TFLOP/s, no TF32 (convolutions and ``tf32`` at the
#: FP32 rate), reduced precision as FP16 on its tensor cores at 125 TFLOP/s, HBM2 900 GB/s
V100 = DeviceModel(
    "V100 SXM2 32GB",
    flops=15.7e12,
    bandwidth=0.9e12,
    tensor_core_flops=15.7e12,
    bf16_flops=125e12,
    memory_bytes=32e9,
    efficiencies=_EFF,
    source="NVIDIA Tesla V100 datasheet (SXM2); bf16 priced as FP16 tensor cores",
)

#: the device models predictions are made for, by name
DEVICES: dict[str, DeviceModel] = {d.name: d for d in (H100, H100_PCIE, A100, V100)}

#: the operators that run on cuDNN's convolution kernels (TF32 by default on an H100), as a
#: dispatch mode sees them (``conv2d`` and the like reach it as ``convolution``)
CONVOLUTIONS = frozenset({"convolution", "convolution_backward"})


def _sdpa_cpu_flops(query: Any, key: Any, value: Any, *args: Any, **kwargs: Any) -> int:
    from torch.utils.flop_counter import sdpa_flop_count

    return int(sdpa_flop_count(query.shape, key.shape, value.shape))


def _sdpa_cpu_backward_flops(
    grad_out: Any, query: Any, key: Any, value: Any, *args: Any, **kwargs: Any
) -> int:
    from torch.utils.flop_counter import sdpa_backward_flop_count

    return int(sdpa_backward_flop_count(grad_out.shape, query.shape, key.shape, value.shape))


#: FLOP formulas of operators ``FlopCounterMode`` does not count (by overload packet name): the
#: CPU's fused attention, counted from its shapes with torch's own attention formulas
EXTRA_FLOPS: dict[str, Callable[..., int]] = {
    "_scaled_dot_product_flash_attention_for_cpu": _sdpa_cpu_flops,
    "_scaled_dot_product_flash_attention_for_cpu_backward": _sdpa_cpu_backward_flops,
}


def _nbytes(values: Any) -> int:
    import torch
    from torch.utils._pytree import tree_leaves

    total = 0
    for leaf in tree_leaves(values):
        if isinstance(leaf, torch.Tensor) and leaf.layout == torch.strided:
            total += leaf.numel() * leaf.element_size()
    return total


def _is_view(func: Any) -> bool:
    schema = getattr(func, "_schema", None)
    if schema is None:
        return False
    return any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def operator_counts(func: Any, args: Any, kwargs: Any, out: Any) -> tuple[str, float, float] | None:
    """One dispatched operator's (name, FLOPs, bytes), ``None`` for a view (no kernel, no
    traffic): FLOPs by ``FlopCounterMode``'s formulas or :data:`EXTRA_FLOPS`, bytes of its
    tensor inputs and outputs."""
    if _is_view(func):
        return None
    name = func._overloadpacket.__name__
    formula = _registry().get(func._overloadpacket) or EXTRA_FLOPS.get(name)
    flops = float(formula(*args, **kwargs, out_val=out)) if formula else 0.0
    return name, flops, float(_nbytes((args, kwargs)) + _nbytes(out))


_REGISTRY: dict[Any, Any] = {}


def _registry() -> dict[Any, Any]:
    if not _REGISTRY:
        from torch.utils.flop_counter import FlopCounterMode

        _REGISTRY.update(FlopCounterMode(display=False).flop_registry)
    return _REGISTRY


class OperationCount:
    """Count every torch operator run inside ``with OperationCount(target):`` into
    ``target()`` (an :class:`OperationTally`, asked per operator): FLOPs, bytes, CPU seconds
    in the operator, count, and its time on ``device`` as ``precision`` runs it
    (:meth:`DeviceModel.op_seconds` of its :func:`operator_class`); the time the counting
    itself takes goes to ``overhead_s``, which the predictions leave out. ``classes``: a dict
    that also gets, per class, ``[FLOPs, bytes, operators]`` and, per device of ``also`` (name
    → model), the seconds on it (``"<class>@<device name>"``), for pricing one count on several
    devices. ``clock``: what the seconds are read from (the thread's CPU time by default, as
    :class:`~privrepro.rehearsal.cap.RehearsalCap` reads its loops)."""

    def __init__(
        self,
        target: Callable[[], OperationTally],
        device: DeviceModel = H100,
        precision: str = "fp32",
        classes: dict[str, list[float]] | None = None,
        also: Mapping[str, DeviceModel] | None = None,
        clock: Callable[[], float] = time.thread_time,
    ) -> None:
        from torch.utils._python_dispatch import TorchDispatchMode

        model = device
        others = dict(also or {})

        class _Mode(TorchDispatchMode):
            def __torch_dispatch__(  # type: ignore[override]
                self, func: Any, types: Any, args: Any = (), kwargs: Any = None
            ) -> Any:
                entered = clock()
                kwargs = kwargs or {}
                t0 = clock()
                out = func(*args, **kwargs)
                spent = clock() - t0
                rec = target()
                rec.op_s += spent
                counted = operator_counts(func, args, kwargs, out)
                if counted is not None:
                    name, flops, nbytes = counted
                    rec.flops += flops
                    rec.nbytes += nbytes
                    rec.ops += 1
                    op_class = operator_class(name, flops)
                    rec.device_s += model.op_seconds(op_class, flops, nbytes, precision)
                    if classes is not None:
                        tally = classes.setdefault(op_class, [0.0, 0.0, 0.0])
                        tally[0] += flops
                        tally[1] += nbytes
                        tally[2] += 1
                        for dev_name, dev in others.items():
                            key = f"{op_class}@{dev_name}"
                            secs = dev.op_seconds(op_class, flops, nbytes, precision)
                            classes.setdefault(key, [0.0])[0] += secs
                # the counting's own time is no part of the run's
                rec.overhead_s += clock() - entered - spent
                return out

        self._mode = _Mode()

    def __enter__(self) -> OperationCount:
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._mode.__exit__(*exc)
