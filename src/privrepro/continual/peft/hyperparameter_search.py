"""DP-SGD hyperparameters of a PEFT run, tuned as the cl paper does (App. F, Table A2).

"For each combination of privacy budget (ε, δ) and seed once using Optuna with the Gaussian
process sampler" (App. E.1): one study per (benchmark, kind, scenario, ε, repeat, seed), kept in
a journal file (or an RDB) so every run of that combination reuses it — the PEFT Ensemble, Naive
and Non-CL runs of one kind, every label configuration (``tuning.label_space = "const"``: the
trials run in S_prior^const without dummy labels) and every 5-Datasets task order (the tuning
task is the CIFAR-10 member whatever its position). The study tunes on "a dataset that is
representative of one task", split 70:30 into tuning and validation data (5-Datasets: 10 % /
4.28 % of the CIFAR-10 task); each run then transfers the result to its own data size
(:func:`privrepro.training.optuna_studies.transfer_hyper`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from privrepro.continual.peft.data import PeftData
from privrepro.continual.peft.scenario import peft_scenario
from privrepro.continual.peft.settings import (
    FeatureSettings,
    FilmSettings,
    PeftRun,
    TrainSettings,
    TuningSettings,
    eps_label,
    identity,
)
from privrepro.continual.scenarios import Scenario
from privrepro.loops import PLAIN, Loops
from privrepro.metrics import MetricLogger, prefixed
from privrepro.seeding import numpy_stream, torch_stream
from privrepro.training.dpsgd import DPSGDHyper
from privrepro.training.rows import select_rows

__all__ = [
    "Tuned",
    "objective_settings",
    "study_key_run",
    "study_name",
    "study_run",
    "tune_hyper",
    "tuning_split",
    "unclipped_if_nondp",
]


@dataclass(frozen=True)
class Tuned:
    """Hyperparameters at the tuning size ``n_tune`` (transferred per run afterwards), and how
    they were found (``meta``: ``tuned``, and for a study its name, best validation accuracy
    and number of COMPLETE trials)."""

    hyper: DPSGDHyper
    n_tune: int
    meta: dict[str, Any]


def study_name(run: PeftRun, seed: int, tag: str = "") -> str:
    """The study shared by every run of one (benchmark, kind, scenario, label space, ε,
    repeat, seed); ``tag`` (the harness: the profile) keeps apart studies of other settings."""
    name = (
        f"cl-{run.benchmark}-{run.kind}-{run.blurry or 'split'}-{run.label_policy}"
        f"-x{run.dummy_factor}-{eps_label(run.epsilon)}-r{run.repeat}-s{seed}"
    )
    return (f"{name}-{tag}" if tag else name).replace("ε=", "eps")


#: tuning settings the trials do not see: where the study lives, when it stops, the fixed values,
#: and which scenario it tunes in (resolved into the study's run: its name and shape)
_NOT_SEEN_BY_TRIALS = (
    "storage",
    "n_trials",
    "enabled",
    "lr",
    "batch_size",
    "clip",
    "scenario",
    "tune_tasks",
)


def objective_settings(
    run: PeftRun,
    tuning: TuningSettings,
    train: TrainSettings,
    film: FilmSettings,
    features: FeatureSettings | None,
) -> dict[str, Any]:
    """Everything a trial's objective depends on beyond the study's name: training, the search
    space and tuning split, FiLM, the data (``features``) and the scenario's shape. Two runs
    whose tunings differ in any of these get different studies
    (:func:`privrepro.training.optuna_studies.study_name`); runs that agree share the trials."""
    search = {k: v for k, v in identity(tuning).items() if k not in _NOT_SEEN_BY_TRIALS}
    shape = {k: getattr(run, k) for k in ("nb_tasks", "disjoint_pct", "blurry_pct", "order")}
    return {
        "train": identity(train),
        "tuning": search,
        "film": identity(film),
        "features": None if features is None else identity(features),
        "spec": {**shape, "dummy_reference": run.dummy_reference},
    }


def _tuning_inputs(
    run: PeftRun, scenario: Scenario, label_ids: list[np.ndarray], tuning: TuningSettings, seed: int
) -> tuple[np.ndarray, ...]:
    """What a study's trials train and score on: the tuning and validation rows and the tuning
    task's label space."""
    t0, _, tune_idx, val_idx = tuning_split(run, scenario, tuning, seed)
    return tune_idx, val_idx, np.asarray(label_ids[t0])


