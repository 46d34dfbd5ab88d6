"""A GPU's time for torch operators run elsewhere: counted FLOPs and bytes at a roofline.

A rehearsal on a machine without the target GPU still runs every torch operator of the paper
profile's code path (on the CPU). :class:`OperationCount` counts each one as it runs: its FLOPs
by the formulas of ``torch.utils.flop_counter.FlopCounterMode`` (matmuls, convolutions,
attention; other operators count 0 FLOPs), the bytes of its tensor inputs and outputs (what it
reads and writes: the memory traffic of an unfused kernel), and the CPU seconds spent in it. Its
time on the GPU is taken at the roofline of :class:`DeviceModel`:

    max(FLOPs / (peak FLOP/s × efficiency), bytes / (bandwidth × efficiency), launch)

(convolutions at the TF32 tensor cores' peak, which PyTorch lets cuDNN use by default; matmuls
at the FP32 peak, or at the tensor cores' when the unit computes in ``tf32`` or ``bf16``:
:func:`privrepro.training.precision.unit_precision`)

per operator; view operators (which launch no kernel and move nothing) count nothing. It is a
*prediction*, not a measurement: the efficiency is assumed, fusion and caching are ignored (bytes
are an upper bound on the traffic; small operators are floored at one kernel launch), and the
time outside torch operators is the host's as measured where the rehearsal ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = [
    "CONVOLUTIONS",
    "H100",
    "TENSOR_CORE_PRECISIONS",
    "DeviceModel",
    "OperationCount",
    "OperationTally",
]

#: the precisions whose matmuls run on tensor cores (:mod:`privrepro.training.precision`:
#: ``tf32`` turns on TF32 matmuls, ``bf16`` autocasts them to bfloat16); ``fp32`` keeps them on
#: the FP32 units
TENSOR_CORE_PRECISIONS = ("tf32", "bf16")


class OperationTally(Protocol):
    """Where :class:`OperationCount` adds what each operator did (a capped loop's record,
    :class:`privrepro.rehearsal.cap.LoopRecord`)."""

    op_s: float
    flops: float
    nbytes: float
    device_s: float
    ops: int
    overhead_s: float


@dataclass(frozen=True)
class DeviceModel:
    """A GPU as a roofline.

    Attributes:
        name: what it stands for.
        flops: peak FLOP/s in float32 without tensor cores (the paper profile's default
            ``fp32``: matmuls and the other operators).
        tensor_core_flops: peak FLOP/s of the tensor cores in TF32, dense: convolutions
            always (PyTorch lets cuDNN use TF32 tensor cores for convolutions unless
            ``torch.backends.cudnn.allow_tf32`` is turned off), and matmuls when the unit
            computes in ``tf32`` or ``bf16`` (:data:`TENSOR_CORE_PRECISIONS`; bf16's dense
            peak is twice TF32's on an H100: pricing it at TF32's is conservative). ``None``:
            ``flops``.
        bandwidth: device memory bandwidth, bytes/s.
        efficiency: the fraction of both peaks assumed reached (stated in every prediction).
        launch_s: the least time of one operator (a kernel launch in eager PyTorch).
    """

    name: str
    flops: float
    bandwidth: float
    efficiency: float = 0.5
    launch_s: float = 5e-6
    tensor_core_flops: float | None = None

    def seconds(self, flops: float, nbytes: float, tensor_cores: bool = False) -> float:
        """One operator's predicted time (``tensor_cores``: it runs on the tensor cores, at
        :attr:`tensor_core_flops`: a convolution, or a matmul in ``tf32`` / ``bf16``)."""
        peak = self.tensor_core_flops if tensor_cores and self.tensor_core_flops else self.flops
        return max(
            flops / (peak * self.efficiency),
            nbytes / (self.bandwidth * self.efficiency),
            self.launch_s,
        )

    def describe(self, precision: str = "fp32") -> str:
        """The model in words, for a prediction's "how" (matmuls as ``precision`` runs them)."""
        tc = self.tensor_core_flops
        matmuls = (
            f"matmuls and convolutions at {tc / 1e12:.0f} TFLOP/s on tensor cores ({precision})"
            if tc and precision in TENSOR_CORE_PRECISIONS
            else f"convolutions at {tc / 1e12:.0f} TFLOP/s TF32"
            if tc
            else ""
        )
        return (
            f"{self.name} roofline: {self.flops / 1e12:.0f} TFLOP/s FP32, "
            f"{self.bandwidth / 1e12:.2f} TB/s, at {self.efficiency:.0%} of both, "
            f"≥ {self.launch_s * 1e6:.0f} µs per operator" + (f", {matmuls}" if matmuls else "")
        )


