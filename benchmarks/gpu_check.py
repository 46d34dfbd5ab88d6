"""``make gpu-check``: the GPU paths measured in one command, in at most 8 minutes, into one folder.

    python benchmarks/gpu_check.py                       # results/gpu-check/
    python benchmarks/gpu_check.py --out DIR --budget 480

On a machine with one CUDA GPU, in this order, each step bounded by what is left of ``--budget``
seconds (default 480 with a GPU, 1500 on a CPU):

1. the gpu-marked tests (``pytest -m gpu tests/gpu``): every CUDA path against the CPU;
2. the benchmarks on the GPU, small (``python -m privrepro.benchmark_harness --device cuda --quick``, what
   ``make bench ARGS="--device cuda --quick"`` runs);
3. the stand-ins the next step reads (MNIST, CIFAR-10, CIFAR-100, ViT-B/16 and SLL-small
   weights; full-size files in the real formats, written by the rehearsal's stand-in writer
   into ``--data``, outside the results);
4. the rehearsal of four representative figures on them, capped to one item per loop
   (:data:`FIGURES`: pac Example 4's batched trainings, cl Fig. 4's ViT-B/16 feature extraction,
   one FiLM DP-SGD step of cl Fig. 4 PEFT, one SLL training step of ip Fig. 5), each row with
   the time measured on this device and predicted for the full figure from it, beside the H100
   prediction from operation counts.

Everything lands in ``--out``: ``device.json``, ``pytest-gpu.txt`` (and ``.xml``), ``bench.csv``
and ``bench.txt``, ``standins.txt``, ``rehearsal.csv`` and ``rehearsal.png``, ``summary.md``
(the table: measured against predicted) and ``gpu-check.log``. On a machine without a GPU it
says so in one line, runs the same steps on the CPU (the gpu tests are skipped, the benchmarks
and the rehearsal run on the CPU) and exits 0 when they ran.

The rehearsal and its stand-in writer are called through their command lines only, in one
place: :data:`REHEARSAL` and :data:`STANDINS`.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: the rehearsal's public command line (one place: repoint it here if it moves)
REHEARSAL = [sys.executable, "-m", "privrepro.rehearsal"]
#: the stand-in writer's command line
STANDINS = [sys.executable, "-m", "privrepro.rehearsal.standins"]
#: the figures rehearsed (make targets) and what each one measures
FIGURES = {
    "pac-ex4": "pac Example 4: m batched MLP trainings (MNIST)",
    "cl-4_cosine": "cl Fig. 4 cosine: ViT-B/16 feature extraction (CIFAR-100)",
    "cl-4_peft": "cl Fig. 4 PEFT: a FiLM DP-SGD step through ViT-B/16 (CIFAR-100)",
    "ip-5": "ip Fig. 5: an SLL-small training step (CIFAR-10)",
}
STANDIN_KEYS = "mnist,cifar10,cifar100,vit-b16,ip-sll"
#: seconds each step may take at most (less when the budget left is smaller), with a GPU and
#: on a CPU (where the CPU-bound benchmarks and the stand-ins take longer)
CAPS = {
    "cuda": {"tests": 90, "bench": 150, "standins": 90},
    "cpu": {"tests": 120, "bench": 600, "standins": 400},
}
UNIT_TIMEOUT_S = 30  # the rehearsal's per-unit cap: a unit past it is a lower bound


class Check:
    """The steps' log, their outcomes and the time left."""

    def __init__(self, out: Path, budget: float) -> None:
        self.out = out
        self.deadline = time.monotonic() + budget
        self.steps: list[dict[str, Any]] = []
        self.log = (out / "gpu-check.log").open("w", encoding="utf-8")

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def run(self, name: str, cmd: list[str], cap: float, output: str | None = None) -> bool:
        """Run ``cmd`` for at most ``min(cap, time left)`` seconds; its output to ``output``."""
        limit = min(cap, self.left() - 5)
        if limit < 10:
            self.steps.append({"step": name, "status": "skipped (no time left)", "wall_s": 0.0})
            return False
        self.log.write(f"$ {' '.join(cmd)}\n")
        self.log.flush()
        t0 = time.monotonic()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
            text, code = done.stdout + done.stderr, done.returncode
            status = "ok" if code == 0 else f"exit status {code}"
        except subprocess.TimeoutExpired as exc:
            text = (
                (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
            )
            status, code = f"stopped after {limit:.0f} s", -1
        if output:
            (self.out / output).write_text(text)
        self.log.write(text[-20000:] + "\n")
        self.log.flush()
        wall = time.monotonic() - t0
        self.steps.append({"step": name, "status": status, "wall_s": round(wall, 1)})
        print(f"gpu-check: {name}: {status} ({wall:.0f} s)", flush=True)
        return code == 0


def device_record() -> dict[str, Any]:
    import torch

    rec: dict[str, Any] = {
        "torch": torch.__version__,
        "cuda_available": torch.cuda.is_available(),
        "host": platform.node(),
        "cpu": platform.processor() or platform.machine(),
    }
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        rec.update(
            gpu=p.name,
            gpu_memory_gib=round(p.total_memory / 2**30, 1),
            cuda=torch.version.cuda,
            capability=f"{p.major}.{p.minor}",
        )
    return rec


def summary_table(csv: Path) -> str:
    """The rehearsal's rows as a Markdown table: measured against predicted."""
    import pandas as pd

    if not csv.is_file():
        return "(no rehearsal.csv)"
    t = pd.read_csv(csv)
    lines = [
        "| figure | what | status | device | capped run, measured (s) | s_per_step "
        "| full figure from the measured rates (h) | H100 predicted from "
        "operation counts (h) | measured-rate / op-count |",
        "|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for _, r in t.iterrows():
        target = next((k for k in FIGURES if _target_of(str(r["experiment"])) == k), "")
        measured_h = r.get("predicted_h")
        model_h = r.get("predicted_gpu_h")
        ratio = (
            f"{measured_h / model_h:.2f}"
            if pd.notna(measured_h) and pd.notna(model_h) and model_h
            else ""
        )
        lines.append(
            f"| {r['experiment']} | {FIGURES.get(target, '')} | {r['status']}"
            f"{' (lower bound)' if r.get('lower_bound') is True else ''} | {r.get('device', '')} "
            f"| {_num(r.get('capped_wall_s'))} | {_num(r.get('s_per_step'))} "
            f"| {_num(measured_h)} | {_num(model_h)} | {ratio} |"
        )
    return "\n".join(lines)


def _target_of(experiment: str) -> str:
    paper, fig = experiment.split("/", 1)
    return f"{paper}-{fig.removeprefix('fig')}"


def _num(v: Any) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return ""
    return "" if x != x else f"{x:.3g}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=Path("results/gpu-check"))
    ap.add_argument("--data", type=Path, default=Path("data/gpu-check-standins"))
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds for everything (default: 480 with a GPU, 1500 on a CPU)",
    )
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    dev = device_record()
    args.budget = args.budget or (480.0 if dev["cuda_available"] else 1500.0)
    check = Check(args.out, args.budget)
    (args.out / "device.json").write_text(json.dumps(dev, indent=1))
    gpu = bool(dev["cuda_available"])
    device = "cuda" if gpu else "cpu"
    if not gpu:
        print(
            "gpu-check: no CUDA device on this machine: the GPU parts were not run; "
            "running the CPU parts (gpu tests skipped, benchmarks and rehearsal on the CPU)"
        )
    py = [sys.executable, "-m"]
    check.run(
        "gpu tests",
        [
            *py,
            "pytest",
            "-q",
            "-n",
            "0",
            "-m",
            "gpu",
            "tests/gpu",
            "-p",
            "no:cacheprovider",
            f"--junitxml={args.out / 'pytest-gpu.xml'}",
        ],
        CAPS[device]["tests"],
        "pytest-gpu.txt",
    )
    check.run(
        "benchmarks (quick)",
        [
            *py,
            "privrepro.benchmark_harness",
            "--device",
            device,
            "--quick",
            "--out",
            str(args.out / "bench.csv"),
        ],
        CAPS[device]["bench"],
        "bench.txt",
    )
    wrote = check.run(
        "stand-ins",
        [*STANDINS, "--root", str(args.data), "--only", STANDIN_KEYS, "--no-progress"],
        CAPS[device]["standins"],
        "standins.txt",
    )
    if wrote:
        with tempfile.TemporaryDirectory(prefix="gpu-check-") as scratch:
            targets = [a for t in FIGURES for a in ("--target", t)]
            check.run(
                "rehearsal",
                [
                    *REHEARSAL,
                    "--root",
                    str(args.data),
                    "--scratch",
                    scratch,
                    "--results",
                    str(args.out),
                    "--plots",
                    str(args.out),
                    *targets,
                    "--items",
                    "1",
                    "--timeout",
                    str(UNIT_TIMEOUT_S),
                    "--device",
                    device,
                ],
                max(0.0, check.left() - 5),
                "rehearsal.txt",
            )
    table = summary_table(args.out / "rehearsal.csv")
    steps = "\n".join(f"| {s['step']} | {s['status']} | {s['wall_s']} |" for s in check.steps)
    device_line = dev.get("gpu", f"no GPU: CPU {dev['cpu']}")
    text = (
        f"# gpu-check on {device_line}\n\n"
        f"torch {dev['torch']}; budget {args.budget:.0f} s; "
        f"{'GPU' if gpu else 'CPU only: the GPU parts were NOT run'}\n\n"
        "| step | status | wall (s) |\n|---|---|---:|\n"
        f"{steps}\n\n## Rehearsal: measured on this device against the H100 prediction\n\n"
        f"{table}\n\n`capped run, measured`: the capped rehearsal's wall time here; `s_per_step`: "
        "the rehearsal's seconds per step of the figure's step loop at full size (probed batches "
        "scaled up), measured here; `full figure "
        "from the measured rates`: the rehearsal's prediction of the whole figure from the rates "
        "it measured on this device; `H100 predicted`: the prediction from operation counts "
        "(privrepro.rehearsal.device_model). On an H100 the last column is the device model's "
        "error factor.\n"
    )
    (args.out / "summary.md").write_text(text)
    print(text)
    print(f"gpu-check: results in {args.out}")
    failed = [s for s in check.steps if s["status"] != "ok"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
