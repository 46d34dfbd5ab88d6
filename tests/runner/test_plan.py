"""The plan step (``privrepro.runner.plan``): one function from a composed config to checked,
runnable units, used by a run and by the rehearsal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privrepro.config.validation import ConfigError
from privrepro.figures.pb.fig2 import PrivacyVsRegionSize
from privrepro.runner.plan import configured_recipe, plan_experiment
from privrepro.runner.run import run_experiment


def _paths(tmp: Path) -> list[str]:
    return [
        f"paths.experiments_dir={tmp / 'exp'}",
        f"paths.results_dir={tmp / 'res'}",
        f"paths.plots_dir={tmp / 'plots'}",
        "plot=false",
    ]


def test_the_plan_holds_the_units_a_run_stores(tmp_path: Path) -> None:
    """The plan's unit ids are the folders the run writes: the store is keyed by the plan."""
    overrides = ["profile=tiny", *_paths(tmp_path)]
    plan = plan_experiment("pb/fig2", overrides)
    assert isinstance(plan.recipe, PrivacyVsRegionSize)
    assert (plan.paper, plan.figure, plan.profile, plan.seed) == ("pb", "fig2", "tiny", 0)
    assert plan.recipe_id == (
        "privrepro.figures.pb.fig2:PrivacyVsRegionSize",
        PrivacyVsRegionSize.version,
    )
    assert len(plan.units) == len(plan.unit_ids) == len(plan.sources) >= 2
    run_experiment("pb/fig2", overrides)
    stored = {p.name for p in (tmp_path / "exp" / "pb" / "fig2").iterdir() if p.is_dir()}
    assert set(plan.unit_ids) <= stored
    config = json.loads(
        (tmp_path / "exp" / "pb" / "fig2" / plan.unit_ids[0] / "config.json").read_text()
    )
    assert config == plan.identities[0]


def test_the_preflight_is_the_machine_check_that_can_be_left_out(tmp_path: Path) -> None:
    """An output folder under a file is refused by the checked plan, in one line naming the
    key; the unchecked plan (the rehearsal's, which checks the target machine) is made."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    overrides = ["profile=tiny", f"paths.results_dir={blocker / 'res'}"]
    with pytest.raises(ConfigError, match="paths.results_dir"):
        plan_experiment("pb/fig2", overrides)
    plan = plan_experiment("pb/fig2", overrides, check=False)
    assert plan.units and plan.device == "cpu"  # the profile's device, not resolved


def test_bad_parameters_stop_every_plan(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="params.tol"):
        plan_experiment("pb/fig2", ["profile=tiny", "params.tol=-1.0"], check=False)


def test_the_configured_recipe_is_the_one_the_experiment_names() -> None:
    assert isinstance(configured_recipe("pb/fig2"), PrivacyVsRegionSize)


def test_cl_fig3_x1000_dummy_labels_fit_80gb_with_the_own_clipper_only(tmp_path: Path) -> None:
    """cl Fig. 3 on the paper profile (×1000 dummy labels: 200,000 labels on ImageNet-R) on an
    80 GB device, planned from the configuration alone (no data, no GPU): it fits with the
    project's clipper; with opacus' per-sample gradients at chunk 256 (B × L × 769 float32
    values, 157.5 GB, and the head weight's once more while opacus copies them) it is refused in one line naming the setting, the memory and what fits."""
    from privrepro.runner.preflight import check_device_memory, error_line, peak_device_memory

    base = ["profile=paper", f"paths.data_dir={tmp_path / 'no-data'}"]
    plan = plan_experiment("cl/fig3_peft", base, check=False)
    assert {u["config"] for u in plan.units} >= {"x1000"}
    i, est = peak_device_memory(plan.recipe, plan.units)  # type: ignore[misc]
    assert plan.units[i]["config"] == "x1000" and plan.units[i]["benchmark"] == "imagenet-r"
    assert "200,000 labels" in est.detail
    check_device_memory(plan.recipe, plan.units, "cuda", 80 * 10**9)  # fits: no error
    slow = plan_experiment("cl/fig3_peft", [*base, "params.film.engine=opacus"], check=False)
    assert slow.params.film.physical_batch == 256
    with pytest.raises(ConfigError) as err:
        check_device_memory(slow.recipe, slow.units, "cuda", 80 * 10**9)
    line = error_line(err.value)
    assert line is not None and "\n" not in line
    assert line.startswith("configuration error: params.film.engine = 'opacus': unit ")
    # 256 × 4 B × (200,000 × 769 + 38,400): every grad_sample; + 256 × 4 B × 200,000 × 768: the
    # head weight's copied once more (opacus 1.5 create_or_accumulate_grad_sample)
    assert "per-sample gradients 293.2 GiB" in line
    assert "would fit with params.film.engine=privrepro" in line
    assert "of 74.5 GiB" in line  # 80 GB


def test_the_cl_paper_profile_trains_in_bf16_and_fp32_is_one_override_away(tmp_path: Path) -> None:
    """conf/params/cl/peft_common/paper.yaml: bf16 autocast for DP-SGD's forward and backward;
    ``params.train.precision=fp32`` gives float32 back, and the device estimate follows (the
    16-bit activations are twice as large in float32)."""
    from privrepro.runner.preflight import peak_device_memory

    base = ["profile=paper", f"paths.data_dir={tmp_path / 'no-data'}", "params.configs=[const]"]
    bf16 = plan_experiment("cl/fig3_peft", base, check=False)
    fp32 = plan_experiment("cl/fig3_peft", [*base, "params.train.precision=fp32"], check=False)
    assert bf16.params.train.precision == "bf16" and fp32.params.train.precision == "fp32"
    assert {u["train"]["precision"] for u in bf16.units} == {"bf16"}
    assert "precision" not in fp32.units[0]["train"]  # fp32 units keep their stored hashes
    peaks = [peak_device_memory(p.recipe, p.units) for p in (bf16, fp32)]
    assert peaks[0] is not None and peaks[1] is not None
    assert peaks[0][1].bytes < peaks[1][1].bytes
    smoke = plan_experiment("cl/fig3_peft", ["profile=smoke"], check=False)
    assert smoke.params.train.precision == "fp32"  # the other profiles are unchanged
