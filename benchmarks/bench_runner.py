"""The run store's overhead: a figure recomputed against the same figure resumed from the store."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from privrepro.benchmark_harness import row


def bench(device: str = "cpu", quick: bool = False) -> list[dict[str, Any]]:
    from privrepro.runner.run import run_experiment

    profile = "tiny" if quick else "smoke"
    with tempfile.TemporaryDirectory() as tmp:
        paths = [
            f"profile={profile}",
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
        row(
            "runner",
            f"cl/fig2 ({profile}) resumed from the store",
            resumed,
            "s",
            fresh,
            f"the same {units} units recomputed with force=true",
            "variant",
            "table rebuilt from the store both times; plot off",
        )
    ]


if __name__ == "__main__":
    for r in bench():
        print(r)
