"""The rehearsal's predictions: probed items scaled to full size, loops capped without a bar,
the GPU prediction from operation counts, cached trainings counted once, and a capped figure
that ends with a table of its schema."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from privrepro.dp.pld import compose_every_t
from privrepro.loops import PLAIN
from privrepro.rehearsal.cap import RehearsalCap
from privrepro.rehearsal.device_model import H100, DeviceModel, OperationCount
from privrepro.rehearsal.figure_cost import UnitCost, figure_total, units_to_run
from privrepro.rehearsal.loop_record import LoopRecord
from privrepro.rehearsal.rehearse import rehearse_all
from privrepro.rehearsal.settings import RehearsalSettings
from privrepro.rehearsal.standins import write_standin
from privrepro.rehearsal.summary import FILM_TUNING, gpu_totals, mark_shared_caches
from privrepro.training.classifier import predict_logits


def test_plain_loops_change_nothing() -> None:
    """Under plain loops (the default) every batch runs whole: the logits of 20 rows in batches of 8 are the
    model's on all 20 rows. Compared with a tolerance, not bitwise: the BLAS may round a
    product of 8 rows differently from one of 20 (seen on some CPUs). 1e-6 is float32's
    rounding of a 3-term dot product many times over; a placeholder row (zeros) or a skipped
    batch would differ by the logits' size, O(1)."""
    assert PLAIN.item_size(64) == 64 and not PLAIN.truncates
    items = range(5)
    assert PLAIN(items, "steps") is items
    rows = torch.ones(2, 3)
    assert PLAIN.full_rows(rows, 5) is rows and PLAIN.full_list([1], 3) == [1]
    model = nn.Linear(3, 2)
    x = torch.randn(20, 3)
    with torch.no_grad():
        out = predict_logits(model, x, batch_size=8)
        torch.testing.assert_close(out, model(x), rtol=1e-6, atol=1e-6)


def test_a_probed_batch_runs_a_few_rows_and_the_rest_are_placeholders() -> None:
    """``predict_logits`` of 20 rows in batches of 8 under a cap of 2 items probing 3 samples (a
    probed loop runs a third item: the first is the warm-up): batch 1 runs 3 rows, batch 2 runs
    12 → 8 (its size), batch 3 runs 3 of its 4; the output keeps its full shape (the rows run
    first, then zeros for the rest), so what follows runs at full size."""
    model, x = nn.Linear(3, 2), torch.randn(20, 3)
    cap = RehearsalCap(items=2, probe_samples=3)
    with cap.active(count_operations=False):
        out = predict_logits(model, x, batch_size=8, loops=cap)
    assert out.shape == (20, 2)
    with torch.no_grad():
        torch.testing.assert_close(out[:3], model(x[:3]))
        torch.testing.assert_close(out[3:11], model(x[8:16]))
        torch.testing.assert_close(out[11:14], model(x[16:19]))
    assert not out[14:].any()
    (rec,) = cap.records
    assert (rec.desc, rec.total, rec.done) == ("predict batches", 3, 3)
    assert [(p.run, p.full) for p in rec.points] == [(3, 8), (8, 8), (3, 4)]


