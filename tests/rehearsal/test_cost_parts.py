"""The rehearsal's cost model at the paper's cost: matmuls priced at the unit's precision, a
unit's work split into parts (features, tuning, training, evaluation) that add up, parts shared
by several units and figures counted once per key, and the cl PEFT figures' cost classes and
share keys on the paper profile's grids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import torch

from privrepro.rehearsal.cap import RehearsalCap
from privrepro.rehearsal.device_model import H100, DeviceModel, OperationCount
from privrepro.rehearsal.figure_cost import UnitCost, figure_total
from privrepro.rehearsal.loop_record import PARTS, LoopRecord, loop_part
from privrepro.rehearsal.summary import gpu_totals, mark_shared_caches, part_totals

#: a roofline whose times are FLOPs over the peak alone (no bandwidth or launch floor)
GPU = DeviceModel(
    "g", flops=1e9, bandwidth=1e18, efficiency=1.0, launch_s=0.0, tensor_core_flops=1e11
)

#: FLOPs of one (m × k) @ (k × n) matmul: 2mkn (a multiply and an add per term), the formula of
#: ``torch.utils.flop_counter``
M, K, N = 8, 16, 4
MATMUL_FLOPS = 2 * M * K * N


def _matmul() -> None:
    torch.ones(M, K) @ torch.ones(K, N)


@pytest.mark.parametrize(
    ("precision", "peak"), [("fp32", GPU.flops), ("tf32", 1e11), ("bf16", 1e11)]
)
def test_matmuls_are_priced_at_the_precision_they_run_in(precision: str, peak: float) -> None:
    """A matmul counts 2mkn FLOPs whatever the precision; in ``fp32`` it takes them at the FP32
    peak, in ``tf32`` and ``bf16`` at the tensor cores' (``privrepro.training.precision``)."""
    rec = LoopRecord("x", 0, None)
    with OperationCount(lambda: rec, GPU, precision=precision):
        _matmul()
    assert rec.flops == MATMUL_FLOPS
    assert rec.device_s == pytest.approx(MATMUL_FLOPS / peak, rel=1e-6)


def test_the_h100_prices_matmuls_at_67_494_and_989_tflops_by_precision() -> None:
    """H100 SXM dense peaks (NVIDIA's H100 datasheet): FP32 67 TFLOP/s, TF32 tensor cores 494,
    BF16 989; at the matmul efficiency (70 %) a compute-bound matmul is 494/67 ≈ 7.4 times
    faster in tf32 and 989/67 ≈ 14.8 times in bf16 — bf16 at its own rate, not TF32's."""
    big = 2 * 4096**3  # a compute-bound matmul's FLOPs (4096³ multiply-adds)
    t = {p: H100.op_seconds("matmul", big, 0.0, p) for p in ("fp32", "tf32", "bf16")}
    assert t["fp32"] == pytest.approx(big / (67e12 * 0.70))
    assert t["fp32"] / t["tf32"] == pytest.approx(494 / 67)
    assert t["fp32"] / t["bf16"] == pytest.approx(989 / 67)
    assert "989 TFLOP/s" in H100.describe("bf16") and "494" in H100.describe("tf32")


def test_a_cap_prices_its_units_precision(tmp_path: Path) -> None:
    """The same loop of 1024³ matmuls (compute-bound on the H100 roofline: 2.1 GFLOP against
    12.6 MB) under an ``fp32`` and a ``tf32`` cap: equal FLOPs, device times 494/67 apart."""
    a = torch.ones(1024, 1024)
    device_s = {}
    for precision in ("fp32", "tf32"):
        cap = RehearsalCap(items=2, precision=precision)
        with cap.active():
            for _ in cap(range(4), "steps"):
                a @ a
        assert cap.predict_flops() == pytest.approx(4 * 2 * 1024**3)
        device_s[precision] = cap.records[0].device_s
    assert device_s["fp32"] / device_s["tf32"] == pytest.approx(494 / 67, rel=1e-6)


