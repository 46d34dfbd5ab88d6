"""A PEFT Ensemble's members are trained once per member key and shared
(``privrepro.continual.peft.shared_members``): rules and figures that ask for the same members
get them from the cache, bit for bit what training them again gives; what they are trained
from (label space, ε, data) changes the key; an ensemble stopped early keeps nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from privrepro.continual import (
    FeatureSettings,
    PeftRun,
    TrainSettings,
    TuningSettings,
    Workspace,
    run_peft,
)
from privrepro.continual.peft import members as members_module
from privrepro.continual.peft.shared_members import member_folder, shared_members

FEATURES = FeatureSettings(max_train_per_class=6, max_test_per_class=3)
TRAIN = TrainSettings(epochs=2.0, accountant="rdp")
FIXED = TuningSettings(enabled=False, batch_size=8.0, lr=0.01)


@pytest.fixture(autouse=True)
def _one_thread() -> object:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


class _Count:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        original = members_module.train_member

        def counted(*args: object, **kwargs: object) -> object:
            self.calls += 1
            return original(*args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(members_module, "train_member", counted)


def _run(tmp: Path, kind: str = "head", **run: object) -> pd.DataFrame:
    ws = Workspace(cache_dir=tmp / "_cache")
    spec = {"epsilon": 1.0, "nb_tasks": 3, **run}
    out = run_peft(
        PeftRun("cifar100", f"peft_{kind}", **spec),
        FEATURES,
        train=TRAIN,
        tuning=FIXED,
        workspace=ws,
    )  # type: ignore[arg-type]
    return out.rows


def _argmax(rows: pd.DataFrame) -> pd.DataFrame:
    keep = rows[(rows["rule"] == "argmax") | (rows["row"] == "privacy")]
    return keep.drop(columns=["rule"]).reset_index(drop=True)


@pytest.mark.parametrize("kind", ["head", "film"])
def test_members_are_trained_once_and_read_back_identical(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = _Count(monkeypatch)
    first = _run(tmp_path / "a", kind)
    assert count.calls == 3  # one member per task
    rules = _run(tmp_path / "a", kind, rules=("argmax", "median", "entropy"))
    assert count.calls == 3  # Fig. A1's rules: the same members, none trained again
    assert set(rules["rule"].dropna()) == {"argmax", "median", "entropy"}
    pd.testing.assert_frame_equal(_argmax(rules), _argmax(first))
    fresh = _run(tmp_path / "b", kind)  # another cache: trained again from the key's stream
    assert count.calls == 6
    pd.testing.assert_frame_equal(fresh, first)


def test_what_the_members_are_trained_from_changes_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = _Count(monkeypatch)
    _run(tmp_path)
    _run(tmp_path, epsilon=8.0)
    _run(tmp_path, label_policy="prior")  # the heads' label spaces differ
    _run(tmp_path, repeat=1)  # another class order
    assert count.calls == 12
    assert len(list((tmp_path / "_cache" / "cl" / "members").iterdir())) == 4


def test_an_ensemble_stopped_early_keeps_nothing(tmp_path: Path) -> None:
    from privrepro.continual.peft.members import Member, new_head

    def train() -> object:
        for t in range(3):
            yield Member("head", np.arange(2), new_head(4, 2), None, 1 + t)

    it = shared_members("k0", tmp_path, train, nb_tasks=3, backbone=None, dim=4, device="cpu")
    next(it)
    it.close()  # a rehearsal's cap, or a killed run
    assert not member_folder(tmp_path, "k0").exists()
    assert not list((tmp_path / "cl" / "members").iterdir())  # no build folder left
    got = [
        m.n_train
        for m in shared_members(
            "k0", tmp_path, train, nb_tasks=3, backbone=None, dim=4, device="cpu"
        )
    ]  # type: ignore[arg-type]
    assert got == [1, 2, 3] and member_folder(tmp_path, "k0").is_dir()
    again = list(
        shared_members(
            "k0", tmp_path, lambda: iter(()), nb_tasks=3, backbone=None, dim=4, device="cpu"
        )
    )
    assert [m.n_train for m in again] == [1, 2, 3]  # read back, nothing trained