def test_probed_items_are_fitted_to_a_fixed_plus_a_per_sample_cost() -> None:
    """Closed form: items of 50 samples probed at 2 and 8 samples, measured 0.014 s and
    0.026 s: a = 0.01 s, b = 0.002 s per sample, a full item 0.11 s; a loop of 10 items: 1.1 s.
    One size only: scaled linearly (0.014 × 50 / 2 per item)."""
    from privrepro.rehearsal.loop_record import ProbePoint

    pts = [ProbePoint(2, 50, 0.014, 0.0, 0.0, 0.0), ProbePoint(8, 50, 0.026, 0.0, 0.0, 0.0)]
    rec = LoopRecord("batches", 0, 10, done=2, measured_s=0.040, points=pts)
    assert rec.predicted_s == pytest.approx(10 * 0.11)
    one = LoopRecord("batches", 0, 10, done=1, measured_s=0.014, points=pts[:1])
    one.full_samples, one.run_samples = 50, 2
    assert one.predicted_s == pytest.approx(10 * 0.014 * 25)
    # an item left midway (the timeout) counts as one item of the time it ran, unscaled: a
    # lower bound, whatever its size would have been
    cut = LoopRecord("batches", 0, 10, done=0, measured_s=3.0, interrupted=True)
    cut.full_samples, cut.run_samples = 128, 4
    assert cut.predicted_s == pytest.approx(10 * 3.0)
    # a fit that would go negative keeps a, b ≥ 0: a decreasing time is a fixed cost
    flat = [ProbePoint(2, 50, 0.03, 0, 0, 0), ProbePoint(8, 50, 0.01, 0, 0, 0)]
    rec = LoopRecord("batches", 0, 10, done=2, measured_s=0.04, points=flat)
    assert rec.predicted_s == pytest.approx(10 * 0.02)


