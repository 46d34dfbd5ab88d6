"""Optuna studies for DP-SGD hyperparameters, kept in the run store and resumable.

The tuning half of :mod:`privrepro.training` (DP-SGD itself is :mod:`.dpsgd`): a library that
any experiment calls from inside its computation, not part of the runner.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from privrepro.config import ConfigError
from privrepro.loops import Loops
from privrepro.metrics import MetricLogger
from privrepro.processes import process_alive

if TYPE_CHECKING:  # torch is imported only by the functions that build DP-SGD settings
    from privrepro.training.dpsgd import DPSGDHyper

__all__ = [
    "SearchSpace",
    "complete_trials",
    "make_sampler",
    "open_study",
    "reap_stale_trials",
    "run_study",
    "study_name",
    "suggest_hyper",
    "transfer_hyper",
]

SAMPLERS = ("gp", "tpe", "random")
_WORKER_ATTR = "privrepro_worker"
#: a RUNNING trial not yet tagged with its worker is stale only after this long (its worker may
#: be between creating and tagging it)
_UNTAGGED_GRACE_S = 60.0


@dataclass(frozen=True)
class SearchSpace:
    """Table A2 of the cl paper. ``log`` (assumed: the paper does not say whether the ranges are
    searched on a log or a linear scale; log suits ranges over several decades)."""

    lr_low: float = 1e-7
    lr_high: float = 1e-2
    batch_low: int = 10
    clip_low: float = 0.2
    clip_high: float = 10.0
    epochs: float = 40.0
    log: bool = True

    def check(self) -> None:
        if not 0 < self.lr_low < self.lr_high:
            raise ConfigError("lr_low", self.lr_low, f"must lie in (0, lr_high={self.lr_high})")
        if not 0 < self.clip_low < self.clip_high:
            raise ConfigError(
                "clip_low", self.clip_low, f"must lie in (0, clip_high={self.clip_high})"
            )
        if self.batch_low < 1:
            raise ConfigError("batch_low", self.batch_low, "must be >= 1")


def suggest_hyper(
    trial: Any,
    space: SearchSpace,
    n_tune: int,
    epsilon: float | None,
    delta: float,
    accountant: str = "prv",
) -> DPSGDHyper:
    """One trial's hyperparameters: batch size in [batch_low, n_tune], lr and clip in Table A2's
    ranges; epochs fixed; σ follows from the target ε when the run is calibrated."""
    from privrepro.training.dpsgd import DPSGDHyper

    space.check()
    hi = max(int(n_tune), space.batch_low)
    batch = trial.suggest_int("batch_size", min(space.batch_low, hi), hi, log=space.log)
    lr = trial.suggest_float("lr", space.lr_low, space.lr_high, log=space.log)
    clip = trial.suggest_float("clip", space.clip_low, space.clip_high, log=space.log)
    return DPSGDHyper(
        epochs=space.epochs,
        batch_size=float(batch),
        lr=lr,
        clip=clip,
        epsilon=epsilon,
        delta=delta,
        accountant=accountant,
    )


def transfer_hyper(hp: DPSGDHyper, n_tune: int, n_train: int) -> DPSGDHyper:
    """Hyperparameters tuned on ``n_tune`` samples moved to ``n_train`` (cl paper, App. F):
    expected batch size × factor (the sample rate stays), Adam lr × √factor, clipping bound and
    epochs unchanged; so q and the step count, hence σ, are unchanged. The expected batch size
    of Poisson sampling need not be an integer; it is kept exact (not rounded) so q is exactly
    the tuning run's and σ is calibrated once."""
    if n_tune <= 0:
        raise ConfigError("n_tune", n_tune, "must be > 0")
    if n_train <= 0:
        return hp
    factor = n_train / n_tune
    return replace(hp, batch_size=hp.batch_size * factor, lr=hp.lr * math.sqrt(factor))


def study_name(base: str, settings: Mapping[str, Any]) -> str:
    """``base`` plus a digest of every setting the objective depends on (``<base>-<10 hex>``).

    A study is shared by whoever asks for the same name, in one journal file or one database.
    Keying it by the objective keeps apart the tuning of two figures that differ in anything the
    trials see (epochs, search space, data, model), and lets figures whose tuning is identical
    reuse the same trials.
    """
    text = json.dumps(settings, sort_keys=True, default=str)
    return f"{base}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def make_sampler(kind: str, seed: int, n_startup_trials: int = 10) -> Any:
    """Optuna's ``GPSampler`` (the paper's), or TPE / random for comparison, seeded per trial.

    Each trial draws from its own stream, ``(seed, "trial", number)``
    (:func:`privrepro.seeding.stream_seed`): workers that share a study with the same ``seed``
    propose different start-up points (their trials have different numbers), and the study is
    still a function of its seed and its history, whichever worker ran which trial, and
    whether it was resumed.
    """
    if kind not in SAMPLERS:
        raise ConfigError("sampler", kind, f"must be one of {list(SAMPLERS)}")
    return _trial_seeded_sampler(kind, seed, n_startup_trials)


