"""``privrepro`` on first contact: help with the catalogue, one-line errors with the closest
valid names (never Hydra's traceback, search path or ``+key`` hint)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from privrepro.runner.catalog import list_experiments
from privrepro.runner.cli_help import check_arguments, closest, with_profile_from_env


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "privrepro.runner.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


@pytest.mark.parametrize("args", [["--help"], [], ["-h"]])
def test_help_and_no_arguments_print_the_catalogue_and_main_options(args: list[str]) -> None:
    out = _cli(*args)
    assert out.returncode == 0 and not out.stderr
    for entry in list_experiments():  # every experiment, with its make target
        assert f"{entry.name} " in out.stdout and entry.make_target in out.stdout
    for option in ("experiment=", "profile=", "seed=", "params.", "hydra/launcher=", "--cfg job"):
        assert option in out.stdout


def test_misspelt_experiment_gets_the_closest_names_in_one_line() -> None:
    out = _cli("experiment=cl/fgi2")
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert "unknown experiment 'cl/fgi2'" in line and "closest: cl/fig2" in line
    assert "search path" not in out.stderr.lower()


def test_unknown_key_names_it_and_lists_the_valid_keys_without_plus_hint() -> None:
    out = _cli("experiment=cl/fig2", "params.k_maxx=5")
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert "unknown key params.k_maxx (= 5)" in line and "closest: k_max" in line
    assert "valid keys of params: deltas, epsilons, k_max" in line
    assert "+params" not in out.stderr


def test_sweep_values_and_missing_experiment_are_checked() -> None:
    assert "pb/fig9" in (check_arguments(["-m", "experiment=cl/fig2,pb/fig9"]) or "")
    assert "no experiment given" in (check_arguments(["seed=3"]) or "")
    assert check_arguments(["experiment=cl/fig2", "seed=3", "hydra/launcher=local"]) is None
    assert check_arguments(["experiment=cl/fig2", "+extra=1", "hydra.launcher.n_jobs=2"]) is None
    assert closest("fgi2", ["fig2", "fig3", "ex1"])[0] == "fig2"


def test_profile_from_the_environment_unless_one_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRIVREPRO_PROFILE", "tiny")
    assert with_profile_from_env(["-m", "experiment=cl/fig2"]) == [
        "-m",
        "profile=tiny",
        "experiment=cl/fig2",
    ]
    assert with_profile_from_env(["experiment=cl/fig2", "profile=paper"]) == [
        "experiment=cl/fig2",
        "profile=paper",
    ]
    out = _cli("experiment=cl/fig2", "--cfg", "job", PRIVREPRO_PROFILE="tiny")
    assert out.returncode == 0 and "name: tiny" in out.stdout


@pytest.mark.parametrize(
    ("override", "names"),
    [
        # a mapping where the config holds a list: Hydra's merge refuses it (the key, the value
        # given and the default's shape in one line, not Hydra's five lines and exit status 1)
        # (the default shown is cl Fig. 2's epsilons on the default smoke profile, figures/cl/fig2.py)
        ("params.epsilons={a:1}", ["params.epsilons = {a:1}", "[0.1, 0.5, 1.0, 2.0, 4.0, 8.0]"]),
        # an unknown option of a config group: the options are listed
        ("profile=bogus", ["profile/bogus", "paper, smoke, tiny"]),
        # the first job of a sweep is composed like a single run
        ("params.k_max=1,{a:1}", []),
    ],
)
def test_values_hydra_cannot_merge_are_one_line_with_status_2(
    override: str, names: list[str]
) -> None:
    problem = check_arguments(["experiment=cl/fig2", override])
    if not names:
        assert problem is None
        return
    assert problem is not None and "\n" not in problem
    for name in names:
        assert name in problem
    out = _cli("experiment=cl/fig2", override)
    assert out.returncode == 2
    (line,) = out.stderr.strip().splitlines()
    assert line == f"privrepro: {problem}"


def test_sweeps_the_basic_sweeper_cannot_enumerate_are_one_line_and_a_glob_is_expanded() -> None:
    from privrepro.config import ConfigError
    from privrepro.runner.cli import empty_sweep, expand_experiment_glob

    for value in ("interval(0,1)", "tag(a,interval(0,1))"):
        problem = empty_sweep(["-m", "experiment=cl/fig2", f"seed={value}"])
        assert problem is not None and "seed" in str(problem) and value in str(problem)
        assert "range(start,stop" in str(problem)
    assert empty_sweep(["-m", "experiment=cl/fig2", "seed=tag(a,range(0,2))"]) is None
    assert empty_sweep(["experiment=cl/fig2", "seed=interval(0,1)"]) is None  # not a multirun
    pb = sorted(e.name for e in list_experiments() if e.name.startswith("pb/"))
    (expanded,) = expand_experiment_glob(["experiment=glob(pb/*)"])
    assert expanded == "experiment=" + ",".join(pb)
    assert expand_experiment_glob(["-m", "experiment=cl/fig2"]) == ["-m", "experiment=cl/fig2"]
    with pytest.raises(ConfigError, match="matches no experiment"):
        expand_experiment_glob(["experiment=glob(zz/*)"])


def test_shell_completion_installs_without_an_experiment_and_lists_experiments() -> None:
    out = _cli("-sc", "install=bash")
    assert out.returncode == 0, out.stderr
    assert "complete -o nospace" in out.stdout and "no experiment given" not in out.stderr
    out = _cli("-sc", "query=bash", COMP_LINE="privrepro experiment=pb/fig")
    pb = sorted(f"experiment={e.name}" for e in list_experiments() if e.name.startswith("pb/fig"))
    assert out.returncode == 0 and out.stdout.split() == pb
    out = _cli("-sc", "query=bash", COMP_LINE="privrepro experiment=pb/fig1 prof")
    assert out.returncode == 0 and "profile=" in out.stdout.split()  # Hydra's own answer