class _Clock:
    """A clock the test advances: the seconds each item costs, whatever else runs."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_the_first_item_is_a_warm_up_counted_once() -> None:
    """Closed form: a loop of 100 items whose first takes 22 s (warm-up: an SLL batch's first on
    an H200 GPU) and the next 0.5 s is predicted 22 + 99 × 0.5 = 71.5 s, not 100 × 11.25 s;
    its rate is the second item's. With one item run there is nothing else: 100 × 22 s.
    Probed (items of 256 samples, 0.1 s + 0.01 s per sample after the warm-up, run at 4, 16
    and 4 samples, the first 22 s): the other two fit a = 0.1, b = 0.01, a full item 2.66 s;
    the first counts once with its 252 missing samples at b: 22 + 2.52; ten items
    24.52 + 9 × 2.66 = 48.46 s."""
    clock = _Clock()
    cap = RehearsalCap(items=2, clock=clock)
    with cap.active(count_operations=False):
        for i in cap(range(100), "epochs"):
            clock.t += 22.0 if i == 0 else 0.5
    rec = cap.records[0]
    assert rec.warmed_up and rec.first is not None and rec.first.own_s == pytest.approx(22.0)
    assert rec.predicted_s == pytest.approx(22.0 + 99 * 0.5)
    assert rec.seconds_per_item == pytest.approx(0.5)
    assert rec.predicted_device_s == pytest.approx(22.0 + 99 * 0.5)  # host time, no operators
    one = RehearsalCap(items=1, clock=clock)
    with one.active(count_operations=False):
        for _ in one(range(100), "epochs"):
            clock.t += 22.0
    assert not one.records[0].warmed_up
    assert one.records[0].predicted_s == pytest.approx(100 * 22.0)
    probed = RehearsalCap(items=2, probe_samples=4, clock=clock)
    with probed.active(count_operations=False):
        for i in probed(range(10), "batches"):
            run = probed.item_size(256)
            clock.t += 22.0 if i == 0 else 0.1 + 0.01 * run
    rec = probed.records[0]
    assert [(p.run, p.full) for p in rec.points] == [(4, 256), (16, 256), (4, 256)]
    assert rec.predicted_s == pytest.approx(22.0 + 0.01 * 252 + 9 * (0.1 + 0.01 * 256))
    parts = rec.predicted_parts()
    assert sum(v[0] for v in parts.values()) == pytest.approx(rec.predicted_s)


def test_host_time_is_a_fixed_cost_per_item_unless_declared_per_sample() -> None:
    """Closed form: items of 500 samples probed at 4 and 16, each 0.10 s then 0.15 s outside
    torch operators (Python) and 1 s / 4 s of operators at the GPU's roofline. By default the
    host part is a fixed cost per item, their mean 0.125 s: the 0.05 s between the probes is not
    extrapolated to 500 samples (it would give 2.2 s). Declared per sample (image decoding), it
    is fitted: a = 0.0833 s, b = 0.004167 s per sample, 2.167 s per full item."""
    from privrepro.rehearsal.loop_record import ProbePoint

    pts = [ProbePoint(4, 500, 1.10, 1.0, 1.0, 0.0), ProbePoint(16, 500, 4.15, 4.0, 4.0, 0.0)]
    rec = LoopRecord("noise batches", 0, 20, done=2, measured_s=5.25, op_s=5.0, points=pts)
    assert rec.at_full_size("host") == pytest.approx(2 * 0.125)
    rec.host_per_sample = True
    assert rec.at_full_size("host") == pytest.approx(2 * (0.1 - 4 * 0.05 / 12 + 500 * 0.05 / 12))
    # the operators are fitted either way: a = 0, b = 0.25 s per sample → 125 s per item
    assert rec.at_full_size("device") == pytest.approx(2 * 125.0)


def test_a_live_probed_loop_records_its_points(tmp_path: Path) -> None:
    """Items of 50 samples probed on 2: the items run 2, 8 and 2 samples (a probed loop allowed
    two items runs three), and the prediction is at least the loop's total × the smaller item's
    time (a, b ≥ 0; sleeping, timed on the wall clock)."""
    cap = RehearsalCap(items=2, probe_samples=2, clock=time.perf_counter)
    with cap.active(count_operations=False):
        for _ in cap(range(10), "batches"):
            time.sleep(0.002 * cap.item_size(50))
    rec = cap.records[0]
    assert [(p.run, p.full) for p in rec.points] == [(2, 50), (8, 50), (2, 50)]
    assert rec.predicted_s >= 10 * 2 * 0.002


def test_a_loop_without_a_bar_is_capped_and_nests() -> None:
    """pac Example 4's optimiser steps (no bar) inside its chunks of trainings: both capped, the
    chunks' prediction uses the steps' predicted full time (1,500 steps, not the 2 run): the
    first chunk's once (its warm-up), the second's for the other three."""
    cap = RehearsalCap(items=2)
    seen = []
    with cap.active(count_operations=False):
        for c in cap(range(4), "chunks"):
            seen += [(c, s) for s in cap(range(1500), "pac training steps")]
    assert seen == [(0, 0), (0, 1), (1, 0), (1, 1)]
    chunks, steps = cap.records[0], cap.records[1]
    assert (chunks.depth, steps.depth, steps.total) == (0, 1, 1500)
    inner = sum(r.predicted_s for r in cap.records[1:])
    assert chunks.inner_predicted_s == pytest.approx(inner)
    first, second = (r.predicted_s for r in cap.records[1:])
    assert chunks.predicted_s >= first + 3 * second
    assert chunks.predicted_s == pytest.approx(first + 3 * second, abs=4 * chunks.own_s + 1e-9)


def _net() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)
    )


def test_operations_are_counted_with_flop_counters_formulas() -> None:
    """Forward and backward of a small CNN: the FLOPs counted equal
    ``torch.utils.flop_counter.FlopCounterMode``'s total (the same formulas); the bytes are at
    least the input's and the weights' (each read once); the roofline time is at least FLOPs at
    the H100's effective rate and at least one launch per operator."""
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    net, x = _net(), torch.randn(4, 3, 8, 8)
    reference = FlopCounterMode(display=False)
    with reference:
        net(x).sum().backward()
    rec = LoopRecord("steps", 0, 1)
    classes: dict[str, list[float]] = {}
    with OperationCount(lambda: rec, classes=classes):
        net(x).sum().backward()
    assert rec.flops == reference.get_total_flops() > 0
    assert classes["convolution"][0] + classes["matmul"][0] == rec.flops
    assert sum(v[2] for k, v in classes.items() if "@" not in k) == rec.ops
    weights = sum(p.numel() * 4 for p in net.parameters())
    assert rec.nbytes >= x.numel() * 4 + weights
    # each class at its own peak and efficiency: convolutions on TF32 tensor cores, the
    # linear layer on the FP32 cores (PyTorch's defaults)
    conv_s = classes["convolution"][0] / (H100.peak("convolution") * H100.eff("convolution"))
    mm_s = classes["matmul"][0] / (H100.flops * H100.eff("matmul"))
    assert rec.device_s >= conv_s + mm_s
    assert rec.device_s >= rec.ops * H100.launch_s
    assert rec.op_s > 0 and rec.overhead_s >= 0