def _base_sampler(kind: str, seed: int, n_startup_trials: int) -> Any:
    import optuna

    if kind == "gp":
        return optuna.samplers.GPSampler(seed=seed, n_startup_trials=n_startup_trials)
    if kind == "tpe":
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=n_startup_trials)
    return optuna.samplers.RandomSampler(seed=seed)


def _trial_seeded_sampler(kind: str, seed: int, n_startup_trials: int) -> Any:
    import optuna

    from privrepro.seeding import stream_seed

    class TrialSeededSampler(optuna.samplers.BaseSampler):
        """A fresh ``kind`` sampler per trial, seeded from ``(seed, trial number)``."""

        def __init__(self) -> None:
            self.kind, self.seed = kind, seed
            self._inner = _base_sampler(kind, seed, n_startup_trials)

        def before_trial(self, study: Any, trial: Any) -> None:
            trial_seed = stream_seed(seed, "trial", str(trial.number)) % 2**32
            self._inner = _base_sampler(kind, trial_seed, n_startup_trials)
            self._inner.before_trial(study, trial)

        def infer_relative_search_space(self, study: Any, trial: Any) -> Any:
            return self._inner.infer_relative_search_space(study, trial)

        def sample_relative(self, study: Any, trial: Any, search_space: Any) -> Any:
            return self._inner.sample_relative(study, trial, search_space)

        def sample_independent(
            self, study: Any, trial: Any, param_name: str, param_distribution: Any
        ) -> Any:
            return self._inner.sample_independent(study, trial, param_name, param_distribution)

        def after_trial(self, study: Any, trial: Any, state: Any, values: Any) -> None:
            self._inner.after_trial(study, trial, state, values)

        def reseed_rng(self) -> None:  # the per-trial streams are the point: nothing to reseed
            return None

    return TrialSeededSampler()


def _storage(location: str | Path, heartbeat_interval: int | None) -> Any:
    import optuna
    from optuna.storages.journal import JournalFileBackend

    text = str(location)
    if "://" in text:
        kwargs: dict[str, Any] = {}
        if heartbeat_interval:
            kwargs = {
                "heartbeat_interval": heartbeat_interval,
                "grace_period": 4 * heartbeat_interval,
            }
        from privrepro.training.study_storage import normalize_url

        return _rdb_storage(normalize_url(text), kwargs)
    path = Path(text)
    path.parent.mkdir(parents=True, exist_ok=True)
    from privrepro.training.study_storage import check_journal

    check_journal("study journal", path)  # a damaged journal: one line, before Optuna reads it
    return optuna.storages.JournalStorage(JournalFileBackend(str(path)))


def _rdb_storage(url: str, kwargs: dict[str, Any], attempts: int = 6) -> Any:
    """Optuna's RDBStorage for ``url``. Workers started together on a new database all create
    its tables; the losers of that race get a duplicate-table error (optuna issue 4621). Once the
    winner has committed, the schema is there: so retry, with a random back-off."""
    import random

    from sqlalchemy.exc import SQLAlchemyError

    from privrepro.training.study_storage import open_rdb_storage

    for attempt in range(attempts):
        try:
            return open_rdb_storage(url, **kwargs)  # PostgreSQL: tables made under a lock
        except SQLAlchemyError:
            if attempt == attempts - 1:
                raise
            time.sleep((0.2 + random.random()) * (attempt + 1))
    raise AssertionError("unreachable")


