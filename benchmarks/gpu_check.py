"""``make gpu-check``: the GPU paths measured in one command, in at most 8 minutes, into one folder.

    python benchmarks/gpu_check.py                       # results/gpu-check/
    python benchmarks/gpu_check.py --out DIR --budget 480
    python benchmarks/gpu_check.py --cpu-parts           # no GPU: the same steps on the CPU

On a machine without a CUDA device it says so in one line and exits 0 at once: nothing is
measured, nothing is written. ``--cpu-parts`` runs the steps that do not need a GPU on the CPU
(the benchmarks, the stand-ins and the rehearsal; the gpu tests are reported as skipped, never
as passed), which takes about 3 minutes on two quiet cores (157 s measured).

On a machine with one CUDA GPU, in this order, each step bounded by what is left of ``--budget``
seconds (default 480 with a GPU, 1500 for ``--cpu-parts``):

1. the gpu-marked tests (``pytest -m gpu tests/gpu``): every CUDA path against the CPU; their
   outcome is read from pytest's JUnit XML (tests that all skipped are "skipped", not "ok");
2. the benchmarks on the GPU, small (``python -m privrepro.benchmark_harness --device cuda --quick``, what
   ``make bench ARGS="--device cuda --quick"`` runs);
3. the stand-ins the next step reads (MNIST, CIFAR-10, CIFAR-100, ViT-B/16 and SLL-small
   weights; full-size files in the real formats, written by the rehearsal's stand-in writer
   into ``--data``, by default a temporary folder removed at the end);
4. the rehearsal of four representative figures on them, capped to one item per loop (two on
   a GPU, where the first is the warm-up: :data:`ITEMS`) (:data:`FIGURES`: pac Example 4's
   batched trainings, cl Fig. 4's ViT-B/16 feature extraction,
   one FiLM DP-SGD step of cl Fig. 4 PEFT, one SLL training step of ip Fig. 5), each row with
   the time measured on this device and predicted for the full figure from it, beside the H100
   prediction from operation counts;
5. on a GPU, a ViT-B/16 FiLM step's peak memory and time against the memory plan and the H100
   device model (``benchmarks/film_memory_cuda.py``, :data:`FILM_MEMORY`).

Everything lands in ``--out``: ``device.json``, ``pytest-gpu.txt`` (and ``.xml``), ``bench.csv``
and ``bench.txt``, ``standins.txt``, ``rehearsal.csv`` and ``rehearsal.png``, ``summary.md``
(the table: measured against predicted) and ``gpu-check.log``. A column of the summary that
derives from a measurement is filled only where a loop was measured; the ratio of the measured
prediction to the operation-count one only where the measurement was made on a GPU.

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
import xml.etree.ElementTree as ET
from collections.abc import Callable
from contextlib import ExitStack
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
#: on a CPU with ``--cpu-parts`` (where the CPU-bound benchmarks and the stand-ins take longer)
CAPS = {
    "cuda": {"tests": 90, "bench": 150, "standins": 90, "film": 90},
    "cpu": {"tests": 120, "bench": 600, "standins": 400},
}
#: a ViT-B/16 FiLM step's peak memory and time, measured against the memory plan and the H100
#: device model (GPU only)
FILM_MEMORY = Path(__file__).resolve().parent / "film_memory_cuda.py"
#: the rehearsal's per-unit cap (a unit past it is a lower bound) and items per capped loop: on
#: a GPU two, so that the first (the CUDA context, cuBLAS handles: 22 s for an SLL batch on an
#: H200) counts once and the second gives the rate (``privrepro.rehearsal.loop_record.FirstItem``)
UNIT_TIMEOUT_S = {"cuda": 45, "cpu": 30}
ITEMS = {"cuda": 2, "cpu": 1}
#: samples per probed batch on a GPU: a batch of the rehearsal's default 4 runs in kernel-launch
#: time, which scaling it to the full batch multiplies; at the physical chunk (256) the time grows
#: with the samples, as the scaling assumes
GPU_PROBE_SAMPLES = 256


#: a step's outcome: "ok" (it ran and passed), "skipped" (it did not run, or every test in it
#: was skipped) or "failed" (it ran and did not pass, or was stopped)
OUTCOMES = ("ok", "skipped", "failed")


class Check:
    """The steps' log, their outcomes and the time left."""

    def __init__(self, out: Path, budget: float) -> None:
        self.out = out
        self.deadline = time.monotonic() + budget
        self.steps: list[dict[str, Any]] = []
        self.log = (out / "gpu-check.log").open("w", encoding="utf-8")

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def record(self, name: str, outcome: str, detail: str, wall: float = 0.0) -> None:
        """Add a step's row (``outcome`` one of :data:`OUTCOMES`) and print it."""
        assert outcome in OUTCOMES, outcome
        self.steps.append(
            {"step": name, "outcome": outcome, "detail": detail, "wall_s": round(wall, 1)}
        )
        print(f"gpu-check: {name}: {outcome}{f' ({detail})' if detail else ''}", flush=True)

    def run(
        self,
        name: str,
        cmd: list[str],
        cap: float,
        output: str | None = None,
        judge: Callable[[], tuple[str, str]] | None = None,
    ) -> bool:
        """Run ``cmd`` for at most ``min(cap, time left)`` seconds; its output to ``output``.

        Returns whether it exited 0; the step is recorded as "ok" then, "failed" otherwise, or,
        where it exited 0 and ``judge`` is given, as ``judge()`` says (outcome, detail).
        """
        limit = min(cap, self.left() - 5)
        if limit < 10:
            self.record(name, "skipped", "no time left of the budget")
            return False
        self.log.write(f"$ {' '.join(cmd)}\n")
        self.log.flush()
        t0 = time.monotonic()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
            text, code = done.stdout + done.stderr, done.returncode
            detail = "" if code == 0 else f"exit status {code}"
        except subprocess.TimeoutExpired as exc:
            text = (
                (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
            )
            detail, code = f"stopped after {limit:.0f} s", -1
        if output:
            (self.out / output).write_text(text)
        self.log.write(text[-20000:] + "\n")
        self.log.flush()
        wall = time.monotonic() - t0
        outcome = "ok" if code == 0 else "failed"
        if code == 0 and judge is not None:
            outcome, detail = judge()
        self.record(name, outcome, f"{detail}, {wall:.0f} s".lstrip(", "), wall)
        return code == 0


def pytest_outcome(xml: Path, cuda: bool) -> tuple[str, str]:
    """The gpu tests' outcome from pytest's JUnit XML: "ok" only where tests ran and passed.

    Every test skipped is "skipped" without CUDA and "failed" with it (a CUDA test skipped on a
    GPU machine did not check its path); a failure or an error is "failed".
    """
    try:
        root = ET.parse(xml).getroot()
    except (OSError, ET.ParseError) as exc:
        return "failed", f"no test report ({type(exc).__name__})"
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    n = {
        k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")
    }
    ran = n["tests"] - n["skipped"]
    text = (
        f"{ran - n['failures'] - n['errors']} passed, {n['failures']} failed, "
        f"{n['errors']} errors, {n['skipped']} skipped"
    )
    if n["failures"] or n["errors"]:
        return "failed", text
    if ran == 0:
        return ("failed" if cuda else "skipped"), text
    return "ok", text


def cuda_available() -> bool:
    """Whether torch sees a CUDA device."""
    import torch

    return bool(torch.cuda.is_available())


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
    """The rehearsal's rows as a Markdown table: measured against predicted.

    ``capped run`` and ``s_per_step`` are measured; the full figure "from the measured rates" is
    shown only where a loop was measured (``s_per_step`` present: a row without one holds the
    unit's wall time twice, not a rate); their ratio to the operation-count prediction only where
    the rates were measured on a GPU (on a CPU it would divide a CPU time by a GPU one).
    """
    import pandas as pd

    if not csv.is_file():
        return "(no rehearsal.csv)"
    t = pd.read_csv(csv)
    lines = [
        "| figure | what | status | device | capped run, measured (s) | s_per_step, measured "
        "| full figure from the measured rates (h) | H100 predicted from "
        "operation counts (h) | measured-rate / op-count (GPU only) |",
        "|---|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for _, r in t.iterrows():
        target = next((k for k in FIGURES if _target_of(str(r["experiment"])) == k), "")
        measured = _value(r.get("s_per_step")) is not None
        measured_h = _value(r.get("predicted_h")) if measured else None
        model_h = _value(r.get("predicted_gpu_h"))
        on_gpu = str(r.get("device", "")) == "cuda"
        ratio = (
            f"{measured_h / model_h:.2f}" if on_gpu and measured_h is not None and model_h else ""
        )
        lines.append(
            f"| {r['experiment']} | {FIGURES.get(target, '')} | {r['status']}"
            f"{' (lower bound)' if r.get('lower_bound') is True else ''} | {r.get('device', '')} "
            f"| {_num(r.get('capped_wall_s'))} | {_num(r.get('s_per_step'))} "
            f"| {_num(measured_h)} | {_num(model_h)} | {ratio} |"
        )
    return "\n".join(lines)


def film_table(csv: Path) -> str:
    """``film-memory-cuda.csv`` as a Markdown table (empty where it was not written)."""
    import pandas as pd

    if not csv.is_file():
        return ""
    t = pd.read_csv(csv)
    lines = [
        "\n\n## A ViT-B/16 FiLM step on this device: measured against the memory plan and the "
        "H100 device model\n",
        "| clipping | labels | chunk | precision | planned (GB) | measured (GB) | step (s) "
        "| H100 model (s) | outcome |",
        "|---|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for _, r in t.iterrows():
        gb = [_value(r.get(k)) for k in ("predicted_bytes", "measured_bytes")]
        lines.append(
            f"| {r['engine']} | {int(r['labels']):,} | {int(r['chunk'])} | {r['precision']} "
            f"| {'' if gb[0] is None else f'{gb[0] / 1e9:.2f}'} "
            f"| {'' if gb[1] is None else f'{gb[1] / 1e9:.2f}'} | {_num(r.get('step_s'))} "
            f"| {_num(r.get('predicted_h100_s'))} | {str(r['outcome'])[:60]} |"
        )
    return "\n".join(lines)


def _target_of(experiment: str) -> str:
    paper, fig = experiment.split("/", 1)
    return f"{paper}-{fig.removeprefix('fig')}"


def _value(v: Any) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if x != x else x


def _num(v: Any) -> str:
    x = _value(v)
    return "" if x is None else f"{x:.3g}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=Path("results/gpu-check"))
    ap.add_argument(
        "--data",
        type=Path,
        default=None,
        help="where the stand-ins are written and kept (default: a temporary folder, removed)",
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds for everything (default: 480 with a GPU, 1500 with --cpu-parts)",
    )
    ap.add_argument(
        "--cpu-parts",
        action="store_true",
        help="without a GPU: run the benchmarks, stand-ins and rehearsal on the CPU (minutes)",
    )
    args = ap.parse_args(argv)
    gpu = cuda_available()
    if not gpu and not args.cpu_parts:
        print(
            "gpu-check: no CUDA device on this machine: nothing measured, nothing written "
            "(--cpu-parts runs the CPU parts, a few minutes)",
            flush=True,
        )
        return 0
    if args.budget is not None and args.budget <= 0:
        print(f"gpu-check: --budget = {args.budget:g} must be > 0 seconds", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    dev = device_record()
    budget = args.budget or (480.0 if gpu else 1500.0)
    check = Check(args.out, budget)
    (args.out / "device.json").write_text(json.dumps(dev, indent=1))
    device = "cuda" if gpu else "cpu"
    if not gpu:
        print(
            "gpu-check: no CUDA device on this machine: --cpu-parts runs the CPU parts "
            "(gpu tests skipped, benchmarks and rehearsal on the CPU)",
            flush=True,
        )
    py = [sys.executable, "-m"]
    if gpu:
        xml = args.out / "pytest-gpu.xml"
        xml.unlink(missing_ok=True)
        # pytest's exit status says pass or fail; its XML says whether any test ran at all
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
                f"--junitxml={xml}",
            ],
            CAPS[device]["tests"],
            "pytest-gpu.txt",
            judge=lambda: pytest_outcome(xml, cuda=True),
        )
    else:
        check.record("gpu tests", "skipped", "no CUDA device")
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
    with ExitStack() as stack:
        data = args.data or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="gpu-check-data-"))
        )
        wrote = check.run(
            "stand-ins",
            [*STANDINS, "--root", str(data), "--only", STANDIN_KEYS, "--no-progress"],
            CAPS[device]["standins"],
            "standins.txt",
        )
        if not wrote:
            check.record("rehearsal", "skipped", "no stand-ins")
        else:
            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="gpu-check-"))
            targets = [a for t in FIGURES for a in ("--target", t)]
            check.run(
                "rehearsal",
                [
                    *REHEARSAL,
                    "--root",
                    str(data),
                    "--scratch",
                    scratch,
                    "--results",
                    str(args.out),
                    "--plots",
                    str(args.out),
                    *targets,
                    "--items",
                    str(ITEMS[device]),
                    "--timeout",
                    str(UNIT_TIMEOUT_S[device]),
                    "--device",
                    device,
                    *(["--probe", str(GPU_PROBE_SAMPLES)] if gpu else []),
                    "--rehearse-film",  # run the FiLM step here, not only price it
                ],
                max(0.0, check.left() - 5),
                "rehearsal.txt",
            )
    if gpu:
        check.run(
            "FiLM step memory",
            [sys.executable, str(FILM_MEMORY), "--out", str(args.out / "film-memory-cuda.csv")],
            CAPS[device]["film"],
            "film-memory.txt",
        )
    table = summary_table(args.out / "rehearsal.csv")
    film = film_table(args.out / "film-memory-cuda.csv")
    text = summary_text(dev, budget, gpu, check.steps, table + film)
    (args.out / "summary.md").write_text(text)
    print(text)
    print(f"gpu-check: results in {args.out}")
    return 1 if any(s["outcome"] == "failed" for s in check.steps) else 0