def test_the_roofline_of_one_operator() -> None:
    """Closed forms: compute-bound, memory-bound, launch-bound."""
    gpu = DeviceModel("g", flops=10.0, bandwidth=4.0, efficiency=0.5, launch_s=0.1)
    assert gpu.seconds(100.0, 1.0) == pytest.approx(20.0)
    assert gpu.seconds(1.0, 100.0) == pytest.approx(50.0)
    assert gpu.seconds(0.0, 0.0) == pytest.approx(0.1)
    assert "67 TFLOP/s" in H100.describe() and "matmul 70%" in H100.describe()
    # convolutions at the TF32 peak PyTorch lets cuDNN use by default (torch's TF32 note)
    tf32 = DeviceModel("g", flops=10.0, bandwidth=4.0, efficiency=0.5, tensor_core_flops=40.0)
    assert tf32.seconds(100.0, 1.0, tensor_cores=True) == pytest.approx(5.0)
    assert tf32.seconds(100.0, 1.0) == pytest.approx(20.0)
    assert torch.backends.cudnn.allow_tf32 and not torch.backends.cuda.matmul.allow_tf32


def test_convolutions_are_counted_at_the_convolution_peak() -> None:
    """A counted conv2d (forward and backward) is timed at ``tensor_core_flops``, a matmul in
    ``fp32`` at ``flops``."""
    gpu = DeviceModel(
        "g", flops=1e9, bandwidth=1e15, efficiency=1.0, launch_s=0.0, tensor_core_flops=1e11
    )
    rec = LoopRecord("x", 0, None)
    conv = nn.Conv2d(3, 8, 3)
    x = torch.randn(2, 3, 8, 8)
    with OperationCount(lambda: rec, gpu):
        conv(x).sum().backward()
    assert rec.flops > 0 and rec.device_s == pytest.approx(rec.flops / 1e11, rel=1e-4)
    mm = LoopRecord("y", 0, None)
    with OperationCount(lambda: mm, gpu):
        torch.randn(16, 16) @ torch.randn(16, 16)
    assert mm.device_s == pytest.approx(2 * 16**3 / 1e9, rel=1e-4)


def test_the_gpu_prediction_overlaps_host_time_with_operator_time() -> None:
    """A loop of 10 items, 2 run in 1 s of its own, 0.8 s of it inside torch operators whose
    roofline is 0.01 s: on the GPU the host's 0.2 s and the device's 0.01 s overlap (an
    asynchronous stream), so an item is max(0.2, 0.01) / 2 s, the loop 10 × that; with a
    device-bound roofline (0.5 s) the device's time rules."""
    rec = LoopRecord("steps", 0, 10, done=2, measured_s=1.0, op_s=0.8, device_s=0.01)
    assert rec.predicted_s == pytest.approx(5.0)
    assert rec.predicted_device_s == pytest.approx(10 * 0.2 / 2)
    bound = LoopRecord("steps", 0, 10, done=2, measured_s=1.0, op_s=0.8, device_s=0.5)
    assert bound.predicted_device_s == pytest.approx(10 * 0.5 / 2)
    # the same two items probed at a quarter of their size (one size: scaled linearly) scale
    # the operators 4×; the host time is Python's fixed cost per item, not scaled
    from privrepro.rehearsal.loop_record import ProbePoint

    bound.points = [ProbePoint(2, 8, 0.5, 0.4, 0.25, 0.0)] * 2
    assert bound.predicted_device_s == pytest.approx(10 * max(0.2, 4 * 0.5) / 2)
    # ... unless the loop declared host work per sample (decoding): then scaled 4× as well
    rec.points = [ProbePoint(2, 8, 0.5, 0.4, 0.005, 0.0)] * 2
    rec.host_per_sample = True
    assert rec.predicted_device_s == pytest.approx(10 * max(4 * 0.2, 4 * 0.01) / 2)
    # the unit: 3 s outside loops (loading, set-up: before the device works, so added), 0.5 s
    # of it in operators with a 0.001 s roofline
    cap = RehearsalCap(records=[rec])
    cap.outside.op_s, cap.outside.device_s = 0.5, 0.001
    assert cap.predict_device(unit_wall_s=4.0) == pytest.approx(2.5 + 0.001 + 10 * 0.8 / 2)


