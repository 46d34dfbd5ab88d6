"""Every out-of-range value of every parameter of every experiment stops before any compute.

Each value is written as a command-line override (Hydra's grammar) of a composed experiment. The
values are the declared constraints' opposites (:mod:`bad_values`): every parameter has at least
one, so every parameter is tried, each kind of constraint once, against the experiment's
effective parameters (the validation ``run_config`` does first: a few milliseconds each);
hypothesis then draws values anywhere out of range and gives them to ``run_config`` itself, as
the ``privrepro`` command does. Each must raise :class:`ConfigError` naming the parameter, and no
unit folder may exist afterwards.
"""

from __future__ import annotations

import copy
import functools
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from omegaconf import DictConfig

from bad_values import bad_value_strategy, bad_values
from privrepro.config.validation import ConfigError, FieldSpec, build_params, field_specs
from privrepro.runner.catalog import list_experiments
from privrepro.runner.plan import compose, effective_params
from privrepro.runner.recipe_config import load_recipe
from privrepro.runner.run import run_config, run_experiment

EXPERIMENTS = list_experiments()
REPO = Path(__file__).resolve().parents[2]


def _outputs(tmp: Path) -> list[str]:
    return [
        f"paths.experiments_dir={tmp / 'exp'}",
        f"paths.results_dir={tmp / 'res'}",
        f"paths.plots_dir={tmp / 'plots'}",
        f"paths.data_dir={tmp / 'data'}",
        "progress=false",
        "device=cpu",
    ]


def _current(params: dict[str, Any], key: str) -> dict[str, Any]:
    """The effective values of the siblings of ``key`` (``params.a.b`` → ``params['a']``)."""
    node: Any = params
    for part in key.split(".")[1:-1]:
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}


def _verdict(call: Any, key: str) -> str | None:
    """``None`` when ``call()`` raises a ConfigError naming ``key``, else what happened."""
    try:
        call()
    except ConfigError as exc:
        named = exc.key == key or exc.key.startswith(f"{key}[")
        return None if named else f"named {exc.key} instead: {exc}"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return "accepted"


@functools.cache
def _parser() -> Any:
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return OverridesParser.create()


