"""A PEFT run end to end: per-task PRV guarantees within target, parallel composition, the
tuning study resumed (not rerun) by a second unit of the same repeat."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from privrepro.continual import Workspace
from privrepro.continual.peft import (
    FeatureSettings,
    PeftRun,
    TrainSettings,
    TuningSettings,
    run_peft,
)


@pytest.mark.slow
def test_run_records_prv_within_target_and_reuses_study(tmp_path: Path):
    kw = {
        "features": FeatureSettings(synthetic_dim=16, max_train_per_class=3, max_test_per_class=2),
        "train": TrainSettings(epochs=4.0),
        "tuning": TuningSettings(sampler="random", n_trials=1, n_startup_trials=1),
        "workspace": Workspace(cache_dir=tmp_path / "_cache"),
        "study_tag": "tiny",
    }
    run = PeftRun("5-datasets", "peft_head", epsilon=1.0, repeat=0)
    rows, _ = run_peft(run, **kw)
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
    rows2, _ = run_peft(replace(run, method="noncl_head"), **kw)
    from privrepro.training.optuna_studies import open_study

    study = open_study(studies[0].stem, studies[0], sampler="random")
    assert len(study.trials) == 1
    p2 = rows2[rows2["row"] == "privacy"]
    assert list(p2["dp_composition"]) == ["single"] and float(p2["dp_epsilon_spent"].iloc[0]) <= 1.0
    aa = rows[(rows["row"] == "metric") & (rows["metric"] == "AA")]
    assert np.all((aa["value"] >= 0) & (aa["value"] <= 1))