def test_a_counted_unit_predicts_its_flops(tmp_path: Path) -> None:
    """A loop of 6 forward passes, 2 run: the unit's predicted FLOPs are 3 × those counted."""
    net, x = _net(), torch.randn(2, 3, 8, 8)
    cap = RehearsalCap(items=2)
    with cap.active(), torch.no_grad():
        for _ in cap(range(6), "batches"):
            net(x)
    assert cap.records[0].flops > 0
    assert cap.predict_flops() == pytest.approx(3 * cap.records[0].flops)


def _cost(cls: str, cached: float, rest: float, key: str | None = None) -> UnitCost:
    """A unit run: ``cached`` in its cache (``features``), ``rest`` in ``training``."""
    return UnitCost(cls, {"features": cached, "training": rest}, {"features": key})


def _cache_parts(keys: list[str]) -> list[dict[str, tuple[str, str | None]]]:
    return [{"features": ("caches", k), "training": ("training", None)} for k in keys]


def test_cached_stages_count_once_per_cached_model() -> None:
    """Units of 10 s each, 8 s of it building a cache two models share among 6 units (one unit
    run): 6 × 2 s + 2 × 8 s."""
    run = [_cost("c", 8.0, 2.0, "A")]
    body, caches = figure_total(run, ["c"] * 6, _cache_parts(["A", "A", "A", "B", "B", "B"]))
    assert body == {"training": pytest.approx(12.0)}
    assert caches == {"caches | A": 8.0, "caches | B": 8.0}
    assert sum(body.values()) + sum(caches.values()) == pytest.approx(28.0)


def test_each_cost_class_is_predicted_from_its_own_units() -> None:
    """Closed form, ip-like: 2 SLL units (class s, run one: 5 s + a 100 s base model A) and 4
    ResNet-Tune units (class t, run one: 50 s + a 20 s base model B; its second key C is not
    run and takes the cost of its class's B); a class-t unit that found B already built (0 s
    cached) does not lower B. Body: 2 × 5 + 4 × 50; caches A 100, B 20, C 20."""
    runs = [_cost("s", 100.0, 5.0, "A"), _cost("t", 20.0, 50.0, "B"), _cost("t", 0.0, 50.0, "B")]
    body, caches = figure_total(
        runs, ["s", "s", "t", "t", "t", "t"], _cache_parts(["A", "A", "B", "B", "C", "C"])
    )
    assert body == {"training": pytest.approx(2 * 5 + 4 * 50)}
    assert caches == {"caches | A": 100.0, "caches | B": 20.0, "caches | C": 20.0}


def test_a_rehearsal_runs_the_first_units_of_each_cost_class() -> None:
    assert units_to_run(["s", "s", "r", "t", "r", "t"], 1) == [0, 2, 3]
    assert units_to_run(["s", "s", "r", "t", "r", "t"], 2) == [0, 1, 2, 3, 4, 5]
    assert units_to_run([None] * 4, 1) == [0]


def test_a_cache_several_figures_share_is_counted_once_in_the_totals() -> None:
    """Two ip figures build the same SLL base model (key A: 10 CPU h, 1 H100 h); the second
    figure's row keeps its own cost and marks A as shared, so the totals count A once."""
    import json

    table = pd.DataFrame(
        {
            "experiment": ["ip/fig3", "ip/fig4", "pb/fig1"],
            "predicted_h": [12.0, 11.0, 0.1],
            "predicted_gpu_h": [1.5, 1.25, 0.1],
            "lower_bound": [False, False, False],
            "cache_keys": [
                json.dumps({"A": [36000.0, 3600.0, 5.0]}),
                json.dumps({"A": [36000.0, 3600.0, 5.0], "B": [3600.0, 360.0, 1.0]}),
                json.dumps({"pb/fig1": [0.0, 0.0, 0.0]}),
            ],
        }
    )
    marked = mark_shared_caches(table)
    assert list(marked["cache_shared_s"]) == [0.0, 36000.0, 0.0]
    totals = gpu_totals(marked)
    assert totals["rest_h"] == pytest.approx(1.5 + 0.25 + 0.1)
    assert totals["cpu_h"] == pytest.approx(12.0 + 1.0 + 0.1)


