"""The rehearsal's cap, its predictions and its rows, on tiny stand-ins."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest

from privrepro.figures.api import UnitContext
from privrepro.loops import PLAIN, Loops
from privrepro.rehearsal.cap import RehearsalCap
from privrepro.rehearsal.loop_record import LoopRecord
from privrepro.rehearsal.measure import rehearse_figure
from privrepro.rehearsal.rehearse import main, rehearse_all
from privrepro.rehearsal.settings import RehearsalSettings, plan_rehearsal
from privrepro.rehearsal.standins import write_standin
from privrepro.rehearsal.summary import COLUMNS
from privrepro.report.document import Heading, Image, Table
from privrepro.report.rehearsal_section import rehearsal_section
from privrepro.runner.preflight import peak_device_memory


def _ctx(tmp_path: Path, loops: Loops = PLAIN) -> UnitContext:
    return UnitContext(0, "u", "paper", "cpu", tmp_path, tmp_path, loops=loops)


def test_the_cap_runs_the_first_items_of_every_loop_and_counts_the_rest(tmp_path: Path) -> None:
    cap = RehearsalCap(items=2, per_desc={"epochs": 1})
    ctx = _ctx(tmp_path, cap)  # the rehearsal passes the cap as the unit's loops
    seen = []
    with cap.active(count_operations=False):
        for e in ctx.loops(range(5), "epochs"):
            seen += [(e, s) for s in ctx.loops(iter(range(100)), "steps", 100)]
    assert seen == [(0, 0), (0, 1)]
    epochs, steps = cap.records
    assert (epochs.done, epochs.total, epochs.skipped, epochs.depth) == (1, 5, 4, 0)
    assert (steps.done, steps.total, steps.skipped, steps.depth) == (2, 100, 98, 1)
    assert cap.capped
    # a context with the default loops runs every item
    assert len(list(_ctx(tmp_path).loops(range(100), "steps"))) == 100


def test_nested_prediction_replaces_capped_inner_time_by_its_prediction() -> None:
    """Closed form: an outer loop of 10 items, each 1 s of its own plus an inner loop of 50
    items of 0.1 s (capped at 2): full time 10 × (1 + 50 × 0.1) = 60 s."""
    inner = LoopRecord("steps", 1, 50, done=2, measured_s=0.2)
    outer = LoopRecord("epochs", 0, 10, done=1, measured_s=1.2)
    outer.inner_measured_s, outer.inner_predicted_s = inner.measured_s, inner.predicted_s
    assert inner.predicted_s == pytest.approx(5.0)
    assert outer.predicted_s == pytest.approx(60.0)
    cap = RehearsalCap(records=[outer, inner])
    # 3 s of loading before the loop, counted once
    assert cap.predict(unit_wall_s=4.2) == pytest.approx(63.0)


def test_measured_rates_predict_a_sleeping_loop(tmp_path: Path) -> None:
    """A loop of 40 items of ≥ 20 ms, capped at 2: predicted ≥ 40 × 20 ms (sleep's guarantee,
    on the wall clock: the clock the rehearsal reads on a GPU)."""
    cap = RehearsalCap(items=2, clock=time.perf_counter)
    with cap.active(count_operations=False):
        for _ in cap(range(40), "steps"):
            time.sleep(0.02)
    assert cap.records[0].predicted_s >= 40 * 0.02
    assert cap.records[0].skipped == 38


@pytest.fixture
def tiny_root(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    write_standin("adult", root)
    return root


def test_rows_for_figures_and_a_figure_that_does_not_fit(tmp_path: Path, tiny_root: Path) -> None:
    """pb Fig. 1 runs capped and is measured; pac Ex. 4's estimated memory exceeds a 1 MiB host
    and is reported as not fitting, with the estimate, before any compute."""
    settings = RehearsalSettings(tiny_root, tmp_path / "scratch", items=1, host_bytes=2**20)
    table = rehearse_all(["pb/fig1", "pac/ex4"], settings, in_process=True, echo=False)
    assert list(table.columns) == COLUMNS
    rows = table.set_index("experiment")
    assert rows.loc["pac/ex4", "status"] == "does not fit (host, estimated)"
    assert rows.loc["pac/ex4", "estimated_host_bytes"] > 2**20
    assert pd.isna(rows.loc["pac/ex4", "units_run"])
    # measured, then found not to fit the 1 MiB host: a row, not a crash
    fig1 = rows.loc["pb/fig1"]
    assert fig1["status"] == "does not fit (measured)", fig1["note"]
    assert fig1["peak_host_bytes"] > 2**20
    assert fig1["predicted_s"] > 0
    assert fig1["units_run"] == 1
    assert fig1["data"] == "rehearsal stand-in (no data file read)"
    assert pd.isna(fig1["estimated_device_bytes"])  # pb's recipe estimates no device memory
    # nothing reached the real store or tables: only the scratch folder was written
    assert not (tmp_path / "results").exists()


def test_a_row_carries_the_plan_steps_device_memory_estimate(
    tmp_path: Path, tiny_root: Path
) -> None:
    """cl Fig. 4 PEFT's row carries its largest unit's device memory as the plan step estimates
    it from shapes (the estimate the runner's preflight refuses a unit with), before any compute:
    here the stand-ins it reads are missing and the unit fails. It holds at least ViT-B/16's
    86 M backbone parameters in bf16, the paper profile's precision. (Rehearsed, not priced: a
    priced row carries it too, ``test_film_rows``.)"""
    settings = RehearsalSettings(tiny_root, tmp_path / "scratch", items=1, price_film=False)
    row = rehearse_figure("cl/fig4_peft", settings)
    plan, _ = plan_rehearsal("cl/fig4_peft", settings)
    peak = peak_device_memory(plan.recipe, plan.units)
    assert peak is not None
    assert row["estimated_device_bytes"] == peak[1].bytes
    assert row["estimated_device_bytes"] > 86e6 * 2


def test_the_command_writes_the_csv_and_the_plot(tmp_path: Path, tiny_root: Path) -> None:
    results, plots = tmp_path / "results", tmp_path / "plots"
    args = ["--root", str(tiny_root), "--scratch", str(tmp_path / "s"), "--target", "pb-1"]
    assert main([*args, "--results", str(results), "--plots", str(plots), "--items", "1"]) == 0
    table = pd.read_csv(results / "rehearsal.csv")
    assert table["experiment"].tolist() == ["pb/fig1"]
    assert table["status"].tolist() == ["ok"]
    assert (plots / "rehearsal.png").is_file()
    # the report's section shows the row and the plot
    blocks = rehearsal_section(results, plots)
    assert isinstance(blocks[0], Heading) and "Cost of the paper profile" in blocks[0].text
    table_block = next(b for b in blocks if isinstance(b, Table))
    assert [r[0] for r in table_block.rows] == ["pb/fig1"]
    assert any(isinstance(b, Image) for b in blocks)
    assert rehearsal_section(tmp_path / "none", plots) == []
    # rehearsing another figure keeps the first one's row
    assert (
        main([*args[:4], "--target", "cl-2", "--results", str(results), "--plots", str(plots)]) == 0
    )
    assert sorted(pd.read_csv(results / "rehearsal.csv")["experiment"]) == ["cl/fig2", "pb/fig1"]


def test_a_root_without_the_marker_is_refused(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    assert main(["--root", str(tmp_path / "real")]) == 2


def test_a_loop_left_in_the_middle_of_an_item_predicts_a_lower_bound(tmp_path: Path) -> None:
    """An error (or the rehearsal's timeout) inside the first item: that item counts as one, so
    the prediction is at least total × the time spent in it (on the wall clock, which sleeping
    advances)."""
    cap = RehearsalCap(items=2, clock=time.perf_counter)
    with pytest.raises(RuntimeError), cap.active(count_operations=False):
        for _ in cap(range(10), "trainings"):
            time.sleep(0.01)
            raise RuntimeError("stopped")
    rec = cap.records[0]
    assert rec.interrupted and rec.done == 0
    assert rec.predicted_s >= 10 * 0.01


def test_cache_building_loops_are_told_apart() -> None:
    """Feature extraction and pixel caches are built once for every unit and figure: the cap
    reports their predicted time apart, so the figure counts it once, not once per unit."""
    from privrepro.rehearsal.loop_record import is_cache_loop

    feats = LoopRecord("features", 0, 100, done=2, measured_s=2.0)
    pixels = LoopRecord("vit-cifar100-train pixels", 0, 10, done=1, measured_s=0.5)
    steps = LoopRecord("dp-sgd steps", 0, 50, done=2, measured_s=0.2)
    cap = RehearsalCap(records=[feats, pixels, steps])
    assert [is_cache_loop(r.desc) for r in cap.records] == [True, True, False]
    assert cap.cached_s() == pytest.approx(100 * 1.0 + 10 * 0.5)
    assert cap.predict(unit_wall_s=2.7) == pytest.approx(100 + 5 + 5)
