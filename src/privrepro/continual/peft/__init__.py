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
    from privrepro.continual.peft.data import PeftData as PeftData
    from privrepro.continual.peft.data import load_film_images as load_film_images
    from privrepro.continual.peft.data import load_peft_data as load_peft_data
    from privrepro.continual.peft.hyperparameter_search import Tuned as Tuned
    from privrepro.continual.peft.hyperparameter_search import study_name as study_name
    from privrepro.continual.peft.hyperparameter_search import tune_hyper as tune_hyper
    from privrepro.continual.peft.members import PEFT_KINDS as PEFT_KINDS
    from privrepro.continual.peft.members import Member as Member
    from privrepro.continual.peft.members import film_parameter_count as film_parameter_count
    from privrepro.continual.peft.members import iter_ensemble as iter_ensemble
    from privrepro.continual.peft.members import local_targets as local_targets
    from privrepro.continual.peft.members import make_film as make_film
    from privrepro.continual.peft.members import member_logits as member_logits
    from privrepro.continual.peft.members import new_head as new_head
    from privrepro.continual.peft.members import small_vit as small_vit
    from privrepro.continual.peft.members import train_member as train_member
    from privrepro.continual.peft.members import vit_b16_film_count as vit_b16_film_count
    from privrepro.continual.peft.runs import PeftOutput as PeftOutput
    from privrepro.continual.peft.runs import ensemble_all_orders as ensemble_all_orders
    from privrepro.continual.peft.runs import run_peft as run_peft
    from privrepro.continual.peft.scenario import peft_scenario as peft_scenario
    from privrepro.continual.peft.settings import FILM_BENCHMARKS as FILM_BENCHMARKS
    from privrepro.continual.peft.settings import METHODS as METHODS
    from privrepro.continual.peft.settings import FeatureSettings as FeatureSettings
    from privrepro.continual.peft.settings import FilmSettings as FilmSettings
    from privrepro.continual.peft.settings import PeftRun as PeftRun
    from privrepro.continual.peft.settings import TrainSettings as TrainSettings
    from privrepro.continual.peft.settings import TuningSettings as TuningSettings
    from privrepro.continual.peft.settings import check_film_source as check_film_source
    from privrepro.continual.peft.settings import check_settings as check_settings
    from privrepro.continual.peft.settings import eps_label as eps_label
    from privrepro.continual.peft.settings import identity as identity

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
