"""Every experiment config runs in the tiny profile and records the parameters it composed.

That each composes to its recipe's full parameter set, with every value written once, is
``test_composition.py``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest

from privrepro.config.validation import build_params
from privrepro.runner.catalog import list_experiments
from privrepro.runner.run import compose, effective_params, load_recipe, run_config

EXPERIMENTS = list_experiments()


def test_every_experiment_is_described() -> None:
    assert any(e.name == "cl/fig2" for e in EXPERIMENTS)
    for entry in EXPERIMENTS:
        assert entry.description, f"{entry.path}: the first comment line describes the figure"


@pytest.mark.parametrize("entry", EXPERIMENTS, ids=[e.name for e in EXPERIMENTS])
def test_runs_in_tiny_profile(entry, store_overrides: list[str], tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cfg = compose(entry.name, ["profile=tiny", *store_overrides])
    assert cfg.figure.paper == entry.paper and cfg.figure.name == entry.figure
    run = run_config(cfg)
    assert len(run.table) > 0
    assert run.table_path.is_file()
    assert set(pd.read_csv(run.table_path)["profile"]) == {"tiny"}
    assert any(p.suffix == ".png" for p in run.plot_paths)
    # what runs is what was composed: the recorded params and each unit's config
    recipe = load_recipe(cfg.figure.recipe)
    composed = build_params(recipe.params_type, effective_params(cfg))
    meta = json.loads((run.table_path.parent / f"{entry.figure}.meta.json").read_text())
    assert meta["params"] == json.loads(json.dumps(dataclasses.asdict(composed), default=str))
    store = tmp_path / "experiments" / entry.paper / entry.figure
    recorded = sorted(
        json.dumps(json.loads((store / uid / "config.json").read_text())["unit"], sort_keys=True)
        for uid in meta["selection"]
    )
    expected = sorted(
        json.dumps(json.loads(json.dumps(u, default=str)), sort_keys=True)
        for u in recipe.units(composed)
    )
    assert recorded == expected