def test_loop_parts_follow_their_labels_and_their_parents() -> None:
    assert loop_part("features", 0, None) == "features"
    assert loop_part("cifar100-train pixels", 0, None) == "features"
    assert loop_part("trials", 0, None) == "tuning"
    assert loop_part("dp-sgd steps", 1, "tuning") == "tuning"
    assert loop_part("member logit batches", 1, "tuning") == "tuning"  # a trial's validation
    assert loop_part("tasks", 0, None) == "training"
    assert loop_part("dp-sgd steps", 1, "training") == "training"
    assert loop_part("member logit batches", 1, "training") == "evaluation"
    assert loop_part("member logit batches", 0, None) == "evaluation"
    assert loop_part("features", 1, "training") == "training"  # only a top-level cache is one


def test_a_units_parts_add_up_to_its_prediction(tmp_path: Path) -> None:
    """A PEFT-like unit, 2 items of each loop run: 20 trials × (10 steps + 3 validation
    batches), then 10 tasks × (10 steps + 5 test batches), one matmul per inner item. Closed
    forms in FLOPs: tuning 20 × 13 × F, training 10 × 10 × F, evaluation 10 × 5 × F; the parts
    add up to the unit's prediction."""
    cap = RehearsalCap(items=2)
    with cap.active():
        for _ in cap(range(20), "trials"):
            for _ in cap(range(10), "dp-sgd steps"):
                _matmul()
            for _ in cap(range(3), "member logit batches"):
                _matmul()
        for _ in cap(range(10), "tasks"):
            for _ in cap(range(10), "dp-sgd steps"):
                _matmul()
            for _ in cap(range(5), "member logit batches"):
                _matmul()
    parts = cap.predict_parts(unit_wall_s=sum(r.measured_s for r in cap.top_level()))
    assert set(parts) == set(PARTS)
    flops = {p: v[2] for p, v in parts.items()}
    assert flops["tuning"] == pytest.approx(20 * 13 * MATMUL_FLOPS)
    assert flops["training"] == pytest.approx(10 * 10 * MATMUL_FLOPS)
    assert flops["evaluation"] == pytest.approx(10 * 5 * MATMUL_FLOPS)
    assert flops["features"] == 0
    assert sum(flops.values()) == pytest.approx(cap.predict_flops())
    wall = 1.5 + sum(r.measured_s for r in cap.top_level())
    by_part = cap.predict_parts(wall)
    assert sum(v[0] for v in by_part.values()) == pytest.approx(cap.predict(wall))
    assert sum(v[1] for v in by_part.values()) == pytest.approx(cap.predict_device(wall))


def test_shared_parts_count_once_per_key_and_the_rest_per_unit() -> None:
    """Six units of one class, one run: 2 h of tuning (studies S1, S2: three units each), 3 h of
    training (members E1 for two units, none for the other four: their own) and 1 h of
    evaluation per unit. Closed form: tuning 2 × 2, training 1 × 3 + 4 × 3, evaluation 6 × 1."""
    run = UnitCost("c", {"tuning": 2.0, "training": 3.0, "evaluation": 1.0})
    parts = [
        {
            "tuning": ("FiLM tuning", study),
            "training": ("FiLM final training", members),
            "evaluation": ("evaluation", None),
        }
        for study, members in [
            ("S1", "E1"),
            ("S1", "E1"),
            ("S1", None),
            ("S2", None),
            ("S2", None),
            ("S2", None),
        ]
    ]
    body, shared = figure_total([run], ["c"] * 6, parts)
    assert shared == {
        "FiLM tuning | S1": 2.0,
        "FiLM tuning | S2": 2.0,
        "FiLM final training | E1": 3.0,
    }
    assert body == {"FiLM final training": 12.0, "evaluation": 6.0}


