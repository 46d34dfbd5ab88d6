"""Figures run through the runner on stand-in files, and their unit logs say so."""

from __future__ import annotations

from pathlib import Path

import pytest

from privrepro.rehearsal.standins import write_standin
from privrepro.runner.run import run_experiment


def _logs(tmp_path: Path, paper: str, figure: str) -> str:
    return "\n".join(
        p.read_text() for p in (tmp_path / "experiments" / paper / figure).glob("*/log.txt")
    )


def test_pb_fig7_on_the_adult_stand_in(store_overrides: list[str], tmp_path: Path) -> None:
    """pb Fig. 7 with ``data=uci`` reads the full-size Adult stand-in (45,222 complete rows)."""
    write_standin("adult", tmp_path / "data")
    run = run_experiment("pb/fig7", ["profile=tiny", "params.data=uci", *store_overrides])
    assert len(run.table) > 0
    assert "adult: rehearsal stand-in mode" in _logs(tmp_path, "pb", "fig7")
    # the table's data column says the same as the loader (one labelling: data.provenance)
    assert set(run.table["data"]) == {"rehearsal stand-in (stand-in for UCI Adult)"}


@pytest.mark.slow
def test_cl_paper_profile_on_stand_in_images_and_weights(
    store_overrides: list[str], tmp_path: Path
) -> None:
    """cl Fig. 5 (cosine) under the paper profile, one ε and one repeat on Split-CIFAR-100: the
    stand-in CIFAR-100 (300 images) through a stand-in timm checkpoint (a ViT-Ti/16 written as
    its hub repository holds it, in the ViT-B/16's place) into cached features and the table."""
    from privrepro.rehearsal.standins.checkpoints import timm_checkpoint
    from privrepro.rehearsal.standins.marker import MarkedFolder

    root = tmp_path / "data"
    write_standin("cifar100", root, {"train": 200, "test": 100})
    out = MarkedFolder(root, "weights/timm/vit_tiny_patch16_224", "vit-tiny", "ViT-Ti/16")
    out.finish(timm_checkpoint(out, "vit_tiny_patch16_224", seed=0))
    run = run_experiment(
        "cl/fig5_cosine",
        [
            "profile=paper",
            "params.datasets=[cifar100]",
            "params.epsilons=[8.0]",
            "params.repeats=1",
            "params.non_dp=false",
            "++params.features.backbone=vit_tiny_patch16_224",
            f"++params.features.weights={out.path / 'model.safetensors'}",
            *store_overrides,
        ],
    )
    assert run.table["task"].nunique() == 10  # Split-CIFAR-100: 10 tasks of 10 classes
    logs = _logs(tmp_path, "cl", "fig5_cosine")
    assert "cifar100: rehearsal stand-in mode" in logs
    assert "is a rehearsal stand-in (random weights, not pretrained)" in logs
    assert set(run.table["data"]) == {"rehearsal stand-in (stand-in for Split-CIFAR-100)"}
