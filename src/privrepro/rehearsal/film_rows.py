"""The cl PEFT figures' rows of ``make rehearsal``, priced: their FiLM image-passes × one counted step.

A cl PEFT figure is almost all FiLM DP-SGD through ViT-B/16 (cl paper, Sec. 6, App. E.1): its
tuning studies (``n_trials × epochs ×`` the study's tuning rows) and its final trainings
(``epochs ×`` the benchmark's training rows per ensemble, Naive or Non-CL run). Rehearsing it on
a CPU measures this CPU's Python between a step's operators more than the step (a probed step
took minutes at a load of 16; the row was host-bound), so the rehearsal prices these rows instead
(:func:`film_row`): the image-passes of each study and final training the figure's units ask for
(:func:`film_work`, keyed as the cost model keys them,
:mod:`privrepro.continual.peft.shared_work`: a study or an ensemble several units or figures
share counts once), times the cost of one image-pass of the units' precision on the target GPU
(:func:`pass_cost`: one FiLM DP-SGD step of :func:`~.film_pricing.count_film_steps` counted on
the CPU at two batch sizes, each operator priced at the physical batch the GPU runs). The keys
go to the row's ``cache_keys``, so the table's totals count a study or an ensemble an earlier
figure computes once (:func:`~privrepro.rehearsal.summary.mark_shared_caches`). The test-set
evaluation (a forward per test image and member) is not priced.

The image-pass counts are those of ``benchmarks/count_cl_trainings.py --grid paper`` (which
imports :data:`TRAIN_ROWS` and :func:`tuning_rows` from here).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from privrepro.rehearsal.device_model import DEVICES

__all__ = [
    "NUM_CLASSES",
    "TRAIN_ROWS",
    "FilmWork",
    "PassCost",
    "film_row",
    "film_work",
    "pass_cost",
    "tuning_rows",
]

#: training rows per benchmark of the paper profile (full data), per class as the paper's splits
#: see them: CIFAR-100's 500 per class (50,000); ImageNet-R's 80 % split of 30,000 (24,000,
#: ``continual.sources.imagenet_r_split``; equal classes assumed, the real counts vary); the
#: 5-Datasets members in ``FIVE_DATASETS`` order, ten classes each: MNIST 60,000, SVHN 73,257,
#: notMNIST 14,979 (80 % of its 18,724 readable images), Fashion-MNIST 60,000, CIFAR-10 50,000
TRAIN_ROWS: dict[str, tuple[int, ...]] = {
    "cifar100": (50_000,),
    "imagenet-r": (24_000,),
    "5-datasets": (60_000, 73_257, 14_979, 60_000, 50_000),
}
NUM_CLASSES = {"cifar100": 100, "imagenet-r": 200, "5-datasets": 50}


def _labels(benchmark: str) -> Any:
    """Training labels of ``benchmark`` at the paper profile's sizes (:data:`TRAIN_ROWS`),
    classes of one member (or the whole benchmark) of equal size."""
    import numpy as np

    sizes = TRAIN_ROWS[benchmark]
    per = NUM_CLASSES[benchmark] // len(sizes)
    # member m's classes m·per … m·per + per − 1, balanced
    parts = [m * per + np.arange(n) % per for m, n in enumerate(sizes)]
    return np.sort(np.concatenate(parts)).astype(np.int64)


def tuning_rows(unit: Mapping[str, Any]) -> int:
    """The rows a unit's study tunes on at the paper profile's sizes: the tuning split of the
    study's run (:func:`~privrepro.continual.peft.hyperparameter_search.study_key_run`) by the
    code's own :func:`~privrepro.continual.peft.hyperparameter_search.tuning_split`."""
    from privrepro.continual.peft import PeftRun, TuningSettings
    from privrepro.continual.peft.hyperparameter_search import study_key_run, tuning_split
    from privrepro.continual.peft.scenario import peft_scenario

    tuning = TuningSettings(**unit["tuning"])
    key = study_key_run(PeftRun.from_unit(unit), tuning)
    y = _labels(key.benchmark)
    sc = peft_scenario(key, y, y[:0], NUM_CLASSES[key.benchmark], 0)
    return int(tuning_split(key, sc, tuning, 0)[1])


@dataclass(frozen=True)
class FilmWork:
    """One FiLM computation a unit asks for: ``part`` (``FiLM tuning`` or ``FiLM final
    training``), its shared ``key`` (a study's or an ensemble's; ``None``: the unit's own, a
    Naive or Non-CL run) and its image-passes in millions."""

    part: str
    key: str | None
    mpasses: float


