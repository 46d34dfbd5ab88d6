"""What a rehearsal runs and where (:class:`RehearsalSettings`), and the runner's plan of a
figure under the paper profile on the stand-ins (:func:`plan_rehearsal`): the data root at the
stand-ins, a scratch store, the stand-in weights where the profile needs pretrained ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privrepro.rehearsal.device_model import H100
from privrepro.runner.plan import FigurePlan, plan_experiment

__all__ = ["GIB", "RehearsalSettings", "plan_rehearsal", "weights_overrides"]

GIB = 1024**3


@dataclass(frozen=True)
class RehearsalSettings:
    """What a rehearsal runs and where.

    Attributes:
        root: the stand-in data root (written by ``make rehearsal-data``).
        scratch: a folder for the rehearsal's own store and caches (never the real ones).
        items: items each capped loop runs.
        units: units of each figure computed.
        unit_timeout_s: a unit still running after this is stopped (its loops so far are kept).
        host_bytes: host memory of the target machine (a figure needing more does not fit).
        device_bytes: device memory of the target GPU.
        device: ``auto``, ``cpu`` or ``cuda``.
        probe_samples: where an item's cost is linear in its size (a batch), it runs this many
            samples and its time is scaled (0: items run whole; :meth:`privrepro.rehearsal.cap.RehearsalCap.item_size`).
        count_operations: count every torch operator for the GPU prediction
            (:mod:`privrepro.rehearsal.device_model`).
        gpu_model: the device model the GPU prediction is priced on, by name
            (:data:`~privrepro.rehearsal.device_model.DEVICES`: H100 SXM, H100 PCIe, A100 SXM
            80GB, V100 SXM2 32GB).
        threads: torch's intra-op threads and the BLAS threads each unit computes with
            (:func:`privrepro.threads.use_threads`). With one, every CPU second of a unit runs on
            the thread whose CPU time the cap reads (:attr:`~privrepro.rehearsal.cap.RehearsalCap.clock`),
            so its measured times do not depend on the machine's load.
        price_film: the cl PEFT figures (:data:`~privrepro.rehearsal.summary.FILM_TUNING`) are
            priced from their FiLM image-passes (:mod:`privrepro.rehearsal.film_rows`) rather
            than rehearsed.
        overrides: Hydra overrides added to every figure's paper profile (e.g.
            ``params.train.precision=tf32``: the cost at another precision); a key a figure
            does not have is added with ``++`` by the caller.
    """

    root: Path
    scratch: Path
    items: int = 2
    units: int = 1
    unit_timeout_s: float = 120.0
    host_bytes: int = 128 * GIB
    device_bytes: int = 80 * GIB
    device: str = "auto"
    probe_samples: int = 4
    count_operations: bool = True
    overrides: tuple[str, ...] = ()
    gpu_model: str = H100.name
    threads: int = 1
    price_film: bool = True


def weights_overrides(params: Any, root: Path) -> list[str]:
    """``++key=<stand-in file>`` for every backbone whose weights the paper profile needs and
    does not set (the stand-in writers put them where the missing-weights error says)."""
    from privrepro.models.weights import suggested_weights_path, weights_needed

    out = []
    for need in weights_needed(params):
        if need.backbone and not need.value and "[" not in need.key:
            out.append(f"++{need.key}={suggested_weights_path(need.backbone, root)}")
    return out


def _overrides(experiment: str, settings: RehearsalSettings) -> list[str]:
    """The paper profile with the data root at the stand-ins and every output in the scratch."""
    paper, figure = experiment.split("/", 1)
    scratch = Path(settings.scratch)
    return [
        "profile=paper",
        f"paths.data_dir={settings.root}",
        f"paths.experiments_dir={scratch / 'experiments'}",
        f"paths.cache_dir={scratch / 'cache' / paper / figure}",
        f"paths.results_dir={scratch / 'results'}",
        f"paths.plots_dir={scratch / 'plots'}",
        *settings.overrides,
    ]


def plan_rehearsal(experiment: str, settings: RehearsalSettings) -> tuple[FigurePlan, list[str]]:
    """The runner's plan of ``experiment`` under the paper profile on the stand-ins (the target
    machine is checked by the caller, not this one), and the ``++`` overrides that point the
    backbones the paper profile needs at the stand-in weights (:func:`weights_overrides`)."""
    base = _overrides(experiment, settings)
    plan = plan_experiment(experiment, base, check=False)
    extra = weights_overrides(plan.params, Path(settings.root))
    if extra:
        plan = plan_experiment(experiment, [*base, *extra], check=False)
    return plan, extra
