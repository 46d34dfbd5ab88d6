"""PEFT ensembles trained with DP-SGD (cl paper, Sec. 6, Alg. 2; baselines Algs. A1, A2).

One call runs a whole experiment, from the data to tidy rows::

    from privrepro.continual.peft import PeftRun, TuningSettings, run_peft

    out = run_peft(PeftRun("cifar100", "peft_head", epsilon=1.0), tuning=TuningSettings(enabled=False))
    out.rows[out.rows["row"] == "metric"]        # AA_t and AF_t per task

Modules: :mod:`.members` (FiLM and head-only members, Alg. 2's loop), :mod:`.settings` (the run
and its settings, with their ranges), :mod:`.data` (features or images of a run),
:mod:`.hyperparameter_search` (the Optuna study of a run and the transfer to each task's
size), :mod:`.scenario` (a run's tasks), :mod:`.runs` (:func:`run_peft`,
:func:`ensemble_all_orders`), :mod:`.shared_members` (an ensemble's members, trained once per
member key), :mod:`.shared_work` (what a unit shares with others — its study, its members, its
data — from its settings alone, for a cost model). Naive and Non-CL members:
:mod:`privrepro.continual.baselines`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.continual.peft.data import PeftData, load_film_images, load_peft_data
    from privrepro.continual.peft.hyperparameter_search import Tuned, study_name, tune_hyper
    from privrepro.continual.peft.members import (
        PEFT_KINDS,
        Member,
        film_parameter_count,
        iter_ensemble,
        local_targets,
        make_film,
        member_logits,
        new_head,
        small_vit,
        train_member,
        vit_b16_film_count,
    )
    from privrepro.continual.peft.runs import PeftOutput, ensemble_all_orders, run_peft
    from privrepro.continual.peft.scenario import peft_scenario
    from privrepro.continual.peft.settings import (
        FILM_BENCHMARKS,
        METHODS,
        FeatureSettings,
        FilmSettings,
        PeftRun,
        TrainSettings,
        TuningSettings,
        check_film_source,
        check_settings,
        eps_label,
        identity,
    )

_EXPORTS = {
    "privrepro.continual.peft.data": ("PeftData", "load_film_images", "load_peft_data"),
    "privrepro.continual.peft.hyperparameter_search": ("Tuned", "study_name", "tune_hyper"),
    "privrepro.continual.peft.members": (
        "PEFT_KINDS",
        "Member",
        "film_parameter_count",
        "iter_ensemble",
        "local_targets",
        "make_film",
        "member_logits",
        "new_head",
        "small_vit",
        "train_member",
        "vit_b16_film_count",
    ),
    "privrepro.continual.peft.runs": ("PeftOutput", "ensemble_all_orders", "run_peft"),
    "privrepro.continual.peft.scenario": ("peft_scenario",),
    "privrepro.continual.peft.settings": (
        "FILM_BENCHMARKS",
        "METHODS",
        "FeatureSettings",
        "FilmSettings",
        "PeftRun",
        "TrainSettings",
        "TuningSettings",
        "check_film_source",
        "check_settings",
        "eps_label",
        "identity",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "FILM_BENCHMARKS",
    "METHODS",
    "PEFT_KINDS",
    "FeatureSettings",
    "FilmSettings",
    "Member",
    "PeftData",
    "PeftOutput",
    "PeftRun",
    "TrainSettings",
    "Tuned",
    "TuningSettings",
    "check_film_source",
    "check_settings",
    "ensemble_all_orders",
    "eps_label",
    "film_parameter_count",
    "identity",
    "iter_ensemble",
    "load_film_images",
    "load_peft_data",
    "local_targets",
    "make_film",
    "member_logits",
    "new_head",
    "peft_scenario",
    "run_peft",
    "small_vit",
    "study_name",
    "train_member",
    "tune_hyper",
    "vit_b16_film_count",
]
