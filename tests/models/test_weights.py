"""Missing pretrained weights: one line naming them, where to put them and the key, before any
compute. The hub is made unreachable and its cache empty by patching the two probes, so the
tests say the same on a machine that has the weights cached or a network."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from privrepro.config import ConfigError
from privrepro.models import weights as w
from privrepro.models.weights import (
    MissingWeightsError,
    WeightsNeed,
    check_weights,
    hub_reachable,
    require_backbone_weights,
    weights_needed,
)

VIT = "vit_base_patch16_224.augreg_in21k"


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No weights in the Hugging Face cache, and no hub."""
    monkeypatch.setattr(w, "hub_cached_file", lambda repo: None)
    monkeypatch.setattr(w, "hub_reachable", lambda repo, timeout=5.0: False)


@dataclass
class _Features:
    source: str = "backbone"
    backbone: str = VIT
    weights: str | None = None


@dataclass
class _Model:
    checkpoints: dict = field(default_factory=dict)


@dataclass
class _Params:
    features: _Features = field(default_factory=_Features)
    sll: _Model = field(default_factory=_Model)
    blocks: list[Any] = field(default_factory=list)


def test_needs_are_read_from_the_parameters() -> None:
    p = _Params(sll=_Model({"cifar10": "a.pt", "cifar100": ""}), blocks=[_Features(weights="b")])
    assert weights_needed(p) == [
        WeightsNeed("params.features.weights", None, VIT),
        WeightsNeed("params.sll.checkpoints.cifar10", "a.pt"),
        WeightsNeed("params.blocks[0].weights", "b", VIT),
    ]
    assert weights_needed(_Params(features=_Features(source="synthetic"))) == []


def test_offline_without_weights_is_one_line_naming_file_place_and_key(
    offline: None, tmp_path: Path
) -> None:
    with pytest.raises(MissingWeightsError) as err:
        check_weights(_Params(), data_root=tmp_path)
    message = str(err.value)
    assert "\n" not in message and isinstance(err.value, ConfigError)
    assert message.startswith("params.features.weights = None: the backbone ")
    assert VIT in message and f"https://huggingface.co/timm/{VIT}" in message
    assert str(tmp_path / "weights" / "timm" / VIT / "model.safetensors") in message
    assert "set params.features.weights=<that file>" in message


def test_a_weights_file_or_the_hub_cache_satisfies_the_need(
    offline: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"")
    assert check_weights(_Params(features=_Features(weights=str(weights))))
    with pytest.raises(MissingWeightsError, match="no such file"):
        check_weights(_Params(features=_Features(weights=str(tmp_path / "nope.safetensors"))))
    monkeypatch.setattr(w, "hub_cached_file", lambda repo: weights)
    check_weights(_Params())  # cached by an earlier online run: timm reads it offline


def test_cached_features_turn_the_error_into_a_warning(
    offline: None, caplog: pytest.LogCaptureFixture
) -> None:
    check_weights(_Params(), features_cached=lambda backbone: backbone == VIT)
    assert "features already cached" in caplog.text


def test_missing_ip_checkpoint(tmp_path: Path) -> None:
    with pytest.raises(MissingWeightsError, match=r"params\.sll\.checkpoints\.cifar10 = "):
        check_weights(_Params(features=_Features(source="x"), sll=_Model({"cifar10": "x.pt"})))


def test_hub_offline_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub_reachable.cache_clear()
    try:
        assert hub_reachable("timm/any") is False
    finally:
        hub_reachable.cache_clear()


def test_create_backbone_says_it_in_one_line(
    offline: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from privrepro.continual.features import create_backbone

    with pytest.raises(MissingWeightsError, match=r"^weights = None: the backbone"):
        create_backbone(VIT)
    with pytest.raises(MissingWeightsError, match="no such file"):
        create_backbone(VIT, weights="missing.safetensors")
    monkeypatch.setattr(w, "hub_repo", lambda backbone: None)  # a model timm has no hub id for
    with pytest.raises(MissingWeightsError, match="timm knows no hub repository"):
        require_backbone_weights("my_vit", None)


def test_missing_checkpoint_stops_an_ip_run(store_overrides: list[str], tmp_path: Path) -> None:
    from privrepro.runner.run import run_experiment

    missing = tmp_path / "sll.pt"
    with pytest.raises(MissingWeightsError, match=r"params\.sll\.checkpoints\.digits"):
        run_experiment(
            "ip/fig5",
            ["profile=tiny", f"+params.sll.checkpoints.digits={missing}", *store_overrides],
        )


def _paper_needs() -> dict[str, list[WeightsNeed]]:
    from privrepro.config.validation import build_params
    from privrepro.runner.catalog import list_experiments
    from privrepro.runner.plan import compose, effective_params
    from privrepro.runner.recipe_config import load_recipe

    needs = {}
    for entry in list_experiments():
        cfg = compose(entry.name, ["profile=paper"])
        recipe = load_recipe(cfg.figure.recipe)
        params = build_params(recipe.params_type, effective_params(cfg), "params")
        needs[entry.name] = weights_needed(params)
    return needs


CL_BACKBONE_FIGURES = [
    "cl/fig3_cosine",
    "cl/fig3_peft",
    "cl/fig4_cosine",
    "cl/fig4_peft",
    "cl/fig5_cosine",
    "cl/fig5_peft",
    "cl/figA1",
    "cl/tA7_cosine",
    "cl/tA7_peft",
]


def test_paper_profile_needs_the_vit_exactly_where_it_builds_it() -> None:
    """Under the paper profile every cl figure but the analytic ones reads real images through
    the ViT-B/16 (``features.source: backbone``); no other figure needs weights (the ip paper
    profile trains its base models unless checkpoints are set)."""
    needs = _paper_needs()
    assert sorted(k for k, v in needs.items() if v) == CL_BACKBONE_FIGURES
    for name in CL_BACKBONE_FIGURES:
        assert [(n.key, n.backbone) for n in needs[name]] == [("params.features.weights", VIT)]


@pytest.mark.parametrize("experiment", CL_BACKBONE_FIGURES)
def test_every_backbone_figure_stops_before_compute(
    experiment: str, offline: None, store_overrides: list[str], tmp_path: Path
) -> None:
    from privrepro.runner.run import run_experiment

    with pytest.raises(MissingWeightsError, match=r"^params\.features\.weights = "):
        run_experiment(experiment, ["profile=paper", *store_overrides])
    assert not (tmp_path / "experiments" / experiment).exists() or not [
        p for p in (tmp_path / "experiments" / experiment).iterdir() if not p.name.startswith(".")
    ]