def test_ip_units_share_a_base_model_per_architecture_and_dataset() -> None:
    """ip Fig. 3's units: every mode of a group reads one cached base model; the ResNet-18 is
    shared by the ``resnet`` and ``resnet_tune`` groups."""
    from privrepro.config.validation import build_params
    from privrepro.runner.plan import compose, effective_params, load_recipe

    cfg = compose("ip/fig3", ["profile=paper"])
    recipe = load_recipe(str(cfg.figure.recipe))
    units = recipe.units(build_params(recipe.params_type, effective_params(cfg), "params"))
    keys = {recipe.shared_cache_key(u) for u in units}
    assert len(units) > len(keys)
    assert {k[:2] for k in keys} == {
        ("ip-base", "sll"),
        ("ip-base", "resnet"),
        ("ip-tune", "cifar10"),
    }
    resnet_groups = {u["group"] for u in units if recipe.shared_cache_key(u)[1] == "resnet"}
    assert resnet_groups == {"resnet"}
    assert len({recipe.shared_cache_key(u) for u in units if u["group"] == "resnet_tune"}) == 2
    assert {recipe.cost_class(u) for u in units} == {"sll", "resnet", "resnet_tune"}
    # Fig. 4 (an ε sweep) trains the same base models: equal keys across figures
    cfg4 = compose("ip/fig4", ["profile=paper"])
    recipe4 = load_recipe(str(cfg4.figure.recipe))
    units4 = recipe4.units(build_params(recipe4.params_type, effective_params(cfg4), "params"))
    assert {recipe4.shared_cache_key(u) for u in units4} == keys


def test_cl_cosine_figures_share_the_features_of_a_benchmark() -> None:
    """cl Figs. 3, 4 and 5 (cosine) read the same CIFAR-100 feature files: one key; each
    benchmark is its own cost class (ImageNet-R's JPEGs cost differently from CIFAR's arrays)."""
    from privrepro.config.validation import build_params
    from privrepro.runner.plan import compose, effective_params, load_recipe

    keys, classes = {}, {}
    for name in ("cl/fig3_cosine", "cl/fig4_cosine", "cl/fig5_cosine"):
        cfg = compose(name, ["profile=paper"])
        recipe = load_recipe(str(cfg.figure.recipe))
        units = recipe.units(build_params(recipe.params_type, effective_params(cfg), "params"))
        keys[name] = {recipe.shared_cache_key(u) for u in units}
        classes[name] = {recipe.cost_class(u) for u in units}
    assert classes["cl/fig3_cosine"] == {"cifar100", "imagenet-r"}
    assert classes["cl/fig4_cosine"] == {"cifar100"}
    (cifar,) = keys["cl/fig4_cosine"]
    assert cifar in keys["cl/fig3_cosine"] and cifar in keys["cl/fig5_cosine"]
    assert keys["cl/fig3_cosine"] == keys["cl/fig5_cosine"] and len(keys["cl/fig3_cosine"]) == 2


def test_gpu_totals_set_film_tuning_apart() -> None:
    table = pd.DataFrame(
        {
            "experiment": ["pb/fig1", "ip/fig3", FILM_TUNING[0]],
            "predicted_gpu_h": [0.5, 3.0, 40.0],
            "lower_bound": [False, True, False],
        }
    )
    assert gpu_totals(table) == {
        "total_h": 43.5,
        "rest_h": 3.5,
        "film_h": 40.0,
        "cpu_h": 0.0,
        "lower_bounds": 1.0,
    }


