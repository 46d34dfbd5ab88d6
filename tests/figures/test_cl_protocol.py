"""The cl PEFT figures' paper-profile grids under each reading of the protocol (docs/cl-peft.md,
"The protocol and its readings"): unit counts from the grids' closed forms, and the tuning
studies Fig. 4 shares with Fig. 5. Nothing is computed: the units are planned only."""

from __future__ import annotations

from typing import Any

from privrepro.config.validation import build_params
from privrepro.continual.peft.shared_work import study_key
from privrepro.runner.plan import compose, effective_params
from privrepro.runner.recipe_config import load_recipe


def _units(figure: str, *overrides: str) -> list[dict[str, Any]]:
    cfg = compose(figure, ["profile=paper", *overrides])
    recipe = load_recipe(str(cfg.figure.recipe))
    return recipe.units(build_params(recipe.params_type, effective_params(cfg), "params"))


def test_fig5_runs_imagenet_r_three_seeds_and_non_cl_once_per_epsilon() -> None:
    """Table A6: "averaged over three seeds"; Tables A5/A6 give Non-CL no std: one run per ε.
    Per ε (3 levels): CIFAR 4 methods × 5 repeats + 2 Non-CL × 1, ImageNet-R 4 × 3 + 2 × 1."""
    units = _units("cl/fig5_peft")
    assert len(units) == 3 * ((4 * 5 + 2) + (4 * 3 + 2))
    assert {u["repeat"] for u in units if u["method"].startswith("noncl")} == {0}
    assert max(u["repeat"] for u in units if u["benchmark"] == "imagenet-r") == 2
    every = _units("cl/fig5_peft", "params.noncl_repeats=5", "params.imagenet_r_repeats=5")
    assert len(every) == 3 * 2 * 6 * 5  # the larger reading: every method, five seeds


def test_table_a7_trains_one_naive_order_per_epsilon_and_seed() -> None:
    """Figs. A7/A8: "after training three models": 3 ε × 3 repeats × (ensemble + one Naive)."""
    assert len(_units("cl/tA7_peft")) == 3 * 3 * 2
    assert len(_units("cl/tA7_peft", "params.naive_orders=3")) == 3 * 3 * (1 + 3)


def test_fig4_tunes_with_the_studies_of_the_ten_task_split() -> None:
    """App. E.1, one task of "10/20 classes" once per (ε, seed): Fig. 4's 45 units name the 15
    studies (3 ε × 5 repeats) of Fig. 5's Split-CIFAR-100 FiLM runs; per blurry split, 45."""
    fig5 = {study_key(u) for u in _units("cl/fig5_peft") if u["benchmark"] == "cifar100"}
    fig4 = [study_key(u) for u in _units("cl/fig4_peft")]
    assert len(fig4) == 45 and len(set(fig4)) == 15 and set(fig4) <= fig5
    apart = {study_key(u) for u in _units("cl/fig4_peft", "params.tuning.scenario=run")}
    assert len(apart) == 45 and not apart & fig5
