"""The whole ``smoke`` profile (``make figures``) from an empty store, and each figure's fixed cost.

One subprocess runs ``python -m privrepro.runner.all --profile smoke`` into a temporary store
(the environment installed, nothing computed yet), as ``make figures`` does. Each figure's wall
time is the time between its report line and the previous one (the first also carries the
interpreter's start and the imports); its own compute is the sum of its units' ``wall_time_s``
in the store. What is left — composing the config, importing the recipe, gathering the table,
the summary, drawing and saving the plot — is the figure's fixed cost.

Rows: the whole run against the issue's 150 s target; the largest fixed cost of a figure and
their mean against the 1 s target (the figure with the largest is named in the note).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from privrepro.bench import row

LINE = re.compile(r"^(\w+)/(\w+): \d+ rows")


def run_profile(profile: str, targets: list[str], root: Path) -> dict[str, Any]:
    """Run the figures in a subprocess into ``root``; per figure: wall and compute seconds."""
    cmd = [sys.executable, "-u", "-m", "privrepro.runner.all", "--profile", profile]
    for t in targets:
        cmd += ["--target", t]
    cmd += [
        "--",
        *(f"paths.{k}={root / k}" for k in ("experiments_dir", "results_dir", "plots_dir")),
    ]
    cmd += ["progress=false"]
    t0 = time.perf_counter()
    last = t0
    walls: dict[str, float] = {}
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as p:
        assert p.stdout is not None
        for line in p.stdout:
            now = time.perf_counter()
            m = LINE.match(line)
            if m:
                walls[f"{m.group(1)}/{m.group(2)}"] = now - last
                last = now
    total = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {p.returncode}")
    compute = {name: _units_seconds(root / "experiments_dir" / name) for name in walls}
    return {"total": total, "wall": walls, "compute": compute}


def _units_seconds(folder: Path) -> float:
    return sum(
        float(json.loads(f.read_text()).get("wall_time_s", 0.0)) for f in folder.glob("*/env.json")
    )


def bench(device: str = "cpu", quick: bool = False) -> list[dict[str, Any]]:
    profile, targets = ("tiny", ["pb-1", "pac-ex1"]) if quick else ("smoke", [])
    with tempfile.TemporaryDirectory() as tmp:
        res = run_profile(profile, targets, Path(tmp))
    overhead = {k: res["wall"][k] - res["compute"][k] for k in res["wall"]}
    worst = max(overhead, key=overhead.__getitem__)
    n = len(overhead)
    top = sorted(res["compute"].items(), key=lambda kv: -kv[1])[:5]
    share = ", ".join(f"{k} {v:.1f} s" for k, v in top)
    return [
        row(
            "smoke_profile",
            f"all {n} figures ({profile}), empty store, one process",
            res["total"],
            "s",
            150.0,
            "the issue's target: 150 s on 2 cores",
            "target",
            f"figures' own compute {sum(res['compute'].values()):.1f} s (largest: {share}); "
            f"fixed costs {sum(overhead.values()):.1f} s",
        ),
        row(
            "smoke_profile",
            "largest fixed cost of a figure (wall − its units' compute)",
            overhead[worst],
            "s",
            1.0,
            "the issue's target: 1 s per figure",
            "target",
            f"{worst} (the first figure also pays the interpreter start and the imports)",
        ),
        row(
            "smoke_profile",
            "mean fixed cost of a figure",
            sum(overhead.values()) / n,
            "s",
            1.0,
            "the issue's target: 1 s per figure",
            "target",
            f"over {n} figures: config, recipe import, table, summary, plot (png + pdf)",
        ),
    ]


if __name__ == "__main__":
    for r in bench():
        print(r)