def study_run(
    run: PeftRun,
    scenario: Scenario,
    label_ids: list[np.ndarray],
    tuning: TuningSettings,
    data: PeftData,
    seed: int,
) -> tuple[PeftRun, Scenario, list[np.ndarray]]:
    """The run whose study tunes ``run``, with its scenario and label spaces: the one run of
    each study that names it, seeds its sampler and trials and gives its tuning data.

    * ``tuning.label_space = "const"``: the run in S_prior^const without dummy labels, so every
      label configuration of one (benchmark, ε, repeat, seed) shares one study (App. E.1).
    * A 5-Datasets task order: the canonical order, when its tuning rows and label space are
      the very same (the CIFAR-10 member is tuned on wherever it stands), so the orders Naive is
      trained in share one study instead of repeating its trials.
    """
    from privrepro.continual.label_spaces import label_spaces_for

    num_classes = data.num_classes
    key, key_ids = study_key_run(run, tuning), label_ids
    if _shape(key) != _shape(run):  # a 'split' study of a blurry run: the split's own tasks
        scenario = peft_scenario(key, data.train_y, data.test_y, num_classes, seed)
        key_ids = _space_ids(key, scenario, num_classes, label_spaces_for)
    elif key != run:
        key_ids = _space_ids(key, scenario, num_classes, label_spaces_for)
    if key.order:
        canonical = replace(key, order=())
        c_sc = peft_scenario(canonical, data.train_y, data.test_y, num_classes, seed)
        c_ids = _space_ids(canonical, c_sc, num_classes, label_spaces_for)
        mine = _tuning_inputs(key, scenario, key_ids, tuning, seed)
        theirs = _tuning_inputs(canonical, c_sc, c_ids, tuning, seed)
        if all(np.array_equal(a, b) for a, b in zip(mine, theirs, strict=True)):
            return canonical, c_sc, c_ids
    return key, scenario, key_ids


_SHAPE = ("blurry", "nb_tasks", "disjoint_pct", "blurry_pct")


def _shape(run: PeftRun) -> tuple[Any, ...]:
    return tuple(getattr(run, k) for k in _SHAPE)


def study_key_run(run: PeftRun, tuning: TuningSettings) -> PeftRun:
    """The run that names ``run``'s study, before a 5-Datasets order is folded into the
    canonical one (:func:`study_run`): with ``tuning.label_space = "const"`` in S_prior^const
    without dummy labels; with ``tuning.scenario = "split"`` on the benchmark's
    class-incremental split into ``tuning.tune_tasks`` tasks (0: the run's own number), not
    blurry (App. E.1: one task of "10/20 classes", once per (ε, δ) and seed)."""
    key = run
    if tuning.label_space == "const":
        key = replace(key, label_policy="prior_const", dummy_factor=1, dummy_reference="base")
    if tuning.scenario == "split" and (key.blurry or tuning.tune_tasks):
        base = PeftRun(benchmark=key.benchmark, method=key.method, epsilon=key.epsilon)
        key = replace(
            key,
            blurry="",
            nb_tasks=tuning.tune_tasks or key.nb_tasks,
            disjoint_pct=base.disjoint_pct,
            blurry_pct=base.blurry_pct,
        )
    return key


def _space_ids(
    run: PeftRun, scenario: Scenario, num_classes: int, spaces_for: Any
) -> list[np.ndarray]:
    spaces = spaces_for(run.label_policy, scenario, run.dummy_factor, run.dummy_reference)
    return [s.ids(num_classes) for s in spaces]


def tuning_split(
    run: PeftRun, scenario: Scenario, tuning: TuningSettings, seed: int
) -> tuple[int, int, np.ndarray, np.ndarray]:
    """The tuning task, the tuning size, and the tuning / validation indices (drawn per repeat
    and seed)."""
    t0 = min(tuning.tune_task, scenario.nb_tasks - 1)
    if run.order:  # 5-Datasets in another order: tune on the same member (CIFAR-10)
        t0 = list(run.order).index(t0)
    rng = numpy_stream(seed, "cl-peft", run.benchmark, f"repeat{run.repeat}", "tune-split")
    perm = rng.permutation(scenario.train_tasks[t0])
    # 'benchmark': fractions of every task's training data (App. F's "final training dataset"
    # read as the whole 5-Datasets), drawn from the tuning task alone
    size = len(perm)
    if tuning.tune_of == "benchmark":
        size = sum(len(t) for t in scenario.train_tasks)
    n_tune = max(1, round(tuning.tune_fraction * size))
    n_val = max(1, round(tuning.val_fraction * size))
    if tuning.tune_fraction + tuning.val_fraction > 1 or size > len(perm):  # of a larger size
        n_tune = max(1, min(len(perm) - 1, n_tune))
        n_val = max(1, min(len(perm) - n_tune, n_val))
    return t0, n_tune, perm[:n_tune], perm[n_tune : n_tune + n_val]


def unclipped_if_nondp(hp: DPSGDHyper, train: TrainSettings) -> DPSGDHyper:
    """Non-DP runs train without clipping unless ``train.nondp_clip`` (assumed)."""
    if hp.private or train.nondp_clip:
        return hp
    return replace(hp, clip=math.inf)


