"""The name of a PEFT run's tuning study: the run's base name plus a digest of everything its
objective sees (``continual.peft.hyperparameter_search.objective_settings``), so that two figures whose tunings
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


def _study_run(run: PeftRun, tuning: TuningSettings) -> PeftRun:
    from privrepro.continual.peft.data import load_peft_data
    from privrepro.continual.peft.hyperparameter_search import study_run
    from privrepro.continual.peft.runs import _label_ids
    from privrepro.continual.peft.scenario import peft_scenario

    features = FeatureSettings(max_train_per_class=6, max_test_per_class=2)
    data = load_peft_data(run, features, FilmSettings())
    sc = peft_scenario(run, data.train_y, data.test_y, data.num_classes, 0)
    key, _, key_ids = study_run(run, sc, _label_ids(run, sc, data.num_classes), tuning, data, 0)
    key_sc = peft_scenario(key, data.train_y, data.test_y, data.num_classes, 0)
    assert [list(i) for i in key_ids] == [
        list(i) for i in _label_ids(key, key_sc, 100 if run.benchmark == "cifar100" else 50)
    ]
    return key


def test_every_label_configuration_of_a_run_is_tuned_by_one_study() -> None:
    """App. E.1: tuned "for each combination of privacy budget (ε, δ) and seed once"."""
    run = replace(RUN, nb_tasks=5)
    const = _study_run(run, TuningSettings())
    assert const == run  # S_prior^const without dummies: the run's own study
    for policy, factor in (("prior", 1), ("prior_const", 10), ("prior", 100)):
        other = replace(run, label_policy=policy, dummy_factor=factor)
        assert _study_run(other, TuningSettings()) == const
        # each run's own label space: its own study, as before
        assert _study_run(other, TuningSettings(label_space="run")) == other
    assert study_name(replace(run, label_policy="prior"), 0) != study_name(run, 0)


def test_the_five_datasets_orders_share_the_study_of_the_canonical_order() -> None:
    """Naive's task orders tune on the same CIFAR-10 rows and labels: one study, not one each."""
    run = PeftRun(benchmark="5-datasets", method="naive_head", epsilon=1.0, order=(3, 4, 0, 2, 1))
    tuning = TuningSettings(tune_task=4, tune_fraction=0.1, val_fraction=0.0428)
    assert _study_run(run, tuning) == replace(run, order=())
    # the exact label sets: the CIFAR-10 member's ten labels whatever its position
    exact = replace(run, label_policy="prior")
    assert _study_run(exact, replace(tuning, label_space="run")) == replace(exact, order=())
