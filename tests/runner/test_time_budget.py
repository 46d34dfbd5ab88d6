"""The plan prices the compute time of the units still to compute, from the wall times the stored
units record, and refuses in one line what cannot finish within ``max_hours`` or the submitit
launcher's ``timeout_min``; units no stored unit is like are "not priced", said once.

Every expected number is read back from the store's own ``env.json`` records (the median of the
stored units' ``wall_time_s``, times the units to compute), never typed in.
"""

from __future__ import annotations

import json
import logging
import math
import statistics
from pathlib import Path
from typing import Any

import pytest
from recipes_for_tests import scratch_paths

from privrepro.config.validation import ConfigError
from privrepro.runner.plan import plan_experiment
from privrepro.runner.run import run_experiment
from privrepro.runner.time_budget import (
    MAX_HOURS,
    check_compute_time,
    check_max_hours,
    launcher_limit,
    price_units,
)
from privrepro.store.identity import unit_hash
from privrepro.store.units import UnitStore

SLURM = "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"


def _stored_walls(exp: Path) -> list[float]:
    folder = exp / "test" / "noise"
    return [
        float(json.loads((p / "env.json").read_text())["wall_time_s"])
        for p in sorted(folder.iterdir())
        if p.is_dir() and not p.name.startswith((".", "_"))
    ]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory, module_conf_root: Path) -> tuple[Path, Path]:
    """``test/noise``, three units of 50 ms each, run once at seed 0."""
    tmp = tmp_path_factory.mktemp("ran")
    run_experiment("test/noise", _over(tmp, "seed=0"), conf=module_conf_root)
    return tmp, module_conf_root


def _over(tmp: Path, *extra: str) -> list[str]:
    return scratch_paths(
        tmp, "device=cpu", "plot=false", "params.n_units=3", "params.sleep_s=0.05", *extra
    )


def test_units_still_to_compute_that_cannot_finish_are_refused(ran: tuple[Path, Path]) -> None:
    tmp, conf = ran
    walls = _stored_walls(tmp / "exp")
    assert len(walls) == 3 and min(walls) >= 0.05  # each slept 50 ms
    with pytest.raises(ConfigError) as err:  # seed 1: three new units, priced by seed 0's
        plan_experiment("test/noise", _over(tmp, "seed=1", "max_hours=1e-5"), conf)
    line = str(err.value)
    assert err.value.key == "max_hours" and "\n" not in line
    assert "the 3 units of test/noise still to compute would take about " in line
    total = 0.0
    for _ in range(3):  # each unit at the median, summed in the same order as the price
        total += statistics.median(walls)
    assert f"about {total:.3g} s" in line
    assert "3 priced at the median wall time of the 3 stored units like them" in line
    assert f"must be at least {total / 3600:.3g} h" in line
    # the same units within a limit they can meet; and a run that computes nothing
    plan_experiment("test/noise", _over(tmp, "seed=1", "max_hours=1"), conf)
    plan_experiment("test/noise", _over(tmp, "seed=0", "max_hours=1e-5"), conf)
    with pytest.raises(ConfigError, match="the 3 units of test/noise still to compute"):
        plan_experiment("test/noise", _over(tmp, "seed=0", "force=true", "max_hours=1e-5"), conf)


def test_units_no_stored_unit_is_like_are_not_priced_once(
    ran: tuple[Path, Path], caplog: pytest.LogCaptureFixture
) -> None:
    """Another tag (a setting, not a grid axis) or other draws (a number the same across the
    plan): nothing stored is like these units; the plan goes on and says so in one line."""
    tmp, conf = ran
    for other in ("params.tag=b", "params.draws=7"):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="privrepro.runner"):
            plan_experiment("test/noise", _over(tmp, other, "max_hours=1e-5"), conf)
        lines = [r.getMessage() for r in caplog.records if "not priced" in r.getMessage()]
        assert lines == [
            "test/noise: not priced (no stored unit is like the 3 to compute): "
            "max_hours not checked"
        ]


def _store(tmp: Path, walls: dict[str, list[float]]) -> UnitStore:
    """A store whose units record the given wall times, by tag (records only: pricing reads
    ``config.json`` and ``env.json``, never the rows)."""
    store = UnitStore(tmp, "test", "noise")
    for tag, times in walls.items():
        for i, wall in enumerate(times):
            identity = _identity(tag, i)
            folder = store.path(unit_hash(identity))
            folder.mkdir(parents=True)
            (folder / "config.json").write_text(json.dumps(identity))
            (folder / "env.json").write_text(json.dumps({"wall_time_s": wall}))
    return store


def _identity(tag: str, i: int, seed: int = 0) -> dict[str, Any]:
    return {
        "paper": "test",
        "figure": "noise",
        "profile": "smoke",
        "seed": seed,
        "recipe": "recipes_for_tests:NoiseFigure",
        "version": 1,
        "unit": {"i": i, "tag": tag, "draws": 10},
    }


def test_each_unit_is_priced_by_the_stored_units_like_it(tmp_path: Path) -> None:
    """Tag a: walls 1, 2, 10 s (median 2); tag b: 30 s; tag c: none stored. Seed 1's units,
    two of each tag: 2 × 2 + 2 × 30 = 64 s priced, 2 not priced."""
    store = _store(tmp_path, {"a": [1.0, 2.0, 10.0], "b": [30.0]})
    ids_ = [_identity(tag, i, seed=1) for tag in "abc" for i in range(2)]
    ids = [unit_hash(i) for i in ids_]
    price = price_units(store, ids_, ids)
    assert (price.to_compute, price.priced, price.stored) == (6, 4, 4)
    assert math.isclose(price.seconds, 2 * statistics.median([1.0, 2.0, 10.0]) + 2 * 30.0)
    assert "2 not priced" in price.basis
    with pytest.raises(ConfigError) as err:  # 64 s of priced units, more than a minute
        check_compute_time(store, ids_, ids, launcher=("hydra.launcher.timeout_min", 1.0))
    assert err.value.key == "hydra.launcher.timeout_min" and "must be at least 1.07 min" in str(
        err.value
    )
    assert check_compute_time(store, ids_, ids, max_hours=1.0) == price  # within an hour
    assert check_compute_time(store, ids_, ids) is None  # no limit: nothing read


def test_the_submitit_launchers_timeout_is_the_jobs_limit() -> None:
    assert launcher_limit({"_target_": SLURM, "timeout_min": 240}) == (
        "hydra.launcher.timeout_min",
        240.0,
    )
    joblib = "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher"
    assert launcher_limit({"_target_": joblib, "n_jobs": 2}) is None
    assert launcher_limit() is None  # outside a Hydra job


@pytest.mark.parametrize("value", [0, -1.0, math.inf, math.nan, True, "2", MAX_HOURS + 1])
def test_max_hours_out_of_range_is_one_line(value: Any) -> None:
    with pytest.raises(ConfigError) as err:
        check_max_hours(value)
    assert str(err.value).startswith(f"max_hours = {value!r}: must be null (no limit) or a number")
    assert f"(0, {MAX_HOURS}]" in str(err.value)


def test_max_hours_is_checked_with_the_root_keys(tmp_path: Path, conf_root: Path) -> None:
    with pytest.raises(ConfigError, match=r"max_hours = 0: must be null"):
        plan_experiment("test/noise", scratch_paths(tmp_path, "max_hours=0"), conf_root)
    check_max_hours(None)
    check_max_hours(MAX_HOURS)
