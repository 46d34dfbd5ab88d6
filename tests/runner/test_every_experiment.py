"""Every experiment config composes, lists every recipe parameter, and runs in the tiny profile."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from privrepro.runner.catalog import list_experiments
from privrepro.runner.run import compose, load_recipe, run_experiment

EXPERIMENTS = list_experiments()


def test_there_are_experiments() -> None:
    assert any(e.name == "cl/fig2" for e in EXPERIMENTS)


@pytest.mark.parametrize("entry", EXPERIMENTS, ids=[e.name for e in EXPERIMENTS])
def test_config_is_complete_and_consistent(entry) -> None:  # type: ignore[no-untyped-def]
    cfg = compose(entry.name, ["profile=tiny"])
    assert cfg.figure.paper == entry.paper and cfg.figure.name == entry.figure
    assert entry.description, f"{entry.path}: the first comment line describes the figure"
    recipe = load_recipe(cfg.figure.recipe)
    fields = {f.name for f in dataclasses.fields(recipe.params_type)}
    listed = set(OmegaConf.to_container(cfg.params))  # type: ignore[arg-type]
    # every parameter is visible (and overridable) in the config; none is unknown
    assert listed == fields, f"{entry.path}: params differ from {recipe.params_type.__name__}"
    assert "tiny" in cfg.profiles, f"{entry.path}: needs a profiles.tiny block for the tests"


@pytest.mark.parametrize("entry", EXPERIMENTS, ids=[e.name for e in EXPERIMENTS])
def test_runs_in_tiny_profile(entry, store_overrides: list[str], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run = run_experiment(entry.name, ["profile=tiny", *store_overrides])
    assert len(run.table) > 0
    assert run.table_path.is_file()
    assert set(pd.read_csv(run.table_path)["profile"]) == {"tiny"}
    assert any(p.suffix == ".png" for p in run.plot_paths)
