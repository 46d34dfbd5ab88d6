"""What a PEFT unit computes that other units and figures compute too, from its settings alone.

A cost model (and ``benchmarks/count_cl_trainings.py --grid``) counts each distinct computation
of the paper profile once, before any data is read. Three parts of a PEFT run are shared (more in
``docs/modules.md``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from privrepro.continual.peft.settings import (
    FeatureSettings,
    FilmSettings,
    PeftRun,
    TrainSettings,
    TuningSettings,
)

__all__ = ["data_key", "ensemble_key", "study_key"]


def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def study_key(unit: Mapping[str, Any], seed: int = 0, tag: str = "") -> str:
    """The name of the study that tunes ``unit`` (a PEFT unit: its run's fields and the four
    settings groups), as :func:`~.hyperparameter_search.tune_hyper` names it."""
    from privrepro.continual.peft.hyperparameter_search import (
        objective_settings,
        study_key_run,
        study_name,
    )
    from privrepro.training.optuna_studies import study_name as keyed

    run = PeftRun.from_unit(unit)
    tuning = TuningSettings(**unit["tuning"])
    key = replace(study_key_run(run, tuning), order=())
    groups = (
        tuning,
        TrainSettings(**unit["train"]),
        FilmSettings(**unit["film"]),
        FeatureSettings(**unit["features"]),
    )
    return keyed(study_name(key, seed, tag), objective_settings(key, *groups))


def ensemble_key(unit: Mapping[str, Any], seed: int = 0, tag: str = "") -> str | None:
    """A digest naming the members of ``unit``'s PEFT Ensemble (equal for units that train the
    same members), ``None`` for a Naive or Non-CL unit."""
    run = PeftRun.from_unit(unit)
    if run.family != "peft":
        return None
    spec = [
        run.kind,
        run.benchmark,
        run.blurry,
        run.nb_tasks,
        run.disjoint_pct,
        run.blurry_pct,
        list(run.order),
        run.label_policy,
        run.dummy_factor,
        run.dummy_reference if run.dummy_factor > 1 else "base",  # ×1: no dummies to refer to
        run.epsilon,
        run.repeat,
        seed,
        unit["train"],
        unit["film"] if run.kind == "film" else None,
        unit["features"],
        study_key(unit, seed, tag),
    ]
    return _digest(spec)


def data_key(unit: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a PEFT unit reads, cached once for every unit and figure: a FiLM unit the pixel
    arrays of its benchmark for its backbone; a head unit the backbone features of its
    benchmark, keyed as the cosine figures key them (their files are the same)."""
    from privrepro.config.identity import identity
    from privrepro.continual.benchmarks import features_cache_key
    from privrepro.continual.peft.data import feature_spec

    run = PeftRun.from_unit(unit)
    features = FeatureSettings(**unit["features"])
    if run.kind == "film":
        return ("cl-pixels", run.benchmark, features.source, features.backbone)
    return features_cache_key(run.benchmark, identity(feature_spec(features)))
