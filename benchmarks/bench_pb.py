"""Speed of the pb accounting: the composition curve of Fig. 6 at every integer T ≤ 1000 (the
corrected O(T)-per-step Algorithm 1, vectorised) against the literal double loop of Algorithm 1
at the same T values (measured on a subset and per T, in the same run); and every pb figure in the
``smoke`` profile (wall time), against the same figures' summed unit compute time."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from privrepro.bench import row
from privrepro.boosting._dp import gaussian_delta_mu
from privrepro.boosting.accounting import (
    algorithm1_double_loop,
    composition_epsilon_curve,
    epsilon_for_delta,
)
from privrepro.boosting.design import PBSetting, optimise_eps0


def bench_composition() -> list[dict[str, Any]]:
    s = PBSetting("absolute", 0.9, 3.0, 10.0)
    mech = s.mechanism(optimise_eps0(s).eps0)
    terms = mech.paper_terms(3.0)
    sig = mech.kernel.scale
    T = np.arange(1, 1001)
    t0 = time.perf_counter()
    curve = composition_epsilon_curve(
        terms, lambda e, t: gaussian_delta_mu(e, 3.0 * np.sqrt(t) / sig), T, 1e-5
    )
    t_curve = time.perf_counter() - t0
    # baseline: the literal O(T²) double loop of Algorithm 1 with a root-find per T, on T = 10, 20, 40
    # (timed per T, extrapolated by its O(T²) cost per δ evaluation to all T ≤ 1000)
    sample = [10, 20, 40]
    t0 = time.perf_counter()
    for t in sample:
        kd = (lambda tt: lambda e: gaussian_delta_mu(e, 3.0 * math.sqrt(tt) / sig))(t)
        epsilon_for_delta(
            lambda e, t=t, kd=kd: algorithm1_double_loop(terms, kd, e, t), 1e-5, eps_hi=curve[t - 1]
        )
    t_loop = time.perf_counter() - t0
    per_t2 = t_loop / sum(t * t for t in sample)
    t_loop_all = per_t2 * float(np.sum(T.astype(float) ** 2))
    return [
        row(
            "pb_composition",
            "Fig. 6 curve, every integer T ≤ 1000",
            t_curve,
            "s",
            t_loop_all,
            "ours: corrected Algorithm 1 (O(T) law of K, vectorised Illinois root over all T); "
            "baseline: literal double loop + root-find per T, measured at T = 10, 20, 40 and "
            "extrapolated as O(T²) to T ≤ 1000",
        ),
    ]


def bench_figures() -> list[dict[str, Any]]:
    """Every pb figure in ``smoke``, in this process, into a temporary store (results untouched)."""
    import tempfile

    from privrepro.runner.run import run_experiment

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = [f"paths.{k}={tmp}/{k}" for k in ("experiments_dir", "results_dir", "plots_dir")]
        t_all = time.perf_counter()
        for fig in ("fig1", "fig2", "fig3", "fig4", "fig5", "fig6", "fig7"):
            t0 = time.perf_counter()
            run = run_experiment(f"pb/{fig}", ["profile=smoke", "progress=false", *paths])
            wall = time.perf_counter() - t0
            rows.append(
                row(
                    "pb_figures_smoke",
                    f"{fig} wall time",
                    wall,
                    "s",
                    run.wall_time_s,
                    "baseline: the runner's own wall time of the figure (units + table + plot); "
                    "the difference is config composition",
                )
            )
        total = time.perf_counter() - t_all
    rows.append(
        row(
            "pb_figures_smoke",
            "all pb figures, wall time",
            total,
            "s",
            60.0,
            "baseline: the 60 s budget of the smoke profile (2 cores); one process, fresh store",
        )
    )
    return rows


def bench() -> list[dict[str, Any]]:
    return bench_composition() + bench_figures()


if __name__ == "__main__":
    for r in bench():
        print(r)
