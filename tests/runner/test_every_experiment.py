"""Every experiment config runs in the tiny profile, records the parameters it composed, and
its table keeps its declared schema; its claims evaluate on that run; its provenance is its own.

That each composes to its recipe's full parameter set, with every value written once, is
``test_composition.py``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from privrepro.config.validation import assumptions_of, build_params
from privrepro.data.provenance import UNDECLARED, is_stand_in_label
from privrepro.figures.table_schema import check_table, load_schema
from privrepro.report.claims import build_claim_card
from privrepro.report.references import load_references
from privrepro.report.results import load_results
from privrepro.runner.catalog import list_experiments
from privrepro.runner.plan import compose, effective_params
from privrepro.runner.recipe_config import load_recipe
from privrepro.runner.run import run_config

EXPERIMENTS = list_experiments()
CLAIMS = load_references().claims


def test_every_experiment_is_described() -> None:
    assert any(e.name == "cl/fig2" for e in EXPERIMENTS)
    for entry in EXPERIMENTS:
        assert entry.description, f"{entry.path}: the first comment line describes the figure"


@pytest.mark.parametrize("entry", EXPERIMENTS, ids=[e.name for e in EXPERIMENTS])
def test_table_schema_is_declared(entry) -> None:  # type: ignore[no-untyped-def]
    assert load_schema(entry.paper, entry.figure) is not None, (
        f"{entry.name}: declare its table schema in src/privrepro/figures/schemas/{entry.paper}.yaml"
    )


_NUMBER = r"([-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
#: Words in a provenance note that belong to one model family only (ip: the SLL network follows
#: Araujo et al.; the ResNet does not).
_FAMILIES = {"sll": re.compile(r"\bResNet"), "resnet": re.compile(r"\bSLL\b|Araujo")}
_LOCAL = re.compile(r"\bnote §|\bthe note\b|note's|\(note\b|\.txt\b")


@pytest.mark.parametrize("entry", EXPERIMENTS, ids=[e.name for e in EXPERIMENTS])
def test_provenance_notes_are_the_figures_own(entry) -> None:  # type: ignore[no-untyped-def]
    """Each assumed choice's note describes that parameter as this figure sets it: a value it
    quotes for the parameter ("lr 0.01") is the parameter's value, a note under one model's
    parameters names no other model's source, and no note points at a file the reader lacks."""
    cfg = compose(entry.name, ["profile=paper"])
    recipe = load_recipe(cfg.figure.recipe)
    params = build_params(recipe.params_type, effective_params(cfg), "params")
    for key, note in assumptions_of(params).items():
        value, why = note["value"], str(note["why"])
        name = key.rsplit(".", 1)[-1]
        quoted = re.search(rf"\b{re.escape(name)}\s*[=:]?\s*{_NUMBER}", why, re.IGNORECASE)
        if quoted and isinstance(value, (int, float)) and not isinstance(value, bool):
            assert float(quoted.group(1)) == pytest.approx(value), f"{key} = {value}: {why!r}"
        for family, foreign in _FAMILIES.items():
            if family in key.split("."):
                assert not foreign.search(why), f"{key}: {why!r} names another model's source"
        assert not _LOCAL.search(why), f"{key}: {why!r} points at a local note"


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
    # the declared schema: columns, types, no NaN where none is allowed, ranges, values
    schema = load_schema(entry.paper, entry.figure)
    assert schema is not None
    problems = check_table(run.table, schema)
    assert not problems, f"{entry.name}: " + "; ".join(problems)
    # what the rows were computed on is declared, and a stand-in says so
    labels = set(run.table["data"])
    assert UNDECLARED.label not in labels, f"{entry.name}: the recipe declares no data source"
    if entry.paper in ("ip", "pac") and "dataset" in run.table.columns:
        if set(run.table["dataset"]) & {"digits", "synthetic_images"}:
            assert all(is_stand_in_label(d) for d in labels), labels
    # the paper's claims about this figure evaluate on the tiny run (not comparable is fine)
    figures = load_results(tmp_path / "results", tmp_path / "plots")
    mine = [c for c in CLAIMS if (c.paper, c.figure) == (entry.paper, entry.figure)]
    card = build_claim_card(mine, figures)
    assert len(card) == len(mine)
    assert set(card["verdict"]) <= {"reproduced", "contradicted", "not comparable"}
    own = pd.Series(
        [all((s.figure or c.figure) == c.figure for s in c.check.selectors()) for c in mine],
        index=card.index,
        dtype=bool,
    )
    assert not (own & card["code"].eq("not-run")).any(), card[["id", "why"]]
    # tiny data are stand-ins or analytic: nothing on a stand-in is ever counted
    stand_in = card["data"].map(lambda d: "stand-in for" in str(d))
    assert card.loc[stand_in, "verdict"].eq("not comparable").all()
