"""Every count is bounded before compute: the unit list is counted from the grid before a unit is
made, priced in memory before its identities are, and the root keys that count (seed, worker,
the launcher's jobs) have upper bounds. Each refusal is one ConfigError naming the key.

The billion-repeat cases run under an address-space cap a little above what the process holds, so
a regression (enumerating the grid) fails with MemoryError instead of exhausting the machine.
"""

from __future__ import annotations

import contextlib
import math
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from privrepro.config.validation import ConfigError
from privrepro.figures.api import MAX_UNITS, check_unit_count, grid_units
from privrepro.runner.plan import compose, effective_params, plan_experiment
from privrepro.runner.preflight import (
    LAUNCHER_INTS,
    MAX_JOBS,
    MAX_SEED,
    MAX_WORKER,
    PLAN_BYTES_PER_UNIT_BYTE,
    check_launcher,
    check_unit_list,
    validate_root,
)

REPO = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def address_space_cap(extra: int = 1 << 30) -> Iterator[None]:
    """Cap this process's address space at what it maps now plus ``extra`` bytes, restored after."""
    vm = next(
        int(line.split()[1]) * 1024
        for line in Path("/proc/self/status").read_text().splitlines()
        if line.startswith("VmSize:")
    )
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = vm + extra if hard == resource.RLIM_INFINITY else min(hard, vm + extra)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def test_a_billion_repeats_is_one_line_before_any_unit_is_made(
    store_overrides: list[str],
) -> None:
    over = [*store_overrides, "params.repeats=1000000000"]
    p = effective_params(compose("cl/fig3_peft", over))
    # the grid of LabelGranularityPeft.units: benchmark × epsilon × repeat × config
    want = len(p["benchmarks"]) * len(p["epsilons"]) * p["repeats"] * len(p["configs"])
    with address_space_cap(), pytest.raises(ConfigError) as err:
        plan_experiment("cl/fig3_peft", over)
    assert err.value.key == "params"
    assert str(err.value.value).startswith(f"{want} run units")
    assert "repeat (1000000000)" in str(err.value) and str(MAX_UNITS) in str(err.value)
    assert "\n" not in str(err.value)
    assert not (Path(store_overrides[0].split("=", 1)[1])).exists()  # nothing written


def test_tA7_peft_counts_its_nested_units_before_making_them(store_overrides: list[str]) -> None:
    over = [*store_overrides, "params.repeats=100000000"]
    p = effective_params(compose("cl/tA7_peft", over))
    peft = sum(m.startswith("peft") for m in p["methods"])
    # one unit per PEFT method, one per sampled order of a Naive method (FiveDatasetsPeft.units)
    per = peft + (len(p["methods"]) - peft) * p["naive_orders"]
    with address_space_cap(), pytest.raises(ConfigError) as err:
        plan_experiment("cl/tA7_peft", over, check=False)
    assert str(err.value.value).startswith(f"{len(p['epsilons']) * p['repeats'] * per} run units")


def test_the_count_bound_is_inclusive_and_counted_without_enumerating() -> None:
    assert check_unit_count({"repeat": MAX_UNITS}) == MAX_UNITS
    with pytest.raises(ConfigError, match="the longest axis is b"):
        check_unit_count({"a": 2, "b": MAX_UNITS // 2 + 1})
    with pytest.raises(ConfigError):
        check_unit_count({"a": 1}, extra=MAX_UNITS)
    assert len(grid_units({}, a=range(MAX_UNITS))) == MAX_UNITS
    with address_space_cap(), pytest.raises(ConfigError):
        grid_units({}, a=range(10**6), b=range(10**6), c=range(10**6))


def test_the_plan_prices_the_whole_unit_list() -> None:
    unit = {"a": 1.0, "b": "x"}
    size = len('{"a": 1.0, "b": "x"}')
    n = 100
    need = n * size * PLAN_BYTES_PER_UNIT_BYTE
    check_unit_list([unit] * n, available=math.ceil(need / 0.8))  # exactly fits the headroom
    with pytest.raises(ConfigError, match="their plan would need"):
        check_unit_list([unit] * n, available=need)  # 80% of it is too little
    with pytest.raises(ConfigError, match=f"at most {MAX_UNITS}"):  # several grids joined
        check_unit_list([unit] * (MAX_UNITS + 1), available=1 << 40)


@pytest.mark.parametrize(
    ("key", "most"), [("seed", MAX_SEED), ("worker", MAX_WORKER)], ids=["seed", "worker"]
)
def test_root_counts_have_upper_bounds(key: str, most: int) -> None:
    cfg = compose("cl/fig2", [f"{key}={most}"])
    validate_root(cfg)
    OmegaConf.update(cfg, key, most + 1)
    with pytest.raises(ConfigError) as err:
        validate_root(cfg)
    assert err.value.key == key and f"[0, {most}]" in str(err.value)


@pytest.mark.parametrize("n_jobs", [0, -3, MAX_JOBS + 1, True, "2", 1.5])
def test_launcher_jobs_out_of_range_are_refused(n_jobs: object) -> None:
    with pytest.raises(ConfigError) as err:
        check_launcher({"n_jobs": n_jobs}, cpus=2)
    assert err.value.key == "hydra.launcher.n_jobs"


@pytest.mark.parametrize("key", sorted(LAUNCHER_INTS))
def test_slurm_launcher_counts_have_ranges(key: str) -> None:
    lo, hi = LAUNCHER_INTS[key]
    check_launcher({key: lo})
    check_launcher({key: hi})
    for bad in (lo - 1, hi + 1, 2.5):
        with pytest.raises(ConfigError) as err:
            check_launcher({key: bad})
        assert err.value.key == f"hydra.launcher.{key}"


def test_the_slurm_launcher_config_is_in_range() -> None:
    cfg = OmegaConf.load(REPO / "conf" / "hydra" / "launcher" / "slurm.yaml")
    check_launcher({k: v for k, v in cfg.items() if k != "defaults"})


@pytest.mark.parametrize("n_jobs", [1, MAX_JOBS, -1, -2, None])
def test_launcher_jobs_in_range_pass(n_jobs: object) -> None:
    check_launcher({"n_jobs": n_jobs}, cpus=2)


@pytest.mark.slow
def test_zero_jobs_is_one_line_before_any_job(tmp_path: Path) -> None:
    out = [
        f"paths.experiments_dir={tmp_path / 'e'}",
        f"paths.results_dir={tmp_path / 'r'}",
        f"paths.plots_dir={tmp_path / 'p'}",
    ]
    cmd = [sys.executable, "-m", "privrepro.runner.cli", "-m", "hydra/launcher=local"]
    proc = subprocess.run(
        [*cmd, "hydra.launcher.n_jobs=0", "experiment=cl/fig2", "seed=0,1", *out],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "hydra.launcher.n_jobs = 0" in lines[0], proc.stderr[-2000:]
    assert not (tmp_path / "e" / "_sweeps").exists() or not any(
        (tmp_path / "e" / "_sweeps").iterdir()
    )