def open_study(
    name: str,
    storage: str | Path,
    *,
    sampler: str = "gp",
    seed: int = 0,
    n_startup_trials: int = 10,
    heartbeat_interval: int | None = None,
) -> Any:
    """Create or load the study ``name`` (maximising validation accuracy) in ``storage``."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna.create_study(
        study_name=name,
        storage=_storage(storage, heartbeat_interval),
        sampler=make_sampler(sampler, seed, n_startup_trials),
        direction="maximize",
        load_if_exists=True,
    )


def _me() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def reap_stale_trials(study: Any) -> int:
    """Mark ``RUNNING`` trials of dead workers ``FAIL`` (reason recorded); return how many.

    A trial records its worker as ``host:pid``; on this host a trial whose process is gone is
    stale. RDB storages with a heartbeat also fail trials whose heartbeat stopped (other hosts).
    Several workers may reap at once: the trial is failed once, by the first.
    """
    import optuna
    from optuna.exceptions import UpdateFinishedTrialError
    from optuna.trial import TrialState

    storage = study._storage
    if isinstance(storage, optuna.storages.RDBStorage) and storage.heartbeat_interval:
        optuna.storages.fail_stale_trials(study)
    host = socket.gethostname()
    now = datetime.now()  # optuna records datetime_start as naive local time
    reaped = 0
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        worker = str(t.system_attrs.get(_WORKER_ATTR, ""))
        w_host, _, w_pid = worker.rpartition(":")
        age = (now - t.datetime_start).total_seconds() if t.datetime_start else math.inf
        dead = (not worker and age > _UNTAGGED_GRACE_S) or (
            bool(worker)
            and w_host == host
            and w_pid.isdigit()
            and not process_alive(int(w_pid), None)
            and worker != _me()
        )
        if not dead:
            continue
        try:
            storage.set_trial_system_attr(
                t._trial_id,
                "fail_reason",
                f"worker {worker or '?'} stopped while RUNNING; marked FAIL on resume",
            )
            storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
        except UpdateFinishedTrialError:  # another live worker reaped it first
            continue
        reaped += 1
    return reaped


def complete_trials(study: Any) -> list[Any]:
    from optuna.trial import TrialState

    return list(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))


def run_study(
    study: Any,
    objective: Callable[[Any], float],
    n_complete: int = 20,
    *,
    max_failures: int = 20,
    poll_s: float = 1.0,
    on_trial: Callable[[int], None] | None = None,
    loops: Loops | None = None,
    log_metric: MetricLogger | None = None,
) -> Any:
    """Run trials until the study holds exactly ``n_complete`` COMPLETE trials (one worker).

    ``loops`` (:mod:`privrepro.loops`) runs the loop over the trials this call starts (ended
    early, the study returns with what it has); without it, a bar counts the COMPLETE trials.
    Stale RUNNING trials are reaped first; a trial that raises is FAIL and retried, up to
    ``max_failures``. With several workers, a trial that sees ``n_complete`` COMPLETE or RUNNING
    trials numbered below it is PRUNED before its objective runs, so the study never exceeds
    ``n_complete``. ``log_metric`` gets ``trial_value`` and ``best_value`` after each trial.
    """
    import optuna
    from optuna.trial import TrialState

    if n_complete < 1:
        raise ConfigError("n_complete", n_complete, "must be >= 1")
    started: list[int] = []

    def tagged(trial: Any) -> float:
        started.append(trial.number)
        trial.storage.set_trial_system_attr(trial._trial_id, _WORKER_ATTR, _me())
        live = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.RUNNING))
        if sum(t.number < trial.number for t in live) >= n_complete:
            raise optuna.TrialPruned("another worker's trial fills the study")
        return objective(trial)

    from privrepro.progress import progress_bar

    reap_stale_trials(study)
    shown: Any = nullcontext(None)  # the caller's loop over the trials this call starts, or a bar
    if loops is None:
        shown = progress_bar(desc=f"trials {study.study_name}"[:60], total=n_complete, unit="trial")
    with shown as bar:
        slots = (
            itertools.count() if loops is None else loops(itertools.count(), "trials", n_complete)
        )
        return _run_until(
            study,
            tagged,
            started,
            n_complete,
            max_failures,
            poll_s,
            on_trial,
            iter(slots),
            bar,
            log_metric,
            loops is not None and loops.truncates,
        )


def _run_until(
    study: Any,
    tagged: Callable[[Any], float],
    started: list[int],
    n_complete: int,
    max_failures: int,
    poll_s: float,
    on_trial: Callable[[int], None] | None,
    slots: Iterator[Any],
    bar: Any = None,
    log_metric: MetricLogger | None = None,
    truncates: bool = False,
) -> Any:
    from optuna.trial import TrialState

    failures = fetched = 0
    while True:
        done = len(complete_trials(study))
        if bar is not None:
            bar.update(min(done, n_complete) - bar.n)
        if done >= n_complete:
            if bar is None and not truncates:
                # a caller's bar counts an item once the next is asked for: ask until it shows
                # the study's n_complete of n_complete, whoever ran them (never under loops that
                # truncate, which time their items one by one)
                while fetched <= n_complete and next(slots, None) is not None:
                    fetched += 1
            return study
        running = len(study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)))
        if done + running >= n_complete:
            time.sleep(poll_s)
            reap_stale_trials(study)
            continue
        if next(slots, None) is None:  # the trials' loop ended early
            return study
        fetched += 1
        started.clear()
        study.optimize(tagged, n_trials=1, catch=(Exception,))
        last = study.trials[started[0]] if started else None
        if last is not None and last.state == TrialState.FAIL:
            failures += 1
            if failures > max_failures:
                raise RuntimeError(f"study {study.study_name}: {failures} failed trials")
        if log_metric is not None and last is not None and last.state == TrialState.COMPLETE:
            log_metric("trial_value", float(last.value), last.number)
            log_metric("best_value", float(study.best_value), last.number)
        if on_trial is not None:
            on_trial(len(complete_trials(study)))