def film_work(units: Sequence[Mapping[str, Any]], tag: str = "paper") -> list[FilmWork]:
    """Every FiLM study and final training ``units`` ask for, in order, repeats included: a
    study ``n_trials × epochs × tuning rows`` (:func:`tuning_rows`), a final training
    ``epochs ×`` the benchmark's training rows (:data:`TRAIN_ROWS`; DP-SGD's expected passes
    under Poisson sampling). Head units (no FiLM) ask for none."""
    from privrepro.continual.peft import PeftRun
    from privrepro.continual.peft.shared_work import ensemble_key, study_key

    out = []
    for u in units:
        run = PeftRun.from_unit(u)
        if run.kind != "film":
            continue
        epochs = float(u["train"].get("epochs", 40.0))
        if u["tuning"].get("enabled", True):
            trials = int(u["tuning"].get("n_trials", 20))
            passes = trials * epochs * tuning_rows(u) / 1e6
            out.append(FilmWork("FiLM tuning", study_key(u, 0, tag), passes))
        final = epochs * sum(TRAIN_ROWS[run.benchmark]) / 1e6
        out.append(FilmWork("FiLM final training", ensemble_key(u, 0, tag), final))
    return out


@dataclass(frozen=True)
class PassCost:
    """One FiLM image-pass on a device: ``seconds`` (priced per operator at physical batch
    ``batch``) and ``flops``, for ``precision``."""

    seconds: float
    flops: float
    precision: str
    batch: int
    device: str


def pass_cost(precision: str, batch: int, device: str, cache: Path | None = None) -> PassCost:
    """The cost of one FiLM image-pass of ViT-B/16 at 224² in ``precision`` on ``device`` (a
    name in :data:`~.device_model.DEVICES`) at physical batch ``batch``: one DP-SGD step counted
    at batch 2 and 4 (:func:`~.film_pricing.count_film_steps`, tens of CPU seconds). ``cache``:
    a JSON file keeping the costs counted (each figure of a rehearsal runs in a process of its
    own; the count is the same for all)."""
    name = f"{precision}|{batch}|{device}"
    known: dict[str, list[float]] = {}
    if cache is not None and cache.is_file():
        known = dict(json.loads(cache.read_text()))
    if name not in known:
        from privrepro.rehearsal.film_pricing import count_film_steps

        step = count_film_steps(precision)
        seconds = sum(step.seconds_per_image(DEVICES[device], batch).values())
        known[name] = [seconds, sum(step.flops_per_image().values())]
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps(known))
    seconds, flops = known[name]
    return PassCost(seconds, flops, precision, batch, device)


def film_row(
    row: dict[str, Any], units: Sequence[Mapping[str, Any]], cost: PassCost
) -> dict[str, Any]:
    """``row`` (a planned cl PEFT row) priced: ``predicted_gpu_s`` the figure alone (each study and
    ensemble once), ``parts`` and ``cache_keys`` as a rehearsed row's, no CPU prediction."""
    keyed: dict[str, float] = {}
    own: dict[str, float] = {}
    for w in film_work(units):
        if w.key is None:
            own[w.part] = own.get(w.part, 0.0) + w.mpasses
        else:
            keyed.setdefault(f"{w.part} | {w.key}", w.mpasses)
    scale = 1e6 * cost.seconds, 1e6 * cost.flops / 1e12  # per M image-passes: GPU s, TFLOP
    parts: dict[str, list[float]] = {}
    for label, mpasses in [*keyed.items(), *own.items()]:
        acc = parts.setdefault(label.split(" | ", 1)[0], [0.0, 0.0, 0.0])
        acc[1] += mpasses * scale[0]
        acc[2] += mpasses * scale[1]
    from privrepro.continual.peft import PeftRun

    mpasses = sum(keyed.values()) + sum(own.values())
    film_units = sum(1 for u in units if PeftRun.from_unit(u).kind == "film")
    row.update(
        status="priced",
        units_run=0,
        cost_classes=1,
        n_caches=len(keyed),
        predicted_gpu_s=mpasses * scale[0],
        predicted_tflop=mpasses * scale[1],
        cache_gpu_s=sum(keyed.values()) * scale[0],
        cache_keys=json.dumps({k: [0.0, v * scale[0], v * scale[1]] for k, v in keyed.items()}),
        parts=json.dumps(parts),
        precision=cost.precision,
        gpu_model=DEVICES[cost.device].describe(cost.precision),
        lower_bound=False,
        film_mpasses=mpasses,
        prediction=(
            f"priced, not rehearsed: {mpasses:.1f} M FiLM image-passes of its {film_units} FiLM "
            f"units ({len(keyed)} studies and ensembles, each once; Naive and Non-CL runs per "
            f"unit) × {cost.seconds * 1e3:.3f} ms per pass on the {cost.device} in "
            f"{cost.precision} at a physical batch of {cost.batch} (one FiLM DP-SGD step of "
            f"ViT-B/16 counted on the CPU, each operator priced on the device's roofline; "
            f"{cost.flops / 1e9:.1f} GFLOP per pass); test-set evaluation not priced"
        ),
    )
    return row
