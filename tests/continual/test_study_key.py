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


def test_blurry_runs_tune_on_one_task_of_the_class_incremental_split() -> None:
    """App. E.1: one task "(10/20 classes)" of the split, whatever the run's scenario: a blurry
    run's study is the 10-task split's (Figs. 3/5), read per blurry split with 'run'."""
    split = replace(RUN, nb_tasks=10)
    for kind in ("not-blurry", "i-blurry", "si-blurry"):
        blurry = replace(RUN, blurry=kind, nb_tasks=5, disjoint_pct=50.0, blurry_pct=10.0)
        key = _study_run(blurry, TuningSettings(tune_tasks=10))
        assert key == split
        assert _study_run(blurry, TuningSettings(scenario="run", tune_tasks=10)) == blurry
    # tune_tasks = 0: the run's own number of tasks, not blurry
    assert _study_run(replace(RUN, blurry="i-blurry", nb_tasks=5), TuningSettings()) == replace(
        RUN, nb_tasks=5
    )


def test_the_study_key_of_a_blurry_unit_is_the_split_units() -> None:
    """The cost model's key (shared_work.study_key) follows the run's: Fig. 4's units and
    Fig. 5's at one (ε, repeat) name one study under 'split', apart under 'run'."""
    from privrepro.config.identity import identity
    from privrepro.continual.peft.shared_work import study_key

    def unit(tuning: TuningSettings, **run: object) -> dict[str, object]:
        return {
            "benchmark": "cifar100",
            "method": "peft_film",
            "epsilon": 1.0,
            "repeat": 2,
            **run,
            "features": identity(FeatureSettings()),
            "film": identity(FilmSettings()),
            "train": identity(TrainSettings()),
            "tuning": identity(tuning),
        }

    fig5 = study_key(unit(TuningSettings(), nb_tasks=10))
    fig4 = study_key(unit(TuningSettings(tune_tasks=10), blurry="si-blurry", nb_tasks=5))
    assert fig4 == fig5
    apart = TuningSettings(scenario="run", tune_tasks=10)
    assert study_key(unit(apart, blurry="si-blurry", nb_tasks=5)) != fig5


def test_the_five_datasets_tuning_size_reads_task_or_benchmark() -> None:
    """App. F: 10 % / 4.28 % "of the final training dataset": of the CIFAR-10 task, or of all
    five members (the tuning rows still come from the CIFAR-10 task)."""
    import numpy as np

    from privrepro.continual.peft.hyperparameter_search import tuning_split
    from privrepro.continual.scenarios import Scenario

    sizes = [600, 730, 150, 600, 500]  # members' training rows (a tenth of 5-Datasets')
    starts = [sum(sizes[:i]) for i in range(5)]
    sc = Scenario(
        "5-datasets",
        50,
        tuple(np.arange(s, s + n) for s, n in zip(starts, sizes, strict=True)),
        tuple(np.arange(0) for _ in sizes),
        tuple(np.arange(10 * i, 10 * i + 10) for i in range(5)),
        np.arange(50),
    )
    run = PeftRun(benchmark="5-datasets", method="peft_head", epsilon=1.0)
    task = TuningSettings(tune_task=4, tune_fraction=0.1, val_fraction=0.0428)
    t0, n_tune, tune_idx, val_idx = tuning_split(run, sc, task, 0)
    assert (t0, n_tune, len(val_idx)) == (4, round(0.1 * 500), round(0.0428 * 500))
    whole = replace(task, tune_of="benchmark")
    _, n_tune, tune_idx, val_idx = tuning_split(run, sc, whole, 0)
    assert (n_tune, len(val_idx)) == (round(0.1 * 2580), round(0.0428 * 2580))
    assert set(tune_idx) | set(val_idx) <= set(range(starts[4], starts[4] + 500))


def test_the_tuning_rows_of_each_reading_at_the_paper_size() -> None:
    """Split-CIFAR-100 at full size (500 images per class): 'split' tunes every Fig. 4 run on
    70 % of one 10-class task, 3,500 images (App. F: "10/20 classes", 70:30); 'run' on 70 % of
    its blurry split's first task: 7,000 of a 5-task not-blurry or i-Blurry split's 10,000, and
    Si-Blurry's own (smaller, its task sizes vary) first task."""
    import numpy as np

    from privrepro.continual.peft.hyperparameter_search import study_key_run, tuning_split
    from privrepro.continual.peft.scenario import peft_scenario

    y = np.repeat(np.arange(100), 500)

    def rows(blurry: str, scenario: str) -> int:
        tuning = TuningSettings(tune_tasks=10, scenario=scenario)
        run = replace(RUN, method="peft_film", blurry=blurry, nb_tasks=5)
        key = study_key_run(run, tuning)
        return int(tuning_split(key, peft_scenario(key, y, y[:0], 100, 0), tuning, 0)[1])

    assert {rows(b, "split") for b in ("not-blurry", "i-blurry", "si-blurry")} == {3500}
    assert rows("not-blurry", "run") == rows("i-blurry", "run") == round(0.7 * 50_000 / 5)
    assert 0 < rows("si-blurry", "run") < 3500
