"""The config Hydra composes is the config that runs.

Every experiment × profile composes to the full parameter set of its recipe; each value is
written once (no file restates the value it merges over); every config file is read by some
composition; the profile, the shared per-profile files and the command line apply in that order;
and ``privrepro ... --cfg job`` prints the parameters the run records.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hydra import initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from hydra.types import RunMode
from omegaconf import OmegaConf
from recipes_for_tests import scratch_paths

from privrepro.config.validation import ConfigError, build_params
from privrepro.runner.catalog import conf_dir, list_experiments
from privrepro.runner.plan import compose, effective_params
from privrepro.runner.recipe_config import load_recipe, params_defaults, recipe_node

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXPERIMENTS = list_experiments()
PROFILES = sorted(p.stem for p in (conf_dir() / "profile").glob("*.yaml"))
CASES = [(e.name, p) for e in EXPERIMENTS for p in PROFILES]


def _ids(cases: list[tuple[str, str]]) -> list[str]:
    return [f"{e}-{p}" for e, p in cases]


@contextmanager
def _loader(conf: Path) -> Iterator[Any]:
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        yield GlobalHydra.instance().config_loader()


def _merge_chain(loader: Any, overrides: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """The configs Hydra merges, in order, each with what it writes under ``params``."""
    chain = []
    defaults = loader.compute_defaults_list("config", overrides, RunMode.RUN).defaults
    for entry in defaults:
        path = entry.config_path
        if path is None or path.startswith("hydra/"):
            continue
        if path.startswith("recipe/"):  # the privrepro:// source (on hydra.searchpath)
            node: Any = recipe_node(path[len("recipe/") :])
        else:
            source = next(s for s in loader.get_sources() if s.is_config(path))
            node = OmegaConf.to_container(source.load_config(path).config)
        assert isinstance(node, dict)
        node.pop("defaults", None)
        for part in reversed([p for p in (entry.package or "").split(".") if p]):
            node = {part: node}
        chain.append((path, node.get("params") or {}))
    return chain


def _restated(written: Any, before: Any, key: str) -> list[str]:
    """Leaves of ``written`` equal to what they merge over (a bool is not a number here)."""
    if isinstance(written, dict) and isinstance(before, dict):
        return [
            r
            for k, v in written.items()
            if k in before
            for r in _restated(v, before[k], f"{key}.{k}")
        ]
    same = written == before and isinstance(written, bool) == isinstance(before, bool)
    return [f"{key} = {written!r}"] if same else []


def test_there_are_experiments_and_profiles() -> None:
    """The profiles the runner accepts are the files of conf/profile/."""
    from privrepro.runner import preflight

    assert any(e.name == "cl/fig2" for e in EXPERIMENTS)
    assert PROFILES == sorted(preflight.PROFILES) == ["paper", "smoke", "tiny"]


@pytest.mark.parametrize(("experiment", "profile"), CASES, ids=_ids(CASES))
def test_every_parameter_is_in_the_composed_config(experiment: str, profile: str) -> None:
    """--cfg job lists every field of the recipe's dataclass, each valid for that profile."""
    cfg = compose(experiment, [f"profile={profile}"])
    assert cfg.profile.name == profile
    recipe = load_recipe(cfg.figure.recipe)
    fields = {f.name for f in dataclasses.fields(recipe.params_type)}
    assert set(cfg.params) == fields
    built = build_params(recipe.params_type, effective_params(cfg))
    assert recipe.units(built), f"{experiment} under {profile} has no run units"


