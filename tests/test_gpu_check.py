"""``make gpu-check`` (``benchmarks/gpu_check.py``) on a machine without CUDA.

Without a GPU it answers in one line, exits 0 and writes nothing; with ``--cpu-parts`` a step
that did not run is "skipped", never "ok"; the summary fills a measured column only where
something was measured.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

from privrepro.benchmark_harness import load_script

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_check.py"


def _module() -> ModuleType:
    return load_script(SCRIPT)


def test_without_cuda_one_line_exit_0_nothing_written(tmp_path: Path) -> None:
    # CUDA_VISIBLE_DEVICES="" hides any GPU from torch: the machine has none, as far as it knows
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run(
        [sys.executable, str(SCRIPT)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and "no CUDA device" in lines[0] and "--cpu-parts" in lines[0]
    assert list(tmp_path.iterdir()) == []  # no results/gpu-check/, no data/


def test_cpu_parts_out_of_budget_are_skipped_not_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gc = _module()
    monkeypatch.setattr(gc, "cuda_available", lambda: False)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    # a budget under the 10 s a step needs: every step is skipped, none runs
    assert gc.main(["--cpu-parts", "--out", str(out), "--budget", "1"]) == 0
    summary = (out / "summary.md").read_text()
    rows = [line for line in summary.splitlines() if line.startswith("| ") and " wall" not in line]
    steps = {r.split("|")[1].strip(): r.split("|")[2].strip() for r in rows[:4]}
    assert steps == {
        "gpu tests": "skipped",
        "benchmarks (quick)": "skipped",
        "stand-ins": "skipped",
        "rehearsal": "skipped",
    }
    assert "| ok |" not in summary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no data/ left behind
    printed = capsys.readouterr().out
    assert "gpu tests: skipped (no CUDA device)" in printed


def test_cpu_parts_refuses_a_budget_not_positive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    gc = _module()
    monkeypatch.setattr(gc, "cuda_available", lambda: False)
    assert gc.main(["--cpu-parts", "--out", str(tmp_path / "o"), "--budget", "-3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--budget = -3" in err[0] and "> 0" in err[0]
    assert not (tmp_path / "o").exists()


def _junit(path: Path, tests: int, failures: int, errors: int, skipped: int) -> Path:
    path.write_text(
        f'<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="{tests}" '
        f'failures="{failures}" errors="{errors}" skipped="{skipped}"></testsuite></testsuites>'
    )
    return path


@pytest.mark.parametrize(
    ("counts", "cuda", "outcome"),
    [
        ((16, 0, 0, 16), False, "skipped"),  # every CUDA test skipped on a CPU: not "ok"
        ((16, 0, 0, 16), True, "failed"),  # skipped although CUDA is there: the paths unchecked
        ((16, 0, 0, 15), True, "ok"),  # one ran and passed
        ((16, 1, 0, 0), True, "failed"),
        ((16, 0, 1, 0), True, "failed"),
    ],
)
def test_pytest_outcome_reads_the_junit_counts(
    tmp_path: Path, counts: tuple[int, int, int, int], cuda: bool, outcome: str
) -> None:
    gc = _module()
    got, detail = gc.pytest_outcome(_junit(tmp_path / "r.xml", *counts), cuda=cuda)
    assert got == outcome
    assert f"{counts[3]} skipped" in detail
    assert gc.pytest_outcome(tmp_path / "missing.xml", cuda=True)[0] == "failed"


def test_summary_fills_measured_columns_only_where_measured(tmp_path: Path) -> None:
    gc = _module()
    rows = [
        # no loop measured: the predictions are the unit's wall time twice, not rates
        dict(experiment="pac/ex4", status="timeout", device="cpu", capped_wall_s=30.0,
             s_per_step=float("nan"), predicted_h=0.5, predicted_gpu_h=0.5),
        # measured on a CPU: a prediction from its rates, but no ratio to a GPU's prediction
        dict(experiment="ip/fig5", status="ok", device="cpu", capped_wall_s=12.0,
             s_per_step=0.25, predicted_h=4.0, predicted_gpu_h=0.1),
        # measured on a GPU: the ratio is the device model's error factor
        dict(experiment="cl/fig4_peft", status="ok", device="cuda", capped_wall_s=8.0,
             s_per_step=0.5, predicted_h=3.0, predicted_gpu_h=2.0),
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "rehearsal.csv", index=False)
    lines = gc.summary_table(tmp_path / "rehearsal.csv").splitlines()[2:]
    cells = [[c.strip() for c in line.split("|")[1:-1]] for line in lines]
    assert cells[0][6] == "" and cells[0][8] == ""  # nothing from rates nobody measured
    assert cells[0][4] == "30"  # the capped run's wall time was measured
    assert cells[1][6] == "4" and cells[1][8] == ""
    assert cells[2][6] == "3" and cells[2][8] == f"{3.0 / 2.0:.2f}"


def test_film_table_gives_gigabytes_and_leaves_a_case_that_ran_out_of_memory_blank(
    tmp_path: Path,
) -> None:
    gc = _module()
    assert gc.film_table(tmp_path / "absent.csv") == ""  # not written: no section
    rows = [
        dict(engine="privrepro", labels=100_000, chunk=256, precision="bf16",
             predicted_bytes=21_650_000_000, measured_bytes=17_950_000_000, step_s=0.082,
             predicted_h100_s=0.0774, outcome="ok"),
        dict(engine="opacus", labels=100_000, chunk=256, precision="bf16",
             predicted_bytes=174_820_000_000, measured_bytes=float("nan"), step_s=float("nan"),
             predicted_h100_s=float("nan"), outcome="out of memory (CUDA out of memory)"),
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(tmp_path / "film.csv", index=False)
    lines = [ln for ln in gc.film_table(tmp_path / "film.csv").splitlines() if ln.startswith("| ")]
    cells = [[c.strip() for c in line.split("|")[1:-1]] for line in lines[1:]]
    # bytes / 1e9, two decimals; the labels with thousands separators
    assert cells[0][:6] == ["privrepro", "100,000", "256", "bf16", "21.65", "17.95"]
    assert cells[1][4] == "174.82" and cells[1][5] == "" and cells[1][6] == ""
    assert cells[1][8].startswith("out of memory")
