"""Bad values through the ``privrepro`` command line: how many stop cleanly before any compute.

    python benchmarks/bad_values.py            # every case below, two at a time
    python benchmarks/bad_values.py --jobs 4

Each case runs ``python -m privrepro.runner.cli experiment=... <overrides>`` (``profile=tiny``,
scratch store) and is *clear* when it exits with status 2, prints exactly one ``privrepro:`` line
naming the expected key (or file) and no traceback, and leaves no unit folder in the store. The
list holds every case the store issue named (crashes part-way and silent acceptances) and more of
each kind, across the four papers and the root keys. Prints one line per case and the count
(tried, clear, other).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UNIT = re.compile(r"^[0-9a-f]{16}$")

# (experiment, overrides, what the one line must name)
CASES: list[tuple[str, list[str], str]] = [
    # named in the issue: crashed part-way
    ("pb/fig1", ["params.sigma=inf"], "params.sigma"),
    ("pb/fig1", ["params.fixed_lower=9", "params.fixed_upper=1"], "params.fixed_upper"),
    ("pb/fig6", ["params.alphas=[]"], "params.alphas"),
    ("pac/ex1", ["params.ns=[]"], "params.ns"),
    ("pac/curves_dimension", ["params.pool_size=100000000"], "params.pool_size"),
    ("cl/fig2", ["paths.experiments_dir=/dev/null/exp"], "paths.experiments_dir"),
    # named in the issue: accepted silently
    ("pb/fig2", ["params.deltas=[]"], "params.deltas"),
    ("pac/ex1", ["params.mi=inf"], "params.mi"),
    ("pac/ex5", ["params.v_min=2.0", "params.v_max=1.0"], "params.v_max"),
    ("cl/fig2", ["force=no"], "force"),
    ("cl/fig2", ["force=maybe"], "force"),
    ("cl/fig2", ["-m", "seed=range(0,0)"], "seed"),
    # named in the issue of data and store safety: past the door, or a traceback
    ("pb/fig7", ["params.epsilon=1e-320"], "params.epsilon"),
    ("ip/fig3", ["params.n_draws=1e30"], "params.n_draws"),
    ("pb/fig1", ["params.sigma=1e-320"], "params.sigma"),
    ("cl/fig2", ["paths.experiments_dir=/proc/x"], "paths.experiments_dir"),
    # their meaningful ranges: ε where e^ε − 1 and e^ε hold in float64, a σ the grid resolves
    ("pb/fig7", ["params.epsilon=1e-12"], "params.epsilon"),
    ("pb/fig7", ["params.epsilon=800"], "params.epsilon"),
    ("pb/fig1", ["params.sigma=1e-3"], "params.sigma"),
    ("pb/fig1", ["params.sigma=1e308"], "params.sigma"),
    ("ip/fig3", ["params.n_draws=100000"], "params.n_draws"),
    ("pb/fig4", ["params.samples=1e19"], "params.samples"),
    # more of each kind
    ("pb/fig1", ["params.sigma=-1"], "params.sigma"),
    ("pb/fig1", ["params.rho=1.0"], "params.rho"),
    ("pb/fig1", ["params.query=nan"], "params.query"),
    ("pb/fig1", ["params.points=5"], "params.points"),
    ("pb/fig2", ["params.deltas=[2.0]"], "params.deltas[0]"),
    ("pb/fig2", ["params.sizes=[10.0,10.0]"], "params.sizes"),
    ("pb/fig2", ["params.cases=[bogus]"], "params.cases[0]"),
    ("pb/fig2", ["params.accountants=[]"], "params.accountants"),
    ("pb/fig3", ["params.rhos=[1.0]"], "params.rhos[0]"),
    ("pb/fig3", ["params.sensitivity_b=inf"], "params.sensitivity_b"),
    ("pb/fig4", ["params.samples=0"], "params.samples"),
    ("pb/fig4", ["params.samplers=[]"], "params.samplers"),
    ("pb/fig4", ["params.samples=1000000000000"], "params.samples"),
    ("pb/fig5", ["params.a_epsilons=[0.5,0.1]"], "params.a_epsilons"),
    ("pb/fig5", ["params.a_epsilons=[0.1]"], "params.a_epsilons"),
    ("pb/fig5", ["params.b_alphas=[1.0]"], "params.b_alphas[0]"),
    ("pb/fig6", ["params.t_max=0"], "params.t_max"),
    ("pb/fig6", ["params.pld_discretization=0"], "params.pld_discretization"),
    ("pb/fig6", ["params.exact_ts=[0]"], "params.exact_ts[0]"),
    ("pb/fig7", ["params.set_sizes=[91]"], "params.set_sizes[0]"),
    ("pb/fig7", ["params.age_low=50"], "params.age_low"),
    ("pb/fig7", ["params.epsilon=inf"], "params.epsilon"),
    ("pb/fig7", ["params.data=bogus"], "params.data"),
    ("cl/fig2", ["params.epsilons=[]"], "params.epsilons"),
    ("cl/fig2", ["params.epsilons=[1.0,1.0]"], "params.epsilons"),
    ("cl/fig2", ["params.k_max=0"], "params.k_max"),
    ("cl/fig2", ["params.threshold=1.0"], "params.threshold"),
    ("cl/fig2", ["params.epsilons={a:1}"], "params.epsilons"),
    ("cl/fig4_data", ["params.num_classes=3", "params.nb_tasks=5"], "params.num_classes"),
    ("cl/fig4_data", ["params.per_class=100000000000"], "params.per_class"),
    ("cl/fig3_cosine", ["params.repeats=0"], "params.repeats"),
    ("cl/fig3_cosine", ["params.datasets=[mnist]"], "params.datasets[0]"),
    ("cl/fig5_peft", ["params.film.num_heads=3"], "params.film.num_heads"),
    ("cl/fig5_peft", ["params.tuning.lr_high=1e-8"], "params.tuning.lr_high"),
    ("cl/fig5_peft", ["params.methods=[]"], "params.methods"),
    ("cl/fig5_peft", ["params.train.delta=1"], "params.train.delta"),
    ("ip/fig5", ["params.eps_count=0"], "params.eps_count"),
    ("ip/fig5", ["params.alphas=[-0.1]"], "params.alphas[0]"),
    ("ip/fig5", ["params.dataset=bogus"], "params.dataset"),
    ("ip/fig3", ["params.n_draws=0"], "params.n_draws"),
    ("ip/fig3", ["params.data.val_fraction=1.0"], "params.data.val_fraction"),
    ("pac/ex1", ["params.ns=[0]"], "params.ns[0]"),
    ("pac/ex1", ["params.domain_size=1"], "params.domain_size"),
    ("pac/ex2", ["params.m=1"], "params.m"),
    ("pac/ex2", ["params.v=0"], "params.v"),
    ("pac/ex4", ["params.chunk=0"], "params.chunk"),
    ("pac/ex4", ["params.subset_fraction=1.5"], "params.subset_fraction"),
    ("pac/ex4", ["params.hidden=[0]"], "params.hidden[0]"),
    ("pac/ex5", ["params.points=1"], "params.points"),
    ("pac/ex5", ["params.eigenvalues=[]"], "params.eigenvalues"),
    ("pac/curves_dimension", ["params.sides=[200]"], "params.sides[0]"),
    ("pac/curves_dimension", ["params.sides=[]"], "params.sides"),
    ("pac/curves_success", ["params.priors=[1.5]"], "params.priors[0]"),
    ("cl/fig2", ["progress=maybe"], "progress"),
    ("cl/fig2", ["plot=2"], "plot"),
    ("cl/fig2", ["seed=-1"], "seed"),
    ("cl/fig2", ["device=tpu"], "device"),
    ("cl/fig2", ["paths.results_dir=/dev/null/res"], "paths.results_dir"),
    # missing data: one line naming the file, exit status 2
    ("pb/fig7", ["params.data=uci"], "adult.data"),
    ("pac/ex2", ["params.dataset=cifar10"], "cifar-10"),
    ("ip/fig5", ["params.dataset=cifar10"], "cifar-10"),
]


def _units(root: Path) -> list[Path]:
    return (
        [p for p in root.rglob("*") if p.is_dir() and UNIT.match(p.name)] if root.exists() else []
    )


def run_case(experiment: str, overrides: list[str], key: str, scratch: Path) -> tuple[bool, str]:
    """``(clear, why)`` of one case."""
    multirun = [o for o in overrides if o == "-m"]
    rest = [o for o in overrides if o != "-m"]
    cmd = [
        sys.executable,
        "-m",
        "privrepro.runner.cli",
        *multirun,
        f"experiment={experiment}",
        "profile=tiny",
        "progress=false",
        f"paths.experiments_dir={scratch / 'exp'}",
        f"paths.results_dir={scratch / 'res'}",
        f"paths.plots_dir={scratch / 'plots'}",
        f"paths.data_dir={scratch / 'data'}",
        *rest,
    ]
    try:
        out = subprocess.run(
            cmd,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "PRIVREPRO_DATA": ""},
        )
    except subprocess.TimeoutExpired:
        return False, "ran past 300 s"
    lines = [ln for ln in out.stderr.splitlines() if ln.startswith("privrepro:")]
    if out.returncode != 2:
        tail = (out.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        return False, f"exit {out.returncode}: {tail[:160]}"
    if "Traceback" in out.stderr:
        return False, "a traceback"
    if len(lines) != 1 or key not in lines[0]:
        return False, f"line does not name {key}: {lines[:1]}"
    if _units(scratch / "exp"):
        return False, "a unit was computed"
    return True, lines[0][:160]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        futures = [
            pool.submit(run_case, e, o, k, Path(tmp) / f"case{i}")
            for i, (e, o, k) in enumerate(CASES)
        ]
        results = [f.result() for f in futures]
    for (experiment, overrides, _), (ok, why) in zip(CASES, results, strict=True):
        print(f"{'clear' if ok else 'OTHER':<6} {experiment:<22} {' '.join(overrides):<48} {why}")
    clear = sum(ok for ok, _ in results)
    print(
        f"tried {len(CASES)}, clear {clear}, other {len(CASES) - clear} "
        f"({time.perf_counter() - t0:.0f} s)"
    )
    return 0 if clear == len(CASES) else 1


if __name__ == "__main__":
    sys.exit(main())
