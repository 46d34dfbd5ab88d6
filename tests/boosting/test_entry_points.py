"""The package's experiment functions: one error type for bad parameters, raised before any
compute, and the bookkeeping the figures rely on (strided exact points, the best ε₀)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from privrepro import boosting
from privrepro.config import ConfigError

SETTING = boosting.PBSetting("absolute", 0.9, 1.0, 10.0)
KERNEL = boosting.GaussianKernel(3.0)
REGIONS = {"absolute": boosting.AbsoluteRegion(3.0)}


def _never(*_: Any, **__: Any) -> Any:  # pragma: no cover - must not be reached
    raise AssertionError("computed before the parameters were checked")


@pytest.mark.parametrize(
    ("key", "call"),
    [
        ("rho", lambda: boosting.sweep("absolute", "dp", 1e-5, [0.9, 1.2], 1.0, 10.0)),
        ("level", lambda: boosting.sweep("absolute", "dp", 2.0, 0.9, 1.0, 10.0)),
        ("level", lambda: boosting.sweep("absolute", "rdp", 0.5, 0.9, 1.0, 10.0)),
        ("case", lambda: boosting.sweep("square", "dp", 1e-5, 0.9, 1.0, 10.0)),
        (
            "accountants",
            lambda: boosting.sweep("fixed", "dp", 1e-5, 0.9, 1.0, 10.0, accountants=["x"]),
        ),
        ("panel", lambda: boosting.sweep("absolute", "dp", 1e-5, 0.9, 1.0, 10.0, panel=["a", "b"])),
        (
            "level, rho, sensitivity, size",
            lambda: boosting.sweep("absolute", "dp", 1e-5, [0.8, 0.9], [1.0, 2.0, 3.0], 10.0),
        ),
        ("points", lambda: boosting.output_densities(KERNEL, REGIONS, 0.9, 0.0, 1.0, points=1)),
        (
            "samplers",
            lambda: boosting.sampler_runtime(
                SETTING, [10.0], rng=np.random.default_rng(0), samplers=["gibbs"]
            ),
        ),
        ("rhos", lambda: boosting.fixed_region_extra_loss(20.0, 1.0, 10.0, [0.0], [2.0])),
        ("exact_ts", lambda: boosting.composition_dp(SETTING, 10, exact_ts=[20])),
        ("pld_discretization", lambda: boosting.composition_dp(SETTING, 10, pld_discretization=0)),
        (
            "check_discretization",
            lambda: boosting.composition_dp(SETTING, 10, check_discretization=1.0),
        ),
        ("notion", lambda: boosting.composition_dp(boosting.PBSetting(notion="rdp"), 10)),
        ("alphas", lambda: boosting.composition_rdp(SETTING, [1.0], 10)),
        ("mse_scale", lambda: boosting.grr_mse_curve(np.ones(10, int), 1.0, 2, mse_scale="x")),
        ("rng", lambda: boosting.grr_mse_curve(np.ones(10, int), 1.0, 2, mc_repetitions=5)),
        ("partition", lambda: boosting.grr_mse_curve(np.ones(10, int), 1.0, 3, partition="x")),
        ("eps0", lambda: SETTING.mechanism(0.0)),
        ("method", lambda: SETTING.mechanism(1.0).sample(np.random.default_rng(0), 0.0, 5, "x")),
    ],
)
def test_bad_parameters_raise_config_error_naming_the_key(
    key: str, call: Callable[[], Any], monkeypatch: pytest.MonkeyPatch
) -> None:  # nothing may be computed first: the engines' work functions must not be reached
    for name in ("gaussian_baseline_batch", "optimise_eps0_batch"):
        monkeypatch.setattr(f"privrepro.boosting.epsilon_sweep.{name}", _never)
    monkeypatch.setattr("privrepro.boosting.composition.optimise_eps0", _never)
    monkeypatch.setattr("privrepro.boosting.runtime.optimise_eps0", _never)
    with pytest.raises(ConfigError) as err:
        call()
    assert err.value.key == key
    assert str(err.value).startswith(f"{key} = ")


def test_sweep_strides_the_exact_points_and_keeps_each_curves_last() -> None:
    rho = [0.6, 0.7, 0.8, 0.9, 0.95]
    rows = boosting.sweep(
        "absolute", "rdp", [2.0] * 5 + [10.0] * 5, rho * 2, 1.0, 20.0, exact_stride=3
    )
    exact = rows[rows["accountant"] == "exact"]
    # per (panel, level) curve of 5 points: indices 0, 3 and the last one, 4
    assert exact.groupby("level")["rho"].apply(list).to_dict() == {
        2.0: [0.6, 0.9, 0.95],
        10.0: [0.6, 0.9, 0.95],
    }
    # the exact ε is taken at the ε₀ Algorithm 2 chose for that point
    paper = rows[rows["accountant"] == "paper"]
    both = exact.merge(paper, on=["level", "rho"], suffixes=("", "_paper"))
    assert len(both) == 6 and np.array_equal(both["eps0"], both["eps0_paper"])


def test_best_eps0_reads_the_minima() -> None:
    # a table with known minima: category MSE (e - 1)², value MSE (e - 3)² + 1 on e = 0 … 4
    e = np.arange(5.0)
    table = pd.DataFrame(
        {
            "set_size": 2,
            "eps0": np.concatenate([e, e]),
            "estimator": ["category"] * 5 + ["value"] * 5,
            "method": "analytic",
            "mse": np.concatenate([(e - 1) ** 2 + 0.5, (e - 3) ** 2 + 1]),
        }
    )
    best = boosting.best_eps0(table).set_index("metric")["value"]
    assert best["best_eps0_category"] == 1.0
    assert best["best_eps0_value"] == 3.0
    assert best["best_eps0_tradeoff"] == 2.0  # (e-1)² + (e-3)² is smallest at 2
    assert best["category_mse_ratio_grr_over_eps0_0"] == pytest.approx(9.5 / 1.5)
    assert best["value_mse_at_grr"] == 2.0