#: NVIDIA H100 SXM: FP32 (non-tensor-core) peak for matmuls and the rest (67 TFLOP/s), TF32
#: tensor-core peak (dense, 494 TFLOP/s) for convolutions (PyTorch's default) and for matmuls in
#: ``tf32`` / ``bf16`` (see :class:`DeviceModel`), HBM3 bandwidth, all at half efficiency; the
#: one constant every GPU prediction of the project uses (``benchmarks/bench_pac.py`` too, whose
#: trainings are matmuls)
H100 = DeviceModel(
    "H100 SXM", flops=67e12, bandwidth=3.35e12, efficiency=0.5, tensor_core_flops=494e12
)

#: the operators that run on cuDNN's convolution kernels (TF32 by default on an H100), as a
#: dispatch mode sees them (``conv2d`` and the like reach it as ``convolution``)
CONVOLUTIONS = frozenset({"convolution", "convolution_backward"})


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


class OperationCount:
    """Count every torch operator run inside ``with OperationCount(target):`` into
    ``target()`` (an :class:`OperationTally`, asked per operator): FLOPs,
    bytes, CPU seconds in the operator, count, and the roofline time on ``device`` with matmuls
    as ``precision`` runs them (on tensor cores in ``tf32`` and ``bf16``); the time the
    counting itself takes goes to ``overhead_s``, which the predictions leave out."""

    def __init__(
        self,
        target: Callable[[], OperationTally],
        device: DeviceModel = H100,
        precision: str = "fp32",
    ) -> None:
        from torch.utils._python_dispatch import TorchDispatchMode
        from torch.utils.flop_counter import FlopCounterMode

        registry = FlopCounterMode(display=False).flop_registry
        model = device
        matmuls_on_tensor_cores = precision in TENSOR_CORE_PRECISIONS

        class _Mode(TorchDispatchMode):
            def __torch_dispatch__(  # type: ignore[override]
                self, func: Any, types: Any, args: Any = (), kwargs: Any = None
            ) -> Any:
                entered = time.perf_counter()
                kwargs = kwargs or {}
                t0 = time.perf_counter()
                out = func(*args, **kwargs)
                spent = time.perf_counter() - t0
                rec = target()
                rec.op_s += spent
                if not _is_view(func):
                    formula = registry.get(func._overloadpacket)
                    flops = float(formula(*args, **kwargs, out_val=out)) if formula else 0.0
                    nbytes = float(_nbytes((args, kwargs)) + _nbytes(out))
                    rec.flops += flops
                    rec.nbytes += nbytes
                    rec.ops += 1
                    conv = func._overloadpacket.__name__ in CONVOLUTIONS
                    # every other operator with FLOPs is a matmul (mm, bmm, addmm, attention)
                    on_tc = conv or (matmuls_on_tensor_cores and flops > 0)
                    rec.device_s += model.seconds(flops, nbytes, on_tc)
                # the counting's own time is no part of the run's
                rec.overhead_s += time.perf_counter() - entered - spent
                return out

        self._mode = _Mode()

    def __enter__(self) -> OperationCount:
        self._mode.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._mode.__exit__(*exc)
