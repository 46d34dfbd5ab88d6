"""Threads follow the CPUs the job may use (``privrepro.threads``): joblib's count (affinity,
``LOKY_MAX_CPU_COUNT``), a cgroup v2 or v1 CPU quota of the process's cgroup or a parent (read
from files written here in the kernel's formats), ``OMP_NUM_THREADS`` as a per-process cap, the
division among a multirun's workers, the CPUs other work keeps busy, an explicit count (a
one-line warning above the CPUs), a one-line error for anything else; the runner records the
plan in each unit's env.json and gives torch's thread count back after the run."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from privrepro.config import ConfigError
from privrepro.threads import (
    MAX_THREADS,
    CpuBusy,
    CpuLimit,
    available_cpus,
    busy_cpus,
    cgroup_cpu_quota,
    check_threads,
    plan_threads,
    use_threads,
)


def _v2(tmp: Path, quotas: dict[str, str]) -> tuple[Path, Path]:
    tmp.mkdir(parents=True, exist_ok=True)
    proc = tmp / "cgroup"
    proc.write_text("0::/user.slice/job\n")
    root = tmp / "fs"
    for rel, text in quotas.items():
        (root / rel).mkdir(parents=True, exist_ok=True)
        (root / rel / "cpu.max").write_text(text + "\n")
    (root / "user.slice" / "job").mkdir(parents=True, exist_ok=True)
    return proc, root


def test_cgroup_v2_quota_is_the_tightest_of_the_cgroup_and_its_parents(tmp_path: Path) -> None:
    proc, root = _v2(tmp_path, {"": "max 100000", "user.slice": "250000 100000"})
    assert cgroup_cpu_quota(proc, root) == (2.5, "cgroup v2 cpu.max")
    (root / "user.slice" / "job" / "cpu.max").write_text("50000 100000\n")
    assert cgroup_cpu_quota(proc, root) == (0.5, "cgroup v2 cpu.max")


def test_no_quota_and_no_cgroup(tmp_path: Path) -> None:
    proc, root = _v2(tmp_path, {"": "max 100000"})
    assert cgroup_cpu_quota(proc, root) is None
    assert cgroup_cpu_quota(tmp_path / "missing", root) is None


def test_cgroup_v1_cfs_quota(tmp_path: Path) -> None:
    proc = tmp_path / "cgroup"
    proc.write_text("4:memory:/x\n3:cpu,cpuacct:/docker/abc\n")
    folder = tmp_path / "fs" / "cpu,cpuacct" / "docker" / "abc"
    folder.mkdir(parents=True)
    (folder / "cpu.cfs_quota_us").write_text("150000\n")
    (folder / "cpu.cfs_period_us").write_text("100000\n")
    assert cgroup_cpu_quota(proc, tmp_path / "fs") == (1.5, "cgroup v1 cfs quota")
    (folder / "cpu.cfs_quota_us").write_text("-1\n")  # no quota
    assert cgroup_cpu_quota(proc, tmp_path / "fs") is None


def test_available_cpus_takes_the_quota_when_it_is_below_the_affinity(tmp_path: Path) -> None:
    mask = len(os.sched_getaffinity(0))
    proc, root = _v2(tmp_path, {"user.slice/job": "50000 100000"})  # half a CPU: one
    assert available_cpus(proc, root) == CpuLimit(1, "cgroup v2 cpu.max")
    proc, root = _v2(tmp_path / "b", {"user.slice/job": f"{(mask + 8) * 100000} 100000"})
    assert available_cpus(proc, root) == CpuLimit(mask, "affinity")


def test_available_cpus_reads_joblibs_count(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU in the affinity mask: LOKY_MAX_CPU_COUNT=1 would not lower it")
    proc, root = _v2(tmp_path, {"": "max 100000"})  # no nested quota
    monkeypatch.setenv("LOKY_MAX_CPU_COUNT", "1")  # loky's own cap, read by joblib.cpu_count
    assert available_cpus(proc, root) == CpuLimit(1, "joblib.cpu_count")


def test_the_plan_divides_among_workers_and_obeys_omp(monkeypatch: pytest.MonkeyPatch) -> None:
    lim = CpuLimit(16, "cgroup v2 cpu.max")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    quiet = CpuBusy(0.0, 16, 0.1)
    assert plan_threads("auto", 1, lim, quiet).threads == 16
    assert plan_threads("auto", 3, lim, quiet).threads == 5  # 16 // 3
    assert plan_threads("auto", 32, lim, quiet).threads == 1  # at least one each
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    plan = plan_threads("auto", 2, lim, quiet)
    assert (plan.threads, plan.omp_num_threads, plan.workers) == (4, 4, 2)
    assert plan_threads(12, 2, lim).threads == 12  # explicit: what was asked
    assert plan.as_record()["source"] == "cgroup v2 cpu.max"


@pytest.mark.parametrize(
    ("busy", "workers", "threads"),
    [
        (0.0, 1, 16),  # quiet: every CPU
        (15.6, 1, 1),  # the CPUs already busy: one thread
        (20.0, 1, 1),  # busier than the mask (a hog on every CPU and more): still one
        (10.4, 1, 6),  # 5.6 free, rounded to the nearest
        (10.6, 1, 5),  # 5.4 free
        (8.0, 2, 4),  # 8 free for 2 workers: 4 each (under 16 // 2 = 8)
        (1.0, 2, 8),  # 15 free / 2 = 7.5 → 8, the share 16 // 2 caps it
    ],
)
def test_auto_leaves_the_cpus_other_work_keeps_busy(
    monkeypatch: pytest.MonkeyPatch, busy: float, workers: int, threads: int
) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    plan = plan_threads("auto", workers, CpuLimit(16, "affinity"), CpuBusy(busy, 16, 0.1))
    assert plan.threads == threads
    record = plan.as_record()
    assert (record["busy_cpus"], record["busy_of"]) == (busy, 16)
    assert ("busy with other work" in plan.reason) == (threads < 16 // workers)
    # an explicit count is what was asked, whatever the load
    assert plan_threads(3, workers, CpuLimit(16, "affinity"), CpuBusy(busy, 16, 0.1)).threads == 3


def test_busy_cpus_is_the_machines_busy_time_less_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import types

    import privrepro.threads as th

    machine = iter([(100.0, 400.0), (100.0 + 1.5 * 0.1, 400.2)])  # 1.5 CPUs busy for 0.1 s
    # 0.05 CPU-s of them this process's own
    own = iter(
        [types.SimpleNamespace(user=3.0, system=1.0), types.SimpleNamespace(user=3.04, system=1.01)]
    )
    clock = iter([10.0, 10.1])
    monkeypatch.setattr(th, "_cpu_seconds", lambda cpus: next(machine))
    monkeypatch.setattr(th.time, "sleep", lambda s: None)
    monkeypatch.setattr(th.time, "monotonic", lambda: next(clock))
    import psutil

    monkeypatch.setattr(
        psutil, "Process", lambda: types.SimpleNamespace(cpu_times=lambda: next(own))
    )
    seen = busy_cpus(0.1)
    assert seen is not None
    n = len(os.sched_getaffinity(0))
    assert seen.busy == pytest.approx(min(n, (0.15 - 0.05) / 0.1), abs=0.01)  # 1.0 CPU
    assert seen.cpus == n and seen.free == pytest.approx(max(0.0, n - seen.busy), abs=0.01)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "four", True, MAX_THREADS + 1, 10**12])
def test_a_bad_thread_count_is_one_line(bad: object) -> None:
    with pytest.raises(ConfigError) as err:
        check_threads(bad)
    text = str(err.value)
    assert "threads" in text and "auto" in text and f"1..{MAX_THREADS}" in text
    assert "\n" not in text
    assert check_threads(MAX_THREADS) == MAX_THREADS  # the range printed is the range enforced


def test_more_threads_than_cpus_is_a_one_line_warning() -> None:
    lim = CpuLimit(2, "affinity")
    warning = plan_threads(64, 1, lim).warning
    assert warning is not None and "\n" not in warning
    assert "threads = 64" in warning and "1..2" in warning and "2 CPUs" in warning
    assert plan_threads(2, 1, lim).warning is None  # at the bound: fine
    assert plan_threads("auto", 1, lim, None).warning is None


def test_use_threads_gives_the_counts_back() -> None:
    import torch
    from threadpoolctl import threadpool_info

    before = torch.get_num_threads()
    blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    with use_threads(1):
        assert torch.get_num_threads() == 1
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
    assert torch.get_num_threads() == before
    assert [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"] == blas


def test_the_runner_records_the_plan_and_restores_threads(
    store_overrides: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    import torch

    from privrepro.runner.run import run_experiment

    before = torch.get_num_threads()
    run_experiment("pb/fig1", ["profile=tiny", "threads=1", "plot=false", *store_overrides])
    assert torch.get_num_threads() == before
    assert not [r for r in caplog.records if "threads =" in r.getMessage()]
    exp = next(
        a.split("=", 1)[1] for a in store_overrides if a.startswith("paths.experiments_dir=")
    )
    envs = list(Path(exp).glob("pb/fig1/*/env.json"))
    assert envs
    env = json.loads(envs[0].read_text())
    threads = env["threads"]
    assert threads["threads"] == 1 and threads["requested"] == 1 and threads["cpus"] >= 1
    assert 0 < env["cpu_time_s"]  # the unit's CPU seconds, every thread's
    with pytest.raises(ConfigError, match="threads"):
        run_experiment("pb/fig1", ["profile=tiny", "threads=0", "plot=false", *store_overrides])
    too_many = available_cpus().cpus + 1
    run_experiment(
        "pb/fig1", ["profile=tiny", f"threads={too_many}", "plot=false", *store_overrides]
    )
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(f"threads = {too_many}" in m for m in said), said


@pytest.mark.slow
def test_a_joblib_multirun_divides_the_cpus_among_its_workers(tmp_path: Path) -> None:
    import subprocess
    import sys

    from privrepro.threads import available_cpus

    repo = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    cmd = [
        sys.executable,
        "-m",
        "privrepro.runner.cli",
        "-m",
        "hydra/launcher=local",  # joblib, n_jobs = 2
        "experiment=pb/fig1",
        "profile=tiny",
        "seed=0,1",
        f"paths.experiments_dir={tmp_path / 'exp'}",
        f"paths.results_dir={tmp_path / 'res'}",
        f"paths.plots_dir={tmp_path / 'plots'}",
        "progress=false",
        "plot=false",
    ]
    done = subprocess.run(cmd, env=env, cwd=repo, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    records = [
        json.loads(p.read_text())["threads"] for p in tmp_path.glob("exp/pb/fig1/*/env.json")
    ]
    assert len(records) == 2
    cpus = available_cpus().cpus
    for rec in records:
        assert rec["workers"] == 2 and rec["cpus"] == cpus
        # the share, or less where other work kept CPUs busy (the plan says so)
        assert 1 <= rec["threads"] <= max(1, cpus // 2)
        assert rec["threads"] == max(1, cpus // 2) or "busy" in rec["reason"]


def test_auto_plans_each_item_again_from_the_cpus_found_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch

    import privrepro.threads as th

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    readings = iter([CpuBusy(3.6, 4, 1.0), CpuBusy(0.0, 4, 1.0)])  # busy, then quiet

    class _Monitor:
        def sample(self) -> CpuBusy:
            return next(readings)

    monkeypatch.setattr(th, "BusyMonitor", _Monitor)
    before = torch.get_num_threads()
    first = plan_threads("auto", 1, CpuLimit(4, "affinity"), CpuBusy(0.0, 4, 0.1))
    seen = []
    for item, plan in th.threads_per_item(["a", "b", "c"], first):
        seen.append((item, plan.threads, torch.get_num_threads(), plan.busy_cpus))
    # the first item runs under the figure's plan; each later one under a plan made from the
    # reading before it (3.6 of 4 busy: 0.4 free, one thread; then quiet: all 4)
    assert seen == [("a", 4, 4, 0.0), ("b", 1, 1, 3.6), ("c", 4, 4, 0.0)]
    assert torch.get_num_threads() == before
    explicit = plan_threads(2, 1, CpuLimit(4, "affinity"))
    assert [p.threads for _, p in th.threads_per_item([1, 2], explicit)] == [2, 2]
    assert torch.get_num_threads() == before