@pytest.mark.parametrize(("experiment", "profile"), CASES, ids=_ids(CASES))
def test_each_value_is_written_once(experiment: str, profile: str) -> None:
    """The recipe's dataclass holds the defaults; a file writes only values it changes."""
    with _loader(conf_dir()) as loader:
        chain = _merge_chain(loader, [f"experiment={experiment}", f"profile={profile}"])
    names = [path for path, _ in chain]
    first = next(i for i, n in enumerate(names) if n.startswith("recipe/"))
    assert names[first + 1] == f"experiment/{experiment}", names  # recipe, then experiment
    before: dict[str, Any] = {}
    problems = []
    for path, written in chain[first:]:
        if before:
            unknown = sorted(set(written) - set(before))
            problems += [f"{path}: params.{k} is not a parameter" for k in unknown]
            problems += [f"{path}: {r} restates it" for r in _restated(written, before, "params")]
        before = OmegaConf.to_container(OmegaConf.merge(before, written))  # type: ignore[assignment]
    assert not problems, "\n".join(problems)


def test_every_config_file_is_read() -> None:
    """No file under conf/ that no composition loads (launchers are picked on the command line,
    so is a tracking backend other than the default)."""
    loaded = {"config"}
    with _loader(conf_dir()) as loader:
        for i, (experiment, profile) in enumerate(CASES):
            overrides = [f"experiment={experiment}", f"profile={profile}"]
            overrides += ["tracking=mlflow"] if i == 0 else []
            defaults = loader.compute_defaults_list("config", overrides, RunMode.RUN).defaults
            loaded |= {d.config_path for d in defaults if d.config_path}
    files = {
        str(p.relative_to(conf_dir()).with_suffix(""))
        for p in conf_dir().rglob("*.yaml")
        if not p.relative_to(conf_dir()).as_posix().startswith("hydra/launcher/")
    }
    assert sorted(files - loaded) == []


def test_profile_files_name_an_experiment_and_a_profile() -> None:
    """conf/params/<paper>/<figure>/<profile>.yaml: a typo in a folder would be silently skipped."""
    names = {e.name for e in EXPERIMENTS}
    for path in (conf_dir() / "params").rglob("*.yaml"):
        rel = path.relative_to(conf_dir() / "params")
        assert path.stem in PROFILES, f"{rel}: no profile {path.stem}"
        owner = rel.parent.as_posix()
        if owner not in names:  # a file shared by several experiments: one must list it
            users = [e for e in EXPERIMENTS if f"/params/{owner}@params" in e.path.read_text()]
            assert users, f"conf/params/{rel}: no experiment {owner} and none lists it"


def test_profile_names_match_their_files() -> None:
    for path in (conf_dir() / "profile").glob("*.yaml"):
        assert yaml.safe_load(path.read_text())["name"] == path.stem


def test_recipe_defaults_are_the_dataclass_defaults() -> None:
    for entry in EXPERIMENTS:
        cfg = compose(entry.name, ["profile=tiny"])
        recipe = load_recipe(cfg.figure.recipe)
        defaults = params_defaults(recipe.params_type)
        assert build_params(recipe.params_type, defaults) == recipe.params_type()


def test_a_field_without_default_must_be_set() -> None:
    @dataclasses.dataclass
    class Needs:
        x: int
        y: tuple[float, ...] = (1.0, 2.0)

    assert params_defaults(Needs) == {"x": "???", "y": [1.0, 2.0]}


# ---------------------------------------------------------------- precedence


def test_shared_profile_file_then_figure_file_then_command_line() -> None:
    """cl PEFT: peft_common/<profile> < the figure's own profile file < params.* on the line."""
    tiny = compose("cl/fig5_peft", ["profile=tiny"]).params
    assert tiny.train.epochs == 1.0 and tiny.train.accountant == "rdp"  # peft_common/tiny
    assert tiny.nb_tasks == 2  # params/cl/fig5_peft/tiny
    smoke = compose("cl/fig5_peft", ["profile=smoke"]).params
    assert smoke.train.epochs == 4.0  # the figure's smoke file beats peft_common/smoke (10.0)
    assert compose("cl/fig4_peft", ["profile=smoke"]).params.train.epochs == 10.0
    line = compose("cl/fig5_peft", ["profile=smoke", "params.train.epochs=2.0"]).params
    assert line.train.epochs == 2.0 and line.nb_tasks == 5


