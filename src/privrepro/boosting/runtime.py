"""Sampling time of PB-DP against the Gaussian meeting the same utility constraint (pb Sec. 5.2).

The paper times "10,000 samples across 100 iterations" as |S| grows. Here every sampler is timed
in the same process, calls interleaved so that drift in machine load hits all alike, and reported
as a ratio to Gaussian sampling (absolute times depend on the machine). The hardware-independent
quantity is the rejection sampler's mean number of kernel proposals per output, ``ρ/p_S``
(note §1, §5.5), which falls as |S| grows.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from privrepro.boosting._checks import check_choice, check_range
from privrepro.boosting.design import PBSetting, gaussian_baseline_sigma, optimise_eps0
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.loops import PLAIN, Loops

__all__ = ["sampler_runtime"]


def sampler_runtime(
    setting: PBSetting,
    sizes: Sequence[float],
    *,
    rng: np.random.Generator,
    samples: int = 10_000,
    iterations: int = 100,
    samplers: Sequence[str] = ("rejection", "mixture"),
    loops: Loops = PLAIN,
) -> pd.DataFrame:
    """Time ``iterations`` calls of ``samples`` draws, per region size, PB-DP and Gaussian.

    For each ``|S|`` in ``sizes`` the setting's ε₀ comes from Algorithm 2 (paper's accounting);
    the Gaussian has ``Pr[|noise| ≤ |S|/2] = ρ``. Draws are at true value 0.

    Returns:
        Rows ``size, sampler, eps0, q, time_ms_mean, time_ms_se, ratio_to_gaussian,
        proposals_per_sample, expected_proposals, in_region_fraction, samples, iterations``;
        ``sampler`` is ``gaussian`` or ``pb_<sampler>``.
    """
    check_range("sizes", list(sizes), gt=0)
    check_range("samples", samples, ge=1)
    check_range("iterations", iterations, ge=1)
    for name in samplers:
        check_choice("samplers", name, ("rejection", "mixture"))
    n, iters = int(samples), int(iterations)
    rows = []
    for size in loops(sizes, "pb sampler runtime"):
        s = replace(setting, size=float(size))
        eps0 = optimise_eps0(s).eps0
        mech = s.mechanism(eps0)
        sigma_g = gaussian_baseline_sigma(float(size), s.rho)
        timings, props, inside = _time(mech, sigma_g, rng, n, iters, samplers)
        g_mean = float(np.mean(timings["gaussian"]))
        for name, ts in timings.items():
            gauss = name == "gaussian"
            arr = np.asarray(ts) * 1e3
            rows.append(
                {
                    "size": float(size),
                    "sampler": "gaussian" if gauss else f"pb_{name}",
                    "eps0": np.nan if gauss else eps0,
                    "q": 0.0 if gauss else mech.q,
                    "time_ms_mean": float(arr.mean()),
                    "time_ms_se": float(arr.std(ddof=1) / np.sqrt(len(arr)))
                    if len(arr) > 1
                    else np.nan,
                    "ratio_to_gaussian": float(np.mean(ts)) / g_mean,
                    "proposals_per_sample": 1.0 if gauss else props[name] / (n * iters),
                    "expected_proposals": 1.0
                    if name in ("gaussian", "mixture")
                    else mech.expected_proposals(),
                    "in_region_fraction": np.nan if gauss else inside[name] / (n * iters),
                    "samples": n,
                    "iterations": iters,
                }
            )
    return pd.DataFrame(rows)


def _time(
    mech: BoostedMechanism,
    sigma_g: float,
    rng: np.random.Generator,
    n: int,
    iters: int,
    samplers: Sequence[str],
) -> tuple[dict[str, list[float]], dict[str, int], dict[str, int]]:
    """Seconds per call of each sampler (and the Gaussian's), proposals and in-region draws."""
    lo, hi = (float(v) for v in mech.region.bounds(0.0))
    timings: dict[str, list[float]] = {"gaussian": []}
    props: dict[str, int] = {}
    inside: dict[str, int] = {}
    for name in samplers:
        timings[name] = []
        props[name] = 0
        inside[name] = 0
        mech.sample(rng, 0.0, n, method=name)  # warm-up
    rng.normal(0.0, sigma_g, n)
    for _ in range(iters):  # interleaved, so that drift in machine load hits all alike
        t0 = time.perf_counter()
        rng.normal(0.0, sigma_g, n)
        timings["gaussian"].append(time.perf_counter() - t0)
        for name in samplers:
            t0 = time.perf_counter()
            out = mech.sample(rng, 0.0, n, method=name)
            timings[name].append(time.perf_counter() - t0)
            props[name] += out.proposals
            inside[name] += int(np.count_nonzero((out.values >= lo) & (out.values <= hi)))
    return timings, props, inside
