"""The run store's overhead: a figure recomputed against the same figure resumed from the store."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path


def bench() -> list[dict[str, object]]:
    from privrepro.runner.run import run_experiment

    with tempfile.TemporaryDirectory() as tmp:
        paths = [
            f"paths.experiments_dir={tmp}/exp",
            f"paths.results_dir={tmp}/res",
            f"paths.plots_dir={tmp}/plots",
            "plot=false",
            "progress=false",
        ]
        run_experiment("cl/fig2", paths)  # warm-up: imports
        t0 = time.perf_counter()
        run_experiment("cl/fig2", [*paths, "force=true"])
        fresh = time.perf_counter() - t0
        t0 = time.perf_counter()
        run = run_experiment("cl/fig2", paths)
        resumed = time.perf_counter() - t0
        assert run.computed == 0
        units = len(list(Path(tmp, "exp", "cl", "fig2").iterdir()))
    return [
        {
            "benchmark": "runner",
            "metric": "cl/fig2 resumed from the store (12 units)",
            "value": resumed,
            "unit": "s",
            "baseline": fresh,
            "ratio": fresh / resumed,
            "note": f"baseline: the same {units} units recomputed with force=true",
        }
    ]


if __name__ == "__main__":
    for row in bench():
        print(row)