def test_profile_shrinks_a_grid_and_the_command_line_wins() -> None:
    paper = compose("pb/fig2", ["profile=paper"]).params
    tiny = compose("pb/fig2", ["profile=tiny"]).params
    assert len(tiny.sizes) < len(paper.sizes)
    assert list(paper.accountants) == [
        "paper",
        "exact",
        "sound",
        "best",
    ]  # params/pb/fig2/paper.yaml
    line = compose("pb/fig2", ["profile=tiny", "params.sizes=[12.0]", "params.tol=0.001"]).params
    assert list(line.sizes) == [12.0] and line.tol == 0.001
    assert line.exact_pairs == tiny.exact_pairs  # the rest of the profile still applies


def test_a_bad_value_is_still_a_one_line_config_error() -> None:
    """The composed node is plain: type and range errors come from build_params, not Hydra."""
    cfg = compose("pb/fig2", ["profile=tiny", "params.tol=abc"])
    recipe = load_recipe(cfg.figure.recipe)
    with pytest.raises(ConfigError, match=r"^params\.tol = 'abc': must be a number"):
        build_params(recipe.params_type, effective_params(cfg))


def _cli(args: list[str], conf: Path | None = None, timeout: int = 240) -> str:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    if conf is not None:
        env["PRIVREPRO_CONF"] = str(conf)
    out = subprocess.run(
        [sys.executable, "-m", "privrepro.runner.cli", *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def _paths(tmp: Path) -> list[str]:
    return scratch_paths(tmp, "plot=false")


def _recorded_units(store: Path) -> list[dict[str, Any]]:
    units = [d for d in sorted(store.iterdir()) if d.is_dir() and not d.name.startswith(".")]
    return [json.loads((d / "config.json").read_text()) for d in units]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("experiment", "extra"),
    [
        ("test/noise", ["params.n_units=3"]),
        ("pb/fig2", ["params.tol=0.001", "params.cases=[fixed]"]),
    ],
    ids=["test-noise", "pb-fig2"],
)
def test_cfg_job_prints_what_the_run_records(
    experiment: str, extra: list[str], tmp_path: Path, conf_root: Path
) -> None:
    """`privrepro ... --cfg job` and the run of the same command line: same params, same units."""
    args = [f"experiment={experiment}", "profile=tiny", *extra, *_paths(tmp_path)]
    printed = yaml.safe_load(_cli([*args, "--cfg", "job"], conf_root))
    _cli(args, conf_root)
    paper, figure = experiment.split("/")
    meta = json.loads((tmp_path / "res" / paper / f"{figure}.meta.json").read_text())
    recipe = load_recipe(printed["figure"]["recipe"])
    built = build_params(recipe.params_type, printed["params"])
    assert meta["params"] == json.loads(json.dumps(dataclasses.asdict(built)))
    assert meta["profile"] == printed["profile"]["name"] == "tiny"
    units = _recorded_units(tmp_path / "exp" / paper / figure)
    expected = json.loads(json.dumps(recipe.units(built), default=str))
    assert sorted(json.dumps(u["unit"], sort_keys=True) for u in units) == sorted(
        json.dumps(u, sort_keys=True) for u in expected
    )
    assert {u["recipe"] for u in units} == {printed["figure"]["recipe"]}


@pytest.mark.slow
def test_multirun_sweeps_profiles_and_params_through_the_launcher(
    tmp_path: Path, conf_root: Path
) -> None:
    """-m over profile= and params.*: each job composes its own profile; the line beats it."""
    base = ["experiment=test/noise", "params.n_units=2", *_paths(tmp_path)]
    _cli(["-m", *base, "profile=tiny,smoke", "hydra/launcher=local"], conf_root)
    _cli(["-m", *base, "profile=tiny", "params.draws=5,6"], conf_root)
    units = _recorded_units(tmp_path / "exp" / "test" / "noise")
    got = sorted((u["profile"], u["unit"]["draws"], u["unit"]["i"]) for u in units)
    expected = [("smoke", 1000, i) for i in range(2)]
    expected += [("tiny", d, i) for d in (5, 6, 100) for i in range(2)]
    assert got == sorted(expected)
