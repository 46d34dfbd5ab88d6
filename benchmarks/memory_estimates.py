"""Predicted against measured peak memory of the units the runner checks before compute.

    python benchmarks/memory_estimates.py

For each case a fresh process composes the experiment, builds its params, takes the recipe's
``estimate_memory``, then computes the largest unit and records how far its peak resident memory
rose above the resident memory just before (``ru_maxrss`` − RSS, so imports do not count). A
prediction is useful when it is above the measurement and of the same order: it refuses what
cannot fit without refusing what can.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

CASES: list[tuple[str, list[str]]] = [
    ("pac/curves_dimension", ["profile=smoke", "params.sides=[48]"]),
    ("pac/curves_dimension", ["profile=smoke", "params.sides=[32]", "params.pool_size=20000"]),
    ("pac/ex2", ["profile=smoke", "params.m=20000"]),
    ("pac/ex2", ["profile=smoke", "params.m=200000"]),
    ("pac/ex3", ["profile=smoke", "params.m=20000"]),
    ("pac/ex4", ["profile=tiny", "params.chunk=64", "params.m=200"]),
    ("pac/ex4", ["profile=tiny", "params.chunk=512", "params.m=600", "params.steps=2"]),
    ("cl/fig4_data", ["profile=smoke", "params.per_class=200000", "params.settings=[i-blurry]"]),
    ("pb/fig4", ["profile=tiny", "params.samples=2000000", "params.iterations=2"]),
]

CHILD = r"""
import json, resource, sys
from pathlib import Path
from privrepro.runner.plan import compose, effective_params
from privrepro.runner.recipe_config import load_recipe
from privrepro.config.validation import build_params
from privrepro.figures.api import UnitContext
name, overrides, tmp = sys.argv[1], json.loads(sys.argv[2]), Path(sys.argv[3])
cfg = compose(name, overrides)
recipe = load_recipe(cfg.figure.recipe)
params = build_params(recipe.params_type, effective_params(cfg), "params")
est = recipe.estimate_memory(params)
units = recipe.units(params)
unit = units[-1] if name != "pac/curves_dimension" else max(units, key=lambda u: u["side"])
ctx = UnitContext(seed=0, unit_id="bench", profile=str(cfg.profile.name), device="cpu",
                  data_dir=tmp / "data", cache_dir=tmp / "cache")
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096
before = rss()
recipe.compute(dict(unit), ctx)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"estimate": est.bytes, "key": est.key, "measured": max(peak - before, 0)}))
"""


def main() -> int:
    print(f"{'case':<70} {'predicted':>10} {'measured':>10}  ratio")
    with tempfile.TemporaryDirectory() as tmp:
        for name, overrides in CASES:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, name, json.dumps(overrides), tmp],
                capture_output=True,
                text=True,
                cwd=Path(__file__).resolve().parents[1],
            )
            if out.returncode:
                print(f"{name} {overrides}: failed: {out.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            mib = 2**20
            print(
                f"{name + ' ' + ' '.join(overrides):<70} {r['estimate'] / mib:>8.0f} M "
                f"{r['measured'] / mib:>8.0f} M  {r['estimate'] / max(r['measured'], 1):.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
