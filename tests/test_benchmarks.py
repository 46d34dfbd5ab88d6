"""The benchmarks' conventions and state handling (never their timings).

Every ``benchmarks/bench_*.py`` runs in its ``quick`` mode (tiny sizes): each row follows the one
convention (a cost and its baseline's in the same unit, ``speedup = baseline / value``, a named
baseline of a known kind) and the module gives back every piece of global state it changed.
The runner restores what a module leaks and reports it.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from privrepro.benchmark_harness import (
    COLUMNS,
    KINDS,
    changed_state,
    global_state,
    load_script,
    preserved_state,
    row,
    run_benchmarks,
    torch_threads,
)

FOLDER = Path(__file__).resolve().parents[1] / "benchmarks"
MODULES = sorted(p.stem for p in FOLDER.glob("bench_*.py"))


def test_row_states_the_convention() -> None:
    r = row("b", "m", 2.0, "s", 10.0, "a loop", "straw man")
    assert r["speedup"] == 5.0  # baseline time / project time: > 1 means faster
    assert set(COLUMNS) <= set(r)
    with pytest.raises(ValueError, match="baseline_kind"):
        row("b", "m", 1.0, "s", 1.0, "x", "faster thing")
    with pytest.raises(ValueError, match="names its baseline"):
        row("b", "m", 1.0, "s", 1.0, "", "target")
    assert math.isnan(row("b", "m", 0.0, "s", 1.0, "x", "target")["speedup"])


def test_runner_restores_and_reports_what_a_module_leaks(tmp_path: Path) -> None:
    (tmp_path / "bench_leaky.py").write_text(
        "import random, numpy as np, torch\n"
        "from privrepro.benchmark_harness import row\n"
        "def bench(device='cpu', quick=False):\n"
        "    torch.set_num_threads(torch.get_num_threads() + 1)\n"
        "    torch.set_default_dtype(torch.float64)\n"
        "    torch.manual_seed(3); np.random.seed(3); random.seed(3)\n"
        "    return [row('leaky', 'm', 1.0, 's', 2.0, 'x', 'variant')]\n"
    )
    (tmp_path / "bench_clean.py").write_text(
        "import torch\n"
        "from privrepro.benchmark_harness import row, torch_threads\n"
        "def bench(device='cpu', quick=False):\n"
        "    with torch_threads(1):\n"
        "        seen = torch.get_num_threads()\n"
        "    return [row('clean', f'threads {seen}', 1.0, 's', 2.0, 'x', 'variant')]\n"
    )
    before = global_state()
    table, failures, leaks = run_benchmarks(tmp_path, device="cpu", quick=True)
    assert changed_state(before, global_state()) == []  # every leak given back
    assert not failures
    assert set(leaks) == {"bench_leaky.py"}
    assert {"torch_threads", "torch_default_dtype", "torch_rng", "numpy_rng", "python_rng"} <= set(
        leaks["bench_leaky.py"]
    )
    assert list(table["benchmark"]) == ["clean", "leaky"]
    assert table.loc[0, "metric"] == "threads 1"
    assert {"load_1min", "threads", "device"} <= set(table.columns)


def test_preserved_state_gives_back_what_a_block_changes() -> None:
    before = global_state()
    with preserved_state():
        torch.set_default_dtype(torch.float64)
        torch.manual_seed(7)
        assert changed_state(before, global_state()) == ["torch_default_dtype", "torch_rng"]
    assert changed_state(before, global_state()) == []


def test_torch_threads_gives_the_count_back() -> None:
    n = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == n


@pytest.mark.slow  # each module end to end at tiny sizes: seconds to a minute
@pytest.mark.parametrize("name", MODULES)
def test_each_benchmark_follows_the_convention_and_restores_global_state(name: str) -> None:
    before = global_state()
    module = load_script(FOLDER / f"{name}.py")
    rows = module.bench(device="cpu", quick=True)
    assert changed_state(before, global_state()) == [], f"{name} left global state changed"
    assert rows, f"{name} produced no rows"
    for r in rows:
        assert set(COLUMNS) <= set(r), r
        assert r["baseline"] and r["baseline_kind"] in KINDS, r
        assert r["value"] > 0 and r["baseline_value"] > 0, r
        assert r["speedup"] == pytest.approx(r["baseline_value"] / r["value"]), r