def test_part_totals_count_a_part_two_figures_share_once() -> None:
    """Fig. 3 and Fig. 5 rows both hold study S (4 H100 h) and members E (6 h); Fig. 5 adds its
    own 10 h of evaluation: the profile's parts are S once, E once, evaluation 10 + 1."""
    h = 3600.0

    def row(name: str, evaluation: float) -> dict[str, Any]:
        shared = {
            "FiLM tuning | S": [0.0, 4 * h, 0.0],
            "FiLM final training | E": [0.0, 6 * h, 0.0],
        }
        parts = {
            "features": [0.0, 0.0, 0.0],  # a part that cost nothing: not listed
            "FiLM tuning": [0.0, 4 * h, 0.0],
            "FiLM final training": [0.0, 6 * h, 0.0],
            "evaluation": [0.0, evaluation * h, 0.0],
        }
        return {
            "experiment": name,
            "predicted_gpu_h": 10.0 + evaluation,
            "predicted_h": 0.0,
            "cache_keys": json.dumps(shared),
            "parts": json.dumps(parts),
            "lower_bound": False,
        }

    table = mark_shared_caches(pd.DataFrame([row("cl/fig3_peft", 1.0), row("cl/fig5_peft", 10.0)]))
    totals = part_totals(table)
    assert totals["FiLM tuning"]["gpu_h"] == pytest.approx(4.0)
    assert totals["FiLM final training"]["gpu_h"] == pytest.approx(6.0)
    assert totals["evaluation"]["gpu_h"] == pytest.approx(11.0)
    assert gpu_totals(table)["total_h"] == pytest.approx(4 + 6 + 11)
    assert set(totals) == {"FiLM tuning", "FiLM final training", "evaluation"}


def _paper_units(name: str) -> tuple[Any, list[dict[str, Any]]]:
    from privrepro.config.validation import build_params
    from privrepro.runner.plan import compose, effective_params, load_recipe

    cfg = compose(name, ["profile=paper"])
    recipe = load_recipe(str(cfg.figure.recipe))
    return recipe, recipe.units(build_params(recipe.params_type, effective_params(cfg), "params"))


PEFT_FIGURES = ("cl/fig3_peft", "cl/fig4_peft", "cl/fig5_peft", "cl/figA1", "cl/tA7_peft")


def test_peft_cost_classes_set_film_apart_from_heads_and_benchmarks_apart() -> None:
    """cl Fig. 5 PEFT on the paper grid: per ε (3) and kind (FiLM, last layer), PEFT Ensemble
    and Naive over 5 CIFAR-100 and 3 ImageNet-R repeats (Table A6) and one Non-CL run per
    benchmark: 3 × 2 × (2 × 8 + 2) = 108 units, 54 FiLM and 54 head-only, in four cost
    classes."""
    recipe, units = _paper_units("cl/fig5_peft")
    classes = [recipe.cost_class(u) for u in units]
    assert len(units) == 108
    assert set(classes) == {
        ("film", "cifar100"),
        ("film", "imagenet-r"),
        ("head", "cifar100"),
        ("head", "imagenet-r"),
    }
    assert sum(c[0] == "film" for c in classes) == 54
    parts = recipe.cost_parts(units[classes.index(("head", "cifar100"))])
    assert {p.name for k, p in parts.items() if k != "features"} == {"heads"}