def summary_text(
    dev: dict[str, Any], budget: float, gpu: bool, steps: list[dict[str, Any]], table: str
) -> str:
    """``summary.md``: the steps' outcomes and the rehearsal's table."""
    rows = "\n".join(
        f"| {s['step']} | {s['outcome']} | {s['detail']} | {s['wall_s']} |" for s in steps
    )
    device_line = dev.get("gpu", f"no GPU: CPU {dev['cpu']}")
    return (
        f"# gpu-check on {device_line}\n\n"
        f"torch {dev['torch']}; budget {budget:.0f} s; "
        f"{'GPU' if gpu else 'CPU only (--cpu-parts): the GPU parts were NOT run'}\n\n"
        "| step | outcome | detail | wall (s) |\n|---|---|---|---:|\n"
        f"{rows}\n\n## Rehearsal: measured on this device against the H100 prediction\n\n"
        f"{table}\n\n`capped run, measured`: the capped rehearsal's wall time here; `s_per_step`: "
        "the rehearsal's seconds per step of the figure's step loop at full size (probed batches "
        "scaled up), measured here; `full figure from the measured rates`: the rehearsal's "
        "prediction of the whole figure from the rates it measured on this device (blank where "
        "no loop was measured); `H100 predicted`: the prediction from operation counts "
        "(privrepro.rehearsal.device_model). On an H100 the last column is the device model's "
        "error factor; it is blank where the rates were not measured on a GPU.\n"
    )


if __name__ == "__main__":
    sys.exit(main())
