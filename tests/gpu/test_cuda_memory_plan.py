"""The memory plan against the GPU: a FiLM step's predicted peak device memory
(:func:`privrepro.training.memory.film_step_memory`) is at least what the step holds on CUDA and
of the same order, for both clipping methods, with a head of many labels.

A ViT-B/16 FiLM step (random weights: the memory does not depend on them) at a chunk of 32 in
bf16, measured by ``benchmarks/film_memory_cuda.py`` (``torch.cuda.max_memory_allocated``).
The plan is useful when it refuses what cannot fit without refusing what can: the prediction
with its fixed 1 GiB for the CUDA runtime is an upper bound, and without it within 1.5 × the
measurement (measured on an H200 at a chunk of 256: 1.14–1.27 × for the project's clipper).

Marked ``gpu``: skipped with one line where no CUDA device is present (``tests/conftest.py``).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from privrepro.benchmark_harness import load_script
from privrepro.training.memory import RUNTIME_BYTES

pytestmark = pytest.mark.gpu

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "film_memory_cuda.py"


def _script() -> ModuleType:
    return load_script(SCRIPT)


@pytest.mark.parametrize("engine", ["privrepro", "opacus"])
@pytest.mark.parametrize("labels", [1_000, 20_000])
def test_the_planned_peak_bounds_a_film_step_on_cuda(engine: str, labels: int) -> None:
    row = _script().measure(engine, labels, 32, "bf16")
    assert row["outcome"] == "ok", row
    measured, predicted = int(row["measured_bytes"]), int(row["predicted_bytes"])  # type: ignore[call-overload]
    assert measured <= predicted + RUNTIME_BYTES, row
    assert predicted <= 1.5 * measured, row