def test_the_paper_profile_tunes_37_film_studies_and_trains_162_film_ensembles() -> None:
    """Distinct FiLM share keys over the five PEFT figures, from the grids (cl paper App. E.1:
    one study per (benchmark, ε, δ, seed) on one task of the 10-task split). Studies — Fig. 3:
    2 benchmarks × 2 ε × 5 repeats = 20; Fig. 4: the split's 3 ε × 5, of which ε = 1, 8 are
    Fig. 3's: 5; Fig. 5: CIFAR-100 3 ε × 5 and ImageNet-R 3 ε × 3 (Table A6), new only
    ImageNet-R's non-DP: 3; Table A7: 3 ε × 3 = 9; Fig. A1's inside Fig. 5's: 37. Ensembles —
    Fig. 3: 2 × 2 × 5 label configurations × 5 repeats = 100; Fig. 4: 45; Fig. 5: 15 + 9 of
    which the 10 + 6 S_prior^const at ε = 1, 8 are Fig. 3's: 8; Table A7: 9; Fig. A1's are
    Fig. 5's: 162. The same numbers as ``benchmarks/count_cl_trainings.py --grid paper``. The
    ImageNet-R and CIFAR-100 FiLM runs read one pixel cache each over every figure."""
    studies: set[Any] = set()
    ensembles: set[Any] = set()
    pixels: set[Any] = set()
    for name in PEFT_FIGURES:
        recipe, units = _paper_units(name)
        for u in units:
            if recipe.cost_class(u)[0] != "film":
                continue
            parts = recipe.cost_parts(u)
            studies.add(parts["tuning"].key)
            pixels.add(parts["features"].key)
            if parts["training"].key is not None:
                ensembles.add(parts["training"].key)
    assert len(studies) == 37
    assert len(ensembles) == 162
    assert {k[1] for k in pixels} == {"cifar100", "imagenet-r", "5-datasets"} and len(pixels) == 3


def test_peft_head_units_read_the_cosine_figures_features() -> None:
    """A head-only unit's features are the cosine figures' files: one key per benchmark."""
    cosine, cunits = _paper_units("cl/fig5_cosine")
    peft, punits = _paper_units("cl/fig5_peft")
    cosine_keys = {cosine.shared_cache_key(u) for u in cunits}
    head_keys = {
        peft.cost_parts(u)["features"].key for u in punits if peft.cost_class(u)[0] == "head"
    }
    assert head_keys == cosine_keys and len(head_keys) == 2


def test_a_rehearsal_prices_the_precision_an_override_asks_for(tmp_path: Path) -> None:
    """``--override params.train.precision=tf32`` reaches every figure's plan, its units compute
    in ``tf32`` (``unit_precision``), and the settings survive the trip to a figure's process."""
    from privrepro.rehearsal.rehearse import _child_settings, settings_json
    from privrepro.rehearsal.settings import RehearsalSettings, plan_rehearsal
    from privrepro.training.precision import unit_precision

    settings = RehearsalSettings(
        tmp_path, tmp_path / "scratch", overrides=("params.train.precision=tf32",)
    )
    plan, _ = plan_rehearsal("cl/figA1", settings)
    assert {unit_precision(u) for u in plan.units} == {"tf32"}
    assert _child_settings(settings_json(settings)) == settings


def test_a_recipe_without_cost_hooks_gets_the_defaults_and_the_run_does_not_see_them() -> None:
    """The hooks are an optional protocol the rehearsal reads (``cost_model_of``), not the
    recipe contract: a recipe without them (pb Fig. 1) is priced with the defaults (one cache
    per figure, every unit alike), and one with them (cl Fig. 2) with its own; the hooks of
    ``CostModel`` are no attribute of ``Figure``, and ``unit_parts`` builds the defaults'
    ``features`` part once per figure (its key the experiment)."""
    from privrepro.figures.api import Figure
    from privrepro.figures.cl.fig4_cosine import BlurryCosine
    from privrepro.figures.cost_model import CostModel, cost_model_of
    from privrepro.figures.pb.fig1 import Illustration
    from privrepro.rehearsal.measure import unit_parts

    assert not any(hasattr(Figure, h) for h in ("shared_cache_key", "cost_parts", "cost_class"))
    plain, hooked = Illustration(), BlurryCosine()
    assert not isinstance(plain, CostModel) and isinstance(hooked, CostModel)
    assert cost_model_of(hooked) is hooked
    unit = {"dataset": "cifar100", "features": {"source": "synthetic"}}
    assert cost_model_of(plain).cost_class(unit) is None
    assert cost_model_of(hooked).cost_class(unit) == "cifar100"  # its benchmark
    parts = unit_parts(plain, unit, "pb/fig1")
    assert parts["features"] == ("caches", "pb/fig1")
    assert parts["training"] == ("training", None)