def _hyper(run: PeftRun, train: TrainSettings, batch: float, lr: float, clip: float) -> DPSGDHyper:
    return DPSGDHyper(
        train.epochs,
        batch,
        lr,
        clip,
        run.epsilon,
        train.delta,
        train.accountant,
        train.epsilon_tolerance,
    )


def tune_hyper(
    run: PeftRun,
    data: PeftData,
    scenario: Scenario,
    label_ids: list[np.ndarray],
    tuning: TuningSettings,
    train: TrainSettings,
    film: FilmSettings,
    *,
    seed: int,
    studies: str | Path,
    tag: str = "",
    features: FeatureSettings | None = None,
    loops: Loops = PLAIN,
    log_metric: MetricLogger | None = None,
) -> Tuned:
    """Tune (or, with ``tuning.enabled`` false, fix) DP-SGD's batch size, lr and clipping bound.

    The study is the one of :func:`study_run` (shared by the runs and label configurations
    of one (benchmark, kind, scenario, ε, repeat, seed)), named ``study_name(key, seed, tag)``
    plus a digest of everything its objective sees (:func:`objective_settings`, with
    ``features`` the run's data settings), so two figures whose tunings differ never share
    trials under one name. It lives at ``tuning.storage`` (an
    RDB URL or file) or in ``studies/<name>.log``; it is resumed, never rerun, and each trial
    trains one member on the tuning data and scores its validation accuracy. ``loops`` (the
    workspace's, :mod:`privrepro.loops`) runs the trials and each trial's DP-SGD steps and
    validation batches. ``log_metric`` gets each trial's value and
    the best so far (``trial_value``, ``best_value`` at the trial's number) and each trial's
    DP-SGD metrics (``trial<n>/loss``, ``trial<n>/epsilon_spent``).
    """
    from privrepro.continual.peft.members import member_logits, train_member
    from privrepro.training.optuna_studies import (
        SearchSpace,
        complete_trials,
        open_study,
        run_study,
        suggest_hyper,
    )
    from privrepro.training.optuna_studies import study_name as keyed_study_name

    if tuning.enabled:  # the study's run: its scenario gives the tuning data, its labels the head
        run, scenario, label_ids = study_run(run, scenario, label_ids, tuning, data, seed)
    t0, n_tune, tune_idx, val_idx = tuning_split(run, scenario, tuning, seed)
    if not tuning.enabled:
        return Tuned(
            _hyper(run, train, tuning.batch_size, tuning.lr, tuning.clip), n_tune, {"tuned": False}
        )
    dev = data.train_x.device
    x_tune = select_rows(data.train_x, tune_idx)
    x_val = select_rows(data.train_x, val_idx)
    y_val = torch.as_tensor(data.train_y[val_idx], device=dev)
    space = SearchSpace(
        lr_low=tuning.lr_low, lr_high=tuning.lr_high, epochs=train.epochs, log=tuning.log_scale
    )
    name = study_name(run, seed, tag)  # seeds the sampler and the trials' streams
    key = keyed_study_name(name, objective_settings(run, tuning, train, film, features))
    study = open_study(
        key,
        tuning.storage or str(Path(studies) / f"{key}.log"),
        sampler=tuning.sampler,
        seed=int(numpy_stream(seed, name).integers(2**31)),
        n_startup_trials=tuning.n_startup_trials,
    )

    def objective(trial: Any) -> float:
        hp = suggest_hyper(trial, space, n_tune, run.epsilon, train.delta, train.accountant)
        hp = unclipped_if_nondp(replace(hp, epsilon_tolerance=train.epsilon_tolerance), train)
        gen = torch_stream(seed, name, f"trial{trial.number}", device=str(dev))
        m = train_member(
            run.kind,
            x_tune,
            data.train_y[tune_idx],
            label_ids[t0],
            hp,
            generator=gen,
            backbone=data.backbone,
            physical_batch=film.physical_batch,
            engine=film.engine,
            loops=loops,
            log_metric=prefixed(log_metric, f"trial{trial.number}/"),
            precision=train.precision,
        )
        z = member_logits(m, x_val, precision=train.precision, loops=loops)
        pred = torch.as_tensor(m.label_ids, device=z.device)[z.argmax(1)]
        return float((pred == y_val).float().mean())

    run_study(study, objective, tuning.n_trials, loops=loops, log_metric=log_metric)
    done = complete_trials(study)
    best = max(done, key=lambda t: (t.value, -t.number))
    p = best.params
    return Tuned(
        _hyper(run, train, float(p["batch_size"]), float(p["lr"]), float(p["clip"])),
        n_tune,
        {"tuned": True, "study": key, "best_val_acc": best.value, "n_complete": len(done)},
    )
