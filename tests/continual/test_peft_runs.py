"""A PEFT run end to end: per-task PRV guarantees within target, parallel composition, the
tuning study resumed (not rerun) by a second unit of the same repeat."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from privrepro.figures.api import UnitContext
from privrepro.figures.cl.common_peft import (
    FeatureParams,
    FilmParams,
    TrainParams,
    TuneParams,
    run_peft,
)


def _ctx(tmp: Path, uid: str) -> UnitContext:
    return UnitContext(
        seed=0,
        unit_id=uid,
        profile="tiny",
        device="cpu",
        data_dir=tmp,
        cache_dir=tmp / "_cache",
        show_progress=False,
    )


@pytest.mark.slow
def test_run_records_prv_within_target_and_reuses_study(tmp_path: Path):
    fp = FeatureParams(synthetic_dim=16, max_train_per_class=3, max_test_per_class=2)
    trp = TrainParams(epochs=4.0)
    tp = TuneParams(sampler="random", n_trials=1, n_startup_trials=1)
    unit = {"benchmark": "5-datasets", "method": "peft_head", "epsilon": 1.0, "repeat": 0}
    rows, _ = run_peft(unit, fp, FilmParams(), trp, tp, _ctx(tmp_path, "a"))
    priv = rows[rows["row"] == "privacy"]
    assert len(priv) == 5  # one DP-SGD run per task
    assert (priv["dp_epsilon_spent"] <= 1.0).all()  # opacus PRV upper bound within the target
    assert (priv["dp_epsilon_spent"] >= 0.98).all()  # calibrated, not over-noised (tol 0.01)
    # dp_accounting's PLD ε of the same mechanism, written beside it: within the target too,
    # and within PRV's eps_error + PLD's discretisation of the PRV number
    assert (priv["dp_epsilon_pld"] <= 1.0).all()
    assert ((priv["dp_epsilon_pld"] - priv["dp_epsilon_spent"]).abs() < 0.05).all()
    assert set(priv["dp_composition"]) == {"parallel"}
    assert priv["dp_sample_rate"].nunique() == 1  # transfer keeps q: one σ for every task
    tune = rows[rows["row"] == "tuning"].iloc[0]
    assert tune["n_complete"] == 1
    studies = list((tmp_path / "_studies").glob("*.log"))
    assert len(studies) == 1
    # Non-CL of the same repeat and ε reuses the study (no new trial is appended)
    unit2 = {**unit, "method": "noncl_head"}
    rows2, _ = run_peft(unit2, fp, FilmParams(), trp, tp, _ctx(tmp_path, "b"))
    from privrepro.training.tuning import open_study

    study = open_study(studies[0].stem, studies[0], sampler="random")
    assert len(study.trials) == 1
    p2 = rows2[rows2["row"] == "privacy"]
    assert list(p2["dp_composition"]) == ["single"] and float(p2["dp_epsilon_spent"].iloc[0]) <= 1.0
    aa = rows[(rows["row"] == "metric") & (rows["metric"] == "AA")]
    assert np.all((aa["value"] >= 0) & (aa["value"] <= 1))