def test_composition_stopped_early_returns_the_t_it_reached() -> None:
    """``compose_every_t`` under loops that stop after T = 3: the rows of T = 1…3, equal to the
    full run's."""
    from privrepro.dp.pld import connect_the_dots

    pld = connect_the_dots(0.01, -50, np.linspace(1.0, 0.0, 101) ** 2)
    full = compose_every_t([pld], 10, [1e-5])
    short = compose_every_t([pld], 10, [1e-5], loops=RehearsalCap(items=2))
    assert short.shape == (3, 1)
    np.testing.assert_array_equal(short, full[:3])


def test_capped_pb_figures_end_with_tables_of_their_schema(tmp_path: Path) -> None:
    """pb Fig. 6 under the paper profile with every loop cut to one item: it used to end in
    "All arrays must be of the same length"; now its unit ends cleanly, its table conforms to
    the figure's schema (checked by the rehearsal), and its prediction is not a lower bound."""
    root = tmp_path / "data"
    write_standin("adult", root, {"train": 50, "test": 50})
    settings = RehearsalSettings(root, tmp_path / "scratch", items=1)
    rows = rehearse_all(["pb/fig5", "pb/fig6"], settings, in_process=True, echo=False)
    for _, row in rows.iterrows():  # pb Fig. 5: the unit's parameters count as the store's columns
        assert row["status"] == "ok", row["note"]
        assert not row["note"]
        assert not row["lower_bound"]
        assert row["predicted_s"] > 0 and row["predicted_gpu_s"] > 0


def _report_section(tmp_path: Path, rows: dict[str, Any]) -> list[Any]:
    """The report's rehearsal section of a ``rehearsal.csv`` holding ``rows``."""
    from privrepro.rehearsal.summary import COLUMNS
    from privrepro.report.rehearsal_section import rehearsal_section

    table = pd.DataFrame(rows).reindex(columns=COLUMNS)
    (tmp_path / "rehearsal.csv").write_text(table.to_csv(index=False))
    return list(rehearsal_section(tmp_path, tmp_path))


def test_the_report_section_states_the_h100_prediction_against_the_target(tmp_path: Path) -> None:
    """The section gives the H100 totals (FiLM tuning apart), says they are predicted from
    operation counts, and shows each row's H100 prediction and whether it is a lower bound."""
    from privrepro.report.document import Para, Table

    rows = {
        "paper": ["pb", "cl"],
        "figure": ["fig1", "fig4_peft"],
        "experiment": ["pb/fig1", "cl/fig4_peft"],
        "status": ["ok", "timeout"],
        "device": ["cpu", "cpu"],
        "predicted_h": [0.1, 900.0],
        "predicted_gpu_h": [0.05, 30.0],
        "lower_bound": [False, True],
        "gpu_model": ["H100 SXM roofline", "H100 SXM roofline"],
    }
    blocks = _report_section(tmp_path, rows)
    gpu = next(b for b in blocks if isinstance(b, Para) and "On one H100" in b.text)
    assert "0.1 h" in gpu.text and "within the 24 h target" in gpu.text
    assert "h** for the whole paper profile, within the 100 h target" in gpu.text
    assert "30.0 h" in gpu.text and "1 rows are lower bounds" in gpu.text
    assert "operation counts" in gpu.text
    tab = next(b for b in blocks if isinstance(b, Table))
    assert "H100 predicted (h)" in tab.header
    by_name = {r[0]: r for r in tab.rows}
    assert by_name["cl/fig4_peft"][tab.header.index("lower bound")] == "yes"
    assert by_name["pb/fig1"][tab.header.index("H100 predicted (h)")] == "0.05"


