"""pac recipes computed directly (no runner): the Example tables hold the note's check values."""

from __future__ import annotations

from pathlib import Path

import pytest

from privrepro.config.validation import ConfigError, build_params
from privrepro.figures.api import UnitContext
from privrepro.figures.pac.curves_success import SuccessCurves
from privrepro.figures.pac.ex1 import Example1
from privrepro.figures.pac.ex2 import Example2
from privrepro.figures.pac.ex3 import Example3
from privrepro.figures.pac.ex5 import Example5


def _ctx(tmp_path: Path) -> UnitContext:
    return UnitContext(
        seed=0,
        unit_id="test",
        profile="tiny",
        device="cpu",
        data_dir=tmp_path,
        cache_dir=tmp_path,
    )


def _run(recipe, params, tmp_path):  # type: ignore[no-untyped-def]
    import pandas as pd

    table = pd.concat([recipe.compute(u, _ctx(tmp_path)) for u in recipe.units(params)])
    return table, recipe.summarize(table, params)


def test_ex1_table(tmp_path: Path) -> None:
    recipe = Example1()
    table, summary = _run(recipe, build_params(recipe.params_type, {"ns": [10, 50]}), tmp_path)
    t2 = summary[summary["metric"] == "theorem2_success_bound"].set_index("n")["value"]
    # pac note T2 prints 0.14893; the bound is 0.1489228, so 1e-5 (one unit of the 5th decimal)
    assert t2[10] == pytest.approx(0.14893, abs=1e-5)  # paper prints 0.17
    assert t2[50] == pytest.approx(0.06790, abs=5e-6)  # pac note T2 (paper prints 0.06)
    paper = table[(table["bound"] == "theorem2")].set_index("n")["paper_value"]
    assert paper[10] == 0.17 and paper[50] == 0.06


def test_ex5_table(tmp_path: Path) -> None:
    recipe = Example5()
    _, summary = _run(recipe, build_params(recipe.params_type, {"points": 3}), tmp_path)
    s = summary.set_index(["metric", "v"])["value"]
    assert s[("whole_set_exact_noise_sq", 0.1)] == pytest.approx(0.045167, abs=1e-6)  # note T8
    assert s[("individual_opt_noise_sq", 0.1)] == 0.0
    assert s[("theorem3_noise_sq", 0.001)] == pytest.approx(5.0)


def test_curves_success_matches_table_t1(tmp_path: Path) -> None:
    recipe = SuccessCurves()
    _, summary = _run(recipe, build_params(recipe.params_type, {"points": 3}), tmp_path)
    s = summary.set_index(["prior", "v"])["value"]
    assert s[(0.01, 1.0)] == pytest.approx(0.3573, abs=5e-5)  # note T1


@pytest.mark.parametrize("recipe_cls", [Example2, Example3])
def test_ex2_ex3_on_digits(recipe_cls, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recipe = recipe_cls()
    params = build_params(recipe.params_type, {"dataset": "digits", "m": 300})
    table, _ = _run(recipe, params, tmp_path)
    norms = table.set_index("method")["noise_norm"]
    dp = norms.filter(like="dp_").iloc[0]
    # pac note T5: digits d = 64 → local DP 45.255, mean DP d sqrt(2/(N v)) = 2.135
    assert dp == pytest.approx(45.2548 if recipe_cls is Example2 else 2.1351, abs=1e-4)
    # Theorem 3 never exceeds the isotropic rule (Cauchy–Schwarz) and is below DP here
    assert norms["pac_theorem3_exact"] <= norms["pac_isotropic_exact"] < dp
    assert table["paper_value"].isna().all()  # the paper's numbers are for CIFAR-10 only
    assert table["pool"].str.contains("stand-in").all()
    # the runner labels the rows' data (the table's data column) from the recipe's declaration
    source = recipe.data_source({"dataset": "digits"}, tmp_path)
    assert source.is_stand_in and source.stand_in_for == "CIFAR-10"


def test_bad_params_are_refused() -> None:
    """Each refusal names the key and happens before any compute; the bounds printed are the
    bounds enforced (v > 0, c > 0, β > 0)."""
    with pytest.raises(ConfigError, match=r"params.v = -1.0: must lie in \(0, inf\)"):
        build_params(Example2.params_type, {"v": -1.0})
    with pytest.raises(ConfigError, match=r"params.v = 0.0"):
        build_params(Example2.params_type, {"v": 0.0})
    with pytest.raises(ConfigError, match="params.dataset"):
        build_params(Example2.params_type, {"dataset": "imagenet"})
    with pytest.raises(ConfigError, match="params.c"):
        build_params(Example3.params_type, {"c": 0.0})
    with pytest.raises(ConfigError, match="params.beta"):
        build_params(Example3.params_type, {"beta": -0.1})
    ok = build_params(Example2.params_type, {"v": 0.5, "dataset": "digits"})
    assert (ok.v, ok.dataset) == (0.5, "digits")
