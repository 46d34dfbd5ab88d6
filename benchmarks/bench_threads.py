"""Threads beside a CPU hog: torch's default thread count against the project's
(:mod:`privrepro.threads`) for the same small-model DP-SGD loop.

The work is the DP-SGD loop of cl Fig. 5's smoke FiLM units: :func:`train_dpsgd` on the small
random ViT's FiLM parameters (16×16 images, batches of 32, opacus per-sample gradients), a fixed
number of steps, in fresh worker processes. Beside it, a CPU hog: one busy process per CPU this
process may use, started first and stopped (by their ids) after. The threads torch and the BLAS
libraries use are the only difference:

* **a multirun on this machine**: one worker per CPU (Hydra's joblib launcher with ``n_jobs`` =
  the CPUs), each running the loop. Baseline: torch's default in each worker (one thread per CPU
  of its affinity mask: what a process gets from a launcher that does not set
  ``OMP_NUM_THREADS``, such as the submitit launcher or jobs started from separate shells;
  Hydra's joblib launcher sets it itself through loky); project:
  :func:`~privrepro.threads.plan_threads` for that many workers (the CPUs divided among them).
  The time is the multirun's (its slowest worker).
* **one job on a loaded machine**: a single worker. Baseline: torch's default (the job may use
  every CPU); project: ``threads=auto``, which samples the CPUs other work keeps busy (the hog)
  and leaves them alone (:func:`~privrepro.threads.busy_cpus`).

Global state: nothing in this process changes (the workers are processes of their own, started
with ``OMP_NUM_THREADS`` unset so torch's own default is what the baseline measures).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

from privrepro.benchmark_harness import row

_WORKER = r"""
import sys, time, torch
threads = int(sys.argv[1]); steps = int(sys.argv[2])
if threads:
    torch.set_num_threads(threads)
from privrepro.continual.peft import make_film, small_vit
from privrepro.training.dpsgd import DPSGDHyper, train_dpsgd
g = torch.Generator().manual_seed(0)
film = make_film(small_vit(g), 10)
x, y = torch.rand(64, 3, 16, 16, generator=g), torch.randint(0, 10, (64,), generator=g)
hp = DPSGDHyper(epochs=steps / 2, batch_size=32, lr=1e-3, clip=1.0, epsilon=None)
warm = DPSGDHyper(epochs=1, batch_size=32, lr=1e-3, clip=1.0, epsilon=None)
train_dpsgd(make_film(small_vit(g), 10), x, y, warm, generator=torch.Generator().manual_seed(2))
t0 = time.perf_counter()
train_dpsgd(film, x, y, hp, generator=torch.Generator().manual_seed(1))
print(time.perf_counter() - t0, torch.get_num_threads())
"""

_HOG = "while True:\n    pass\n"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.pop("OPENBLAS_NUM_THREADS", None)
    return env


def _run_workers(workers: int, threads: int, steps: int) -> tuple[float, int]:
    """Start ``workers`` loops at once; the slowest one's loop time and its thread count."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(threads), str(steps)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=_env(),
        )
        for _ in range(workers)
    ]
    times, used = [], 0
    for p in procs:
        out, _ = p.communicate(timeout=1800)
        if p.returncode != 0 or not out.strip():
            raise RuntimeError(f"worker exited with {p.returncode}")
        t, n = out.split()
        times.append(float(t))
        used = int(n)
    return max(times), used


def _hog(cpus: int) -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen([sys.executable, "-c", _HOG], stdout=subprocess.DEVNULL)
        for _ in range(cpus)
    ]


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def _quick_rows() -> list[dict[str, Any]]:
    """``--quick`` (the tests): the same rows from the loop in this process, no hog and no
    worker processes (seconds, not timings); torch's threads given back."""
    import torch

    from privrepro.benchmark_harness import torch_threads
    from privrepro.continual.peft import make_film, small_vit
    from privrepro.training.dpsgd import DPSGDHyper, train_dpsgd

    def loop(n: int) -> float:
        with torch_threads(n), torch.random.fork_rng(devices=[]):
            g = torch.Generator().manual_seed(0)
            film = make_film(small_vit(g), 10)
            x, y = torch.rand(64, 3, 16, 16, generator=g), torch.randint(0, 10, (64,), generator=g)
            hp = DPSGDHyper(epochs=1, batch_size=32, lr=1e-3, clip=1.0, epsilon=None)
            t0 = time.perf_counter()
            train_dpsgd(film, x, y, hp, generator=torch.Generator().manual_seed(1))
            return time.perf_counter() - t0

    default = torch.get_num_threads()
    return [
        row(
            "threads beside a CPU hog",
            "multirun (quick: in-process, no hog)",
            loop(1),
            "s",
            loop(default),
            f"torch's default: {default} threads",
            "variant",
            "quick: rows, not timings",
        ),
        row(
            "threads beside a CPU hog",
            "one job (quick: in-process, no hog)",
            loop(1),
            "s",
            loop(default),
            f"torch's default: {default} threads",
            "variant",
            "quick: rows, not timings",
        ),
    ]


def bench(device: str = "cpu", quick: bool = False) -> list[dict[str, Any]]:
    if quick:
        return _quick_rows()
    from privrepro.threads import available_cpus, plan_threads

    limit = available_cpus()
    cpus = limit.cpus
    steps = 30
    rows: list[dict[str, Any]] = []
    hog = _hog(cpus)
    try:
        time.sleep(0.5)  # the hog running before the work starts
        workers = max(2, cpus)
        plan = plan_threads("auto", workers, limit)
        pairs = []
        for _ in range(2):  # alternated, best of each
            pairs.append(
                (_run_workers(workers, 0, steps), _run_workers(workers, plan.threads, steps))
            )
        (old, old_n), (new, new_n) = min(p[0] for p in pairs), min(p[1] for p in pairs)
        load = (
            f"beside {cpus} busy processes (one per CPU this process may use: {cpus}, "
            f"{limit.source})"
        )
        rows.append(
            row(
                "threads beside a CPU hog",
                f"multirun of {workers} workers × {steps} DP-SGD steps (small-ViT FiLM)",
                new,
                "s",
                old,
                f"torch's default: {old_n} threads per worker",
                "variant",
                f"project: {new_n} thread(s) per worker (plan_threads for {workers} workers); "
                f"{load}; the slowest worker's loop time, best of {len(pairs)}",
            )
        )
        one = plan_threads("auto", 1, limit)  # the hog runs: threads=auto sees busy CPUs
        pairs = []
        for _ in range(2):
            pairs.append((_run_workers(1, 0, steps), _run_workers(1, one.threads, steps)))
        (old, old_n), (new, new_n) = min(p[0] for p in pairs), min(p[1] for p in pairs)
        rows.append(
            row(
                "threads beside a CPU hog",
                f"one job × {steps} DP-SGD steps (small-ViT FiLM), threads=auto",
                new,
                "s",
                old,
                f"torch's default: {old_n} threads (one per CPU of the affinity mask)",
                "variant",
                f"project: {new_n} thread(s), threads=auto ({one.reason}); {load}; "
                f"best of {len(pairs)}",
            )
        )
    finally:
        _stop(hog)
    return rows
