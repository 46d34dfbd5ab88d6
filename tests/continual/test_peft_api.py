"""PEFT runs from plain Python: the run and its settings are checked before any compute, and
Table A7's evaluation of every task order reproduces the run's own rows for the order it ran."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from privrepro.config import ConfigError
from privrepro.continual import (
    FeatureSettings,
    PeftRun,
    TrainSettings,
    TuningSettings,
    Workspace,
    ensemble_all_orders,
    run_peft,
)
from privrepro.continual.peft import check_settings, study_name


def test_run_from_a_unit_dict() -> None:
    unit = {"benchmark": "5-datasets", "method": "naive_head", "epsilon": None, "repeat": 2}
    run = PeftRun.from_unit({**unit, "order": [4, 3, 2, 1, 0], "max_orders": 6, "features": {}})
    assert run.order == (4, 3, 2, 1, 0) and run.family == "naive" and run.kind == "head"
    assert (
        study_name(run, 0, "smoke") == "cl-5-datasets-head-split-prior_const-x1-non-DP-r2-s0-smoke"
    )
    assert study_name(replace(run, epsilon=1.0), 7) == (
        "cl-5-datasets-head-split-prior_const-x1-eps1-r2-s7"
    )


@pytest.mark.parametrize(
    ("run", "groups", "key"),
    [
        (PeftRun("cifar100", "peft_lora", 1.0), {}, "run.method"),
        (PeftRun("cifar100", "peft_head", -1.0), {}, "run.epsilon"),
        (PeftRun("5-datasets", "naive_head", 1.0, order=(0, 0, 1, 2, 3)), {}, "run.order"),
        (PeftRun("cifar100", "peft_head", 1.0, rules=("mean",)), {}, "run.rules[0]"),
        (
            PeftRun("cifar100", "peft_head", 1.0),
            {"tuning": TuningSettings(lr_low=0.1, lr_high=0.01)},
            "tuning.lr_low",
        ),
        (
            PeftRun("cifar100", "peft_head", 1.0),
            {"features": FeatureSettings(source="imagenet")},
            "features.source",
        ),
        (PeftRun("cifar100", "peft_head", 1.0), {"train": TrainSettings(delta=1.0)}, "train.delta"),
    ],
)
def test_bad_parameters_name_their_key(run: PeftRun, groups: dict, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        check_settings(run, **groups)
    assert err.value.key == key


def test_run_peft_refuses_before_any_compute(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "data", tmp_path / "cache")
    with pytest.raises(ConfigError, match=r"run\.method = 'peft_lora'"):
        run_peft(PeftRun("cifar100", "peft_lora", 1.0), workspace=ws)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_all_orders_reproduce_the_run_for_its_own_order(tmp_path: Path) -> None:
    """The members do not depend on the order: evaluated in the order they were trained
    (0-1-2-3-4), the saved logits give the run's own AA_t and AF_t exactly."""
    out = run_peft(
        PeftRun("5-datasets", "peft_head", 1.0, save_logits=True),
        FeatureSettings(synthetic_dim=16, max_train_per_class=4, max_test_per_class=3),
        train=TrainSettings(epochs=1.0, accountant="rdp"),
        tuning=TuningSettings(enabled=False, batch_size=8.0, lr=0.01),
        workspace=Workspace(cache_dir=tmp_path),
    )
    orders = ensemble_all_orders(out.rows, out.logits, max_orders=3)
    assert sorted(set(orders["order"])) == ["0-1-2-3-4", "0-1-2-4-3", "0-1-3-2-4"]
    own = orders[orders["order"] == "0-1-2-3-4"].set_index(["metric", "t"])["value"]
    ran = out.rows[out.rows["row"] == "metric"].set_index(["metric", "t"])["value"]
    assert len(own) == len(ran) == 10
    assert own.sort_index().equals(ran.sort_index())
