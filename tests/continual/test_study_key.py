"""The name of a PEFT run's tuning study: the run's base name plus a digest of everything its
objective sees (``continual.peft.tuning.objective_settings``), so that two figures whose tunings
differ never share trials, and runs that agree do."""

from __future__ import annotations

from dataclasses import replace

from privrepro.continual.peft.hyperparameter_search import objective_settings, study_name
from privrepro.continual.peft.settings import (
    FeatureSettings,
    FilmSettings,
    PeftRun,
    TrainSettings,
    TuningSettings,
)
from privrepro.training.optuna_studies import study_name as keyed_study_name

RUN = PeftRun(benchmark="cifar100", method="peft_head", epsilon=1.0)


def _key(
    run: PeftRun = RUN,
    tuning: TuningSettings | None = None,
    train: TrainSettings | None = None,
    features: FeatureSettings | None = None,
) -> str:
    settings = objective_settings(
        run,
        tuning or TuningSettings(),
        train or TrainSettings(),
        FilmSettings(),
        features or FeatureSettings(),
    )
    return keyed_study_name(study_name(RUN, 0, "smoke"), settings)


def test_the_key_is_the_base_name_and_a_digest_that_repeats() -> None:
    base = study_name(RUN, 0, "smoke")
    key = _key()
    assert key.startswith(base + "-") and len(key) == len(base) + 11
    assert key == _key()  # the same settings: the same study (trials reused)


def test_what_the_trials_see_changes_the_key() -> None:
    assert _key(train=replace(TrainSettings(), epochs=TrainSettings().epochs + 1)) != _key()
    assert _key(features=replace(FeatureSettings(), max_train_per_class=7)) != _key()
    assert _key(tuning=replace(TuningSettings(), lr_high=1e-3)) != _key()
    assert _key(run=replace(RUN, nb_tasks=5)) != _key()


def test_where_the_study_lives_and_when_it_stops_do_not() -> None:
    elsewhere = replace(TuningSettings(), storage="postgresql://db/x", n_trials=3)
    assert _key(tuning=elsewhere) == _key()
    fixed = replace(TuningSettings(), lr=0.5, batch_size=8.0, clip=2.0)  # used only untuned
    assert _key(tuning=fixed) == _key()