def _with_overrides(params: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """``params`` (plain) with ``params.*`` overrides applied as the command line gives them."""
    out = copy.deepcopy(params)
    for ov in _parser().parse_overrides(overrides):
        *parents, leaf = ov.key_or_group.split(".")[1:]
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = ov.value()
    return out


def _refused_by_validation(
    recipe: Any, params: dict[str, Any], overrides: list[str], key: str
) -> str | None:
    merged = _with_overrides(params, overrides)
    return _verdict(lambda: build_params(recipe.params_type, merged, "params"), key)


def _refused_by_the_run(name: str, tmp: Path, overrides: list[str], key: str) -> str | None:
    """The overrides composed by Hydra, as the command line gives them, then run."""
    return _verdict(
        lambda: run_config(compose(name, ["profile=tiny", *_outputs(tmp), *overrides])), key
    )


def _nothing_computed(tmp: Path) -> bool:
    exp = tmp / "exp"
    return not exp.exists() or not any(p.is_dir() for p in exp.rglob("*"))


def _experiment(entry: Any, tmp: Path) -> tuple[DictConfig, Any, list[FieldSpec], dict[str, Any]]:
    cfg = compose(entry.name, ["profile=tiny", *_outputs(tmp)])
    recipe = load_recipe(cfg.figure.recipe)
    return cfg, recipe, field_specs(recipe.params_type), effective_params(cfg)


@pytest.mark.parametrize("entry", EXPERIMENTS, ids=[e.name for e in EXPERIMENTS])
def test_every_parameter_refuses_each_kind_of_bad_value(entry: Any, tmp_path: Path) -> None:
    _, recipe, specs, params = _experiment(entry, tmp_path)
    build_params(recipe.params_type, params, "params")  # the experiment's own values pass
    failures, tried = [], 0
    for spec in specs:
        cases = bad_values(spec, _current(params, spec.key))
        assert cases, f"{spec.key}: no bad value to try"
        for kind, overrides in cases:
            tried += 1
            why = _refused_by_validation(recipe, params, overrides, spec.key)
            if why is not None:
                failures.append(f"{overrides} ({kind}): {why}")
    assert not failures, f"{len(failures)} of {tried} not refused:\n" + "\n".join(failures)


@pytest.mark.parametrize("entry", EXPERIMENTS, ids=[e.name for e in EXPERIMENTS])
def test_hypothesis_draws_out_of_range_values(entry: Any, tmp_path: Path) -> None:
    _, recipe, specs, params = _experiment(entry, tmp_path)

    @settings(
        max_examples=40,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        spec = data.draw(st.sampled_from(specs), label="parameter")
        overrides = data.draw(bad_value_strategy(spec, _current(params, spec.key)), label="value")
        why = _refused_by_validation(recipe, params, overrides, spec.key)
        assert why is None, f"{overrides}: {why}"

    check()
    # and through the run itself, as the command line gives them, for a few parameters
    for spec in specs[:: max(1, len(specs) // 4)]:
        overrides = bad_values(spec, _current(params, spec.key))[0][1]
        why = _refused_by_the_run(entry.name, tmp_path, overrides, spec.key)
        assert why is None, f"{overrides}: {why}"
    assert _nothing_computed(tmp_path)


# -- the issue's list: crashes part-way and silent acceptances, each now one line -----------------

ISSUE_CASES = [
    ("pb/fig1", ["params.sigma=inf"], "params.sigma"),
    ("pb/fig1", ["params.fixed_lower=9", "params.fixed_upper=1"], "params.fixed_upper"),
    ("pb/fig6", ["params.alphas=[]"], "params.alphas"),
    ("pac/ex1", ["params.ns=[]"], "params.ns"),
    ("pac/curves_dimension", ["params.pool_size=100000000"], "params.pool_size"),
    ("pb/fig2", ["params.deltas=[]"], "params.deltas"),
    ("pac/ex1", ["params.mi=inf"], "params.mi"),
    ("pac/ex5", ["params.v_min=2.0", "params.v_max=1.0"], "params.v_max"),
    ("cl/fig2", ["force=no"], "force"),
    ("cl/fig2", ["force=maybe"], "force"),
    ("cl/fig2", ["params.epsilons=[1.0,1.0]"], "params.epsilons"),
    ("cl/fig2", ["paths.experiments_dir=/dev/null/exp"], "paths.experiments_dir"),
    # the last ones past the door: subnormal, overflowing, unresolvable, a special file system
    ("pb/fig7", ["params.epsilon=1e-320"], "params.epsilon"),
    ("pb/fig7", ["params.epsilon=1e-12"], "params.epsilon"),
    ("pb/fig7", ["params.epsilon=800"], "params.epsilon"),
    ("ip/fig3", ["params.n_draws=1e30"], "params.n_draws"),
    ("ip/fig3", ["params.n_draws=100000"], "params.n_draws"),
    ("pb/fig1", ["params.sigma=1e-320"], "params.sigma"),
    ("pb/fig1", ["params.sigma=1e-3"], "params.sigma"),
    ("pb/fig1", ["params.sigma=1e308"], "params.sigma"),
    ("pb/fig4", ["params.samples=1e19"], "params.samples"),
    ("cl/fig2", ["paths.experiments_dir=/proc/x"], "paths.experiments_dir"),
]


@pytest.mark.parametrize(("experiment", "overrides", "key"), ISSUE_CASES)
def test_the_issue_cases_stop_before_compute(
    experiment: str, overrides: list[str], key: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as err:
        run_experiment(experiment, [*_outputs(tmp_path), "profile=tiny", *overrides])
    assert err.value.key == key
    assert _nothing_computed(tmp_path)


def test_the_memory_estimate_is_in_the_message(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        run_experiment(
            "pac/curves_dimension",
            [*_outputs(tmp_path), "profile=tiny", "params.pool_size=100000000"],
        )
    assert "a unit would need about" in str(err.value) and "GiB" in str(err.value)
    # an estimate alone: what fits here passes
    from privrepro.runner.preflight import check_memory

    class Fake:
        def estimate_memory(self, params: Any) -> Any:
            from privrepro.figures.api import MemoryEstimate

            return MemoryEstimate(params, "params.x", params)

    check_memory(Fake(), 10, available=100)
    with pytest.raises(ConfigError, match=r"params.x = 90: a unit would need"):
        check_memory(Fake(), 90, available=100)


def test_data_root_precedence_is_command_line_then_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from privrepro.data.registry import data_root

    monkeypatch.setenv("PRIVREPRO_DATA", str(tmp_path / "env"))
    assert data_root(tmp_path / "cli") == tmp_path / "cli"
    assert data_root(None) == tmp_path / "env"
    monkeypatch.delenv("PRIVREPRO_DATA")
    assert data_root(None) == Path("data")
    # the composed config: the command line wins over the environment, which wins over ./data
    monkeypatch.setenv("PRIVREPRO_DATA", str(tmp_path / "env"))
    assert compose("pb/fig7", [f"paths.data_dir={tmp_path / 'cli'}"]).paths.data_dir == str(
        tmp_path / "cli"
    )
    assert compose("pb/fig7").paths.data_dir == str(tmp_path / "env")


# -- through the command line: one line, exit status 2, nothing written ---------------------------


def _cli(args: list[str], tmp: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "privrepro.runner.cli", *_outputs(tmp)[:4], *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def test_the_command_line_reports_each_in_one_line_with_status_2(tmp_path: Path) -> None:
    adult = "expected file " + str(tmp_path / "missing data" / "data" / "adult" / "adult.data")
    cases = {
        "force": (["experiment=cl/fig2", "force=maybe"], "force = 'maybe': must be true or false"),
        "zero jobs": (["-m", "experiment=cl/fig2", "seed=range(0,0)"], "seed = 'range(0,0)'"),
        "interval": (["-m", "experiment=cl/fig2", "seed=interval(0,1)"], "seed = 'interval(0,1)'"),
        "memory": (
            ["experiment=pac/curves_dimension", "params.pool_size=100000000"],
            "params.pool_size = 100000000: a unit would need about",
        ),
        "path": (
            ["experiment=cl/fig2", "paths.results_dir=/dev/null/res"],
            "paths.results_dir = '/dev/null/res': must be a folder",
        ),
        "missing data": (
            ["experiment=pb/fig7", "profile=tiny", "params.data=uci"],
            adult,
        ),
    }
    procs = {name: _cli(args, tmp_path / name) for name, (args, _) in cases.items()}
    for name, proc in procs.items():
        _, err = proc.communicate(timeout=300)
        lines = [ln for ln in err.splitlines() if ln.startswith("privrepro:")]
        assert proc.returncode == 2, f"{name}: {err[-2000:]}"
        assert len(lines) == 1 and "Traceback" not in err, f"{name}: {err[-2000:]}"
        assert cases[name][1] in lines[0], f"{name}: {lines[0]}"
        if name == "missing data":
            assert "paths.data_dir" in lines[0] and "PRIVREPRO_DATA" in lines[0]
            assert "UCI" in lines[0] or "archive.ics.uci.edu" in lines[0]
        else:
            assert _nothing_computed(tmp_path / name)


def test_make_figures_reports_bad_values_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``make fig-pac-ex1``: the figure refused in one line, status 2, nothing computed."""
    from privrepro.runner.all import main

    code = main(
        ["--target", "pac-ex1", "--profile", "tiny", "--", *_outputs(tmp_path), "params.ns=[]"]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "pac/ex1: configuration error: params.ns = []: must be a non-empty list" in err
    assert "Traceback" not in err
    assert _nothing_computed(tmp_path)


def test_finite_numbers_print_their_enforced_range() -> None:
    """∞ is not in (0, ∞): the message's range is the one enforced."""
    from privrepro.config.validation import build_params
    from privrepro.figures.pac.ex1 import Example1Params

    with pytest.raises(ConfigError, match=r"params.mi = inf: must lie in \(0, inf\)"):
        build_params(Example1Params, {"mi": math.inf})


def test_the_message_names_the_meaningful_range() -> None:
    """Each refusal says what is allowed and why (subnormal, 64-bit, the grid's step)."""
    from privrepro.config.validation import build_params
    from privrepro.figures.pb.fig1 import Fig1Params
    from privrepro.figures.pb.fig7 import Fig7Params

    with pytest.raises(ConfigError, match=r"is subnormal .* must lie in \[1e-06, 700.0\]"):
        build_params(Fig7Params, {"epsilon": 1e-320})
    with pytest.raises(ConfigError, match=r"must lie in \[1e-06, 700.0\]"):
        build_params(Fig7Params, {"epsilon": 710.0})
    with pytest.raises(ConfigError, match=r"params.sigma = 0.001: must be at least .* = 0.0101"):
        build_params(Fig1Params, {"sigma": 1e-3})
    assert build_params(Fig1Params, {"sigma": 0.0102}).sigma == 0.0102  # the edge: one step
    with pytest.raises(ConfigError, match="signed 64-bit integer"):
        build_params(Fig1Params, {"points": 2**63})


def test_io_failures_are_one_line_naming_the_path(tmp_path: Path) -> None:
    """A full disk (here: a file-size limit, whose writes fail the same way, with EFBIG) while
    a unit is written, and an output folder on /proc: one line naming the path, and the store
    left as it was (no build folder, no unit)."""
    import resource

    def limited() -> None:  # every write past 64 KiB fails
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    out = tmp_path / "full"
    fig1 = [sys.executable, "-m", "privrepro.runner.cli", "experiment=pb/fig1", "profile=tiny"]
    proc = subprocess.run(
        [*fig1, *_outputs(out), "params.points=100001"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limited,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("privrepro:")]
    assert (
        line.startswith("privrepro: I/O error: File too large: ") and "Traceback" not in proc.stderr
    )
    assert str(out / "exp" / "pb" / "fig1") in line  # the unit file it was writing
    assert [p.name for p in (out / "exp" / "pb" / "fig1").iterdir()] == []  # as it was

    proc = subprocess.run(
        [*fig1, *_outputs(tmp_path / "proc")[1:4], "paths.experiments_dir=/proc/x"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("privrepro:")]
    assert "paths.experiments_dir = '/proc/x': must be a writable folder" in line