def test_gauss_input_evaluation_is_capped_and_probed_under_a_rehearsal() -> None:
    """``gauss_input_accuracy`` over 3 draws of 20 images in batches of 8, under a cap of 2 items
    probing 3 samples: 2 draws, each of 3 batches (3, 8 and 3 images, as ``predict_logits``); with
    no cap every draw and batch runs (each accuracy a multiple of 1/20, the same as a plain loop)."""
    from privrepro.inference.evaluate import gauss_input_accuracy

    model, x = nn.Sequential(nn.Flatten(), nn.Linear(12, 3)), torch.rand(20, 3, 2, 2)
    y = torch.randint(0, 3, (20,), generator=torch.Generator().manual_seed(0))
    sigmas = [0.0, 0.5]
    full = gauss_input_accuracy(
        model, x, y, sigmas, 3, torch.Generator().manual_seed(1), batch_size=8
    )
    assert full.shape == (2, 3) and np.allclose(full * 20, np.round(full * 20))
    with torch.no_grad():
        clean = float((model(x).argmax(1) == y).float().mean())
    assert full[0] == pytest.approx([clean] * 3)
    cap = RehearsalCap(items=2, probe_samples=3)
    with cap.active(count_operations=False):
        gauss_input_accuracy(
            model, x, y, sigmas, 3, torch.Generator().manual_seed(1), batch_size=8, loops=cap
        )
    draws, *batches = cap.records
    assert (draws.desc, draws.total, draws.done) == ("noise draws", 3, 2)
    assert [(b.desc, b.total, b.done) for b in batches] == [("noise batches", 3, 3)] * 2
    assert [(p.run, p.full) for p in batches[0].points] == [(3, 8), (8, 8), (3, 4)]


def test_a_capped_list_is_completed_with_its_last_item_only_under_a_cap() -> None:
    assert PLAIN.full_list([1, 2], 4) == [1, 2]
    cap = RehearsalCap()
    assert cap.full_list([1, 2], 4) == [1, 2, 2, 2]
    assert cap.full_list([], 3) == [] and cap.full_list([1, 2, 3], 2) == [1, 2, 3]


def test_member_logits_are_capped_to_full_shape_under_a_rehearsal() -> None:
    """A member's logits over 20 rows in batches of 8 under a cap probing 3 samples: the rows run
    match the member, the rest are zero placeholders of the full shape (the same contract as
    ``predict_logits``: 3, 8 and 3 rows run); without a cap the logits are the member's on
    every row."""
    from privrepro.continual.peft.members import Member, member_logits

    head = nn.Linear(4, 2)
    member = Member("head", np.array([0, 1]), head)
    x = torch.randn(20, 4)
    with torch.no_grad():
        torch.testing.assert_close(member_logits(member, x, batch=8), head(x))
        cap = RehearsalCap(items=2, probe_samples=3)
        with cap.active(count_operations=False):
            out = member_logits(member, x, batch=8, loops=cap)
        assert out.shape == (20, 2)
        torch.testing.assert_close(out[:3], head(x[:3]))
        torch.testing.assert_close(out[3:11], head(x[8:16]))
        torch.testing.assert_close(out[11:14], head(x[16:19]))
        assert not out[14:].any()


def test_the_report_counts_a_priced_row_neither_as_run_nor_as_not_ok(tmp_path: Path) -> None:
    """A cl PEFT row priced from its image-passes (status ``priced``, no device:
    ``rehearsal.measure._priced_film_row``) is named as priced; the device measured on is that
    of the rows that ran."""
    from privrepro.report.document import Para

    rows = {
        "paper": ["pb", "cl"],
        "figure": ["fig1", "fig4_peft"],
        "experiment": ["pb/fig1", "cl/fig4_peft"],
        "status": ["ok", "priced"],
        "device": ["cpu", None],
        "predicted_h": [0.1, float("nan")],
        "predicted_gpu_h": [0.05, 11.2],
        "lower_bound": [False, False],
        "gpu_model": ["H100 SXM roofline", "H100 SXM roofline"],
    }
    blocks = _report_section(tmp_path, rows)
    intro = next(b for b in blocks if isinstance(b, Para) and "Measured on" in b.text)
    assert "Measured on cpu." in intro.text
    assert "1 priced from their image-passes, not run; 0 not `ok`" in intro.text
