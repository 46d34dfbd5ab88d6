"""Configuration errors name the key, the value and the allowed range, before any compute."""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from privrepro.config.validation import ConfigError, assumptions_of, build_params, param

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Inner:
    sigma: float = param(1.0, ge=0)


@dataclass
class Example:
    epsilon: float = param(1.0, gt=0)
    delta: float = param(1e-5, gt=0, lt=1)
    radius: float = param(0.5, ge=0, assumed="not stated in the paper")
    probability: float = param(1.0, gt=0, le=1)
    epsilons: list[float] = param([1.0, 8.0], gt=0)
    mode: str = param("exact", choices=["exact", "paper"])
    steps: int = param(10, ge=1)
    inner: Inner = field(default_factory=Inner)


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("epsilon", 0.0, "(0, inf)"),
        ("epsilon", -1.0, "(0, inf)"),
        ("delta", 1.0, "(0, 1)"),
        ("delta", 0.0, "(0, 1)"),
        ("radius", -0.1, "[0, inf)"),
        ("probability", 1.5, "(0, 1]"),
        ("probability", 0.0, "(0, 1]"),
        ("mode", "approx", "['exact', 'paper']"),
        ("steps", 0, "[1, inf)"),
    ],
)
def test_out_of_range_names_key_value_and_range(key: str, value: object, allowed: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_params(Example, {key: value})
    assert err.value.key == f"params.{key}"
    assert err.value.value == value
    assert allowed in str(err.value)
    assert repr(value) in str(err.value)


def test_list_elements_are_checked_with_their_index() -> None:
    with pytest.raises(ConfigError, match=r"params\.epsilons\[1\] = -8\.0"):
        build_params(Example, {"epsilons": [1.0, -8.0]})


def test_nested_dataclass_fields_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"params\.inner\.sigma = -1\.0"):
        build_params(Example, {"inner": {"sigma": -1.0}})


def test_unknown_key_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="unknown key") as err:
        build_params(Example, {"epsilonn": 1.0})
    assert "epsilon" in err.value.allowed


def test_types_are_coerced_or_refused() -> None:
    p = build_params(Example, {"epsilon": 2, "steps": 3.0, "epsilons": [1, 2]})
    assert p.epsilon == 2.0 and isinstance(p.epsilon, float)
    assert p.steps == 3 and isinstance(p.steps, int)
    assert p.epsilons == [1.0, 2.0]
    with pytest.raises(ConfigError, match="integer"):
        build_params(Example, {"steps": 2.5})
    with pytest.raises(ConfigError, match="number"):
        build_params(Example, {"epsilon": "one"})
    with pytest.raises(ConfigError, match="NaN"):
        build_params(Example, {"epsilon": float("nan")})


def test_assumptions_are_collected() -> None:
    assumed = assumptions_of(build_params(Example, {}))
    assert assumed == {"params.radius": {"value": 0.5, "why": "not stated in the paper"}}


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "privrepro.runner.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_reports_a_bad_value_before_computing(tmp_path: Path) -> None:
    out = _cli(
        "experiment=cl/fig2",
        "params.deltas=[1e-5,2.0]",
        f"paths.experiments_dir={tmp_path}/exp",
        f"paths.results_dir={tmp_path}/res",
        cwd=REPO,
    )
    assert out.returncode == 2
    assert "params.deltas[1] = 2.0: must lie in (0, 1)" in out.stderr
    assert not (tmp_path / "exp").exists()  # nothing computed, nothing written
    assert not (tmp_path / "res").exists()


@dataclass
class Constrained:
    sigma: float = param(1.0, gt=0)
    shift: float = param(0.0)
    radius: float = param(1.0, ge=0, le=math.inf)
    ns: list[int] = param([1, 2], ge=1, unique=True)
    extra: list[float] = param([], min_len=0)
    window: list[float] = param([0.0, 1.0], length=2, increasing=True)
    lower: float = param(0.0)
    upper: float = param(1.0, above="lower")
    flag: bool = param(False)
    name: str = param("x", min_len=1)


@pytest.mark.parametrize(
    ("values", "key", "allowed"),
    [
        # the printed range is the enforced range: (0, inf) refuses inf, an unbounded float too
        ({"sigma": math.inf}, "params.sigma", "must lie in (0, inf)"),
        ({"shift": -math.inf}, "params.shift", "must lie in (-inf, inf)"),
        ({"shift": math.nan}, "params.shift", "must not be NaN"),
        ({"ns": []}, "params.ns", "must be a non-empty list; each item must lie in [1, inf)"),
        ({"ns": [2, 2]}, "params.ns", "must not repeat a value (2 appears twice)"),
        ({"window": [1.0]}, "params.window", "must hold exactly 2 items"),
        ({"window": [1.0, 0.5]}, "params.window", "must increase strictly (0.5 follows 1.0)"),
        ({"lower": 9.0, "upper": 1.0}, "params.upper", "must be greater than params.lower = 9.0"),
        ({"flag": "maybe"}, "params.flag", "must be true or false"),
        ({"flag": "no"}, "params.flag", "must be true or false"),
        ({"name": ""}, "params.name", "must be a non-empty string"),
    ],
)
def test_constraint_kinds(values: dict[str, object], key: str, allowed: str) -> None:
    with pytest.raises(ConfigError) as err:
        build_params(Constrained, values)
    assert err.value.key == key
    assert allowed in str(err.value)


def test_declared_infinity_and_empty_lists_are_accepted() -> None:
    p = build_params(Constrained, {"radius": math.inf, "extra": []})
    assert p.radius == math.inf and p.extra == []
