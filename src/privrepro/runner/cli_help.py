"""What ``privrepro`` says before Hydra runs: the help with the experiment catalogue, and one-line
errors with the closest valid names for a misspelt experiment or key.

    privrepro --help                              # the catalogue and the main options
    privrepro experiment=cl/fgi2                  # unknown experiment 'cl/fgi2'; closest: cl/fig2
    privrepro experiment=cl/fig2 params.k_maxx=5  # unknown key params.k_maxx; ... closest: k_max
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from typing import Any

from privrepro.runner.catalog import list_experiments

#: the profile a command runs under when it names none (as ``PROFILE=`` does for make)
PROFILE_ENV = "PRIVREPRO_PROFILE"

#: config groups chosen with ``group=option`` (not keys of the composed config)
_GROUPS = ("experiment", "profile", "tracking")

_OPTIONS = """\
main options (key=value, Hydra syntax):
  experiment=<paper>/<figure>  the figure or table to run (list below)
  profile=smoke|paper|tiny     smoke (default): CPU, bundled or generated data, reduced grids;
                               paper: the papers' grids and data; tiny: the tests' grids
  seed=N                       root seed of every random stream (default 0)
  params.<key>=<value>         any parameter of the figure (`--cfg job` prints them all)
  force=true                   recompute units the store already holds
  tracking=mlflow              log units (params, per-step metrics), table and plot to MLflow
  device=auto|cpu|cuda         auto: CUDA when present
  threads=auto|N               torch/BLAS threads; auto: the CPUs this job may use (affinity,
                               cgroup quota, OMP_NUM_THREADS), shared by a multirun's workers,
                               no more than other work leaves free; N: 1..1024
  progress=false               no progress bars (they are off anyway when not on a terminal)
  paths.data_dir=DIR           the data root (default: $PRIVREPRO_DATA, else ./data)
  paths.experiments_dir=DIR    the run store (put it on a shared file system for a cluster)
  -m ... key=a,b               a sweep: one job per value; hydra/launcher=local runs them in
                               parallel here, hydra/launcher=slurm on a SLURM cluster
                               (each sweep: its own folder under <experiments>/_sweeps/)
  -m experiment=a,b            several figures in one sweep ("experiment=glob(pb/*)" too)
  -m ... worker=0,1            two workers on the same units, sharing each tuning study
                               (each trial draws its own start-up point)
  -sc install=bash             shell completion (Hydra's), experiment names included
  --cfg job                    print the composed configuration and exit
  --hydra-help                 Hydra's own flags
environment: PRIVREPRO_DATA (data root), PRIVREPRO_PROFILE (profile when none is given)"""


def usage() -> str:
    """``privrepro --help``: usage, main options and the experiments with their make targets."""
    entries = list_experiments()
    width = max((len(e.name) for e in entries), default=10)
    mwidth = max((len(e.make_target) for e in entries), default=10)
    lines = [
        "privrepro — reproduce the figures and tables of four privacy papers",
        "",
        "usage: privrepro experiment=<paper>/<figure> [key=value ...]",
        "       privrepro -m experiment=<paper>/<figure> key=v1,v2 [hydra/launcher=local]",
        "",
        _OPTIONS,
        "",
        f"experiments ({len(entries)}; `make <target>` runs one in the smoke profile):",
    ]
    lines += [f"  {e.name:<{width}}  {e.make_target:<{mwidth}}  {e.description}" for e in entries]
    return "\n".join(lines)


def closest(word: str, choices: Sequence[str], n: int = 3) -> list[str]:
    """The valid names nearest to ``word`` (difflib's ratio, best first)."""
    return difflib.get_close_matches(word, list(choices), n=n, cutoff=0.5)


def _suggest(word: str, choices: Sequence[str]) -> str:
    near = closest(word, choices)
    return f"; closest: {', '.join(near)}" if near else ""


def _parse(args: Sequence[str]) -> list[Any]:
    from hydra.core.override_parser.overrides_parser import OverridesParser

    return list(OverridesParser.create().parse_overrides([a for a in args if "=" in a]))


def _values(override: Any) -> list[str]:
    """The values an override sets (each value of a simple sweep ``a,b``)."""
    if override.is_sweep_override():
        try:
            return [str(v) for v in override.sweep_string_iterator()]
        except Exception:  # a range or glob sweep: left to Hydra
            return []
    return [str(override.value())]


def _unknown_key(key: str, value: str, cfg: Any) -> str | None:
    from omegaconf import DictConfig, OmegaConf

    parts = key.split(".")
    node = cfg
    for depth, part in enumerate(parts):
        if not isinstance(node, DictConfig) or part not in node:
            where = ".".join(parts[:depth])
            valid = sorted(str(k) for k in node.keys()) if isinstance(node, DictConfig) else []
            listing = (
                f"; valid keys of {where or 'the config'}: {', '.join(valid)}" if valid else ""
            )
            return f"unknown key {key} (= {value}){_suggest(part, valid)}{listing}"
        node = OmegaConf.select(node, part) if isinstance(node, DictConfig) else None
    return None


def check_arguments(args: Sequence[str]) -> str | None:
    """A one-line error for arguments Hydra would reject with a traceback or a misleading hint:
    no experiment, an unknown experiment, an unknown key. ``None`` when they look valid (Hydra
    still checks everything else)."""
    args = [a for a in args if not a.startswith("-")]
    try:
        overrides = _parse(args)
    except Exception:  # malformed: Hydra's own message says where
        return None
    names = [e.name for e in list_experiments()]
    experiments: list[str] = []
    keys: list[tuple[str, str]] = []
    first_job: list[str] = []  # each override with its first value: the first job of a sweep
    for ov in overrides:
        key = ov.key_or_group
        if ov.is_delete() or ov.is_add() or key.startswith("hydra") or "/" in key:
            continue
        if key != "experiment" and ov.input_line:
            first = _first_value(ov)
            if first is not None:
                first_job.append(first)
        if key == "experiment":
            for value in _values(ov):
                if value not in names:
                    return (
                        f"unknown experiment '{value}'{_suggest(value, names)} "
                        "(privrepro --help lists them)"
                    )
                experiments.append(value)
        elif key not in _GROUPS:
            keys.append((key, ov.input_line.split("=", 1)[1] if ov.input_line else ""))
    if not experiments:
        return "no experiment given: add experiment=<paper>/<figure> (privrepro --help lists them)"
    if not first_job:
        return None
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from privrepro.runner.plan import compose

    for experiment in experiments:
        try:  # the first job as Hydra will compose it: one composition when all is well
            compose(experiment, first_job)
            continue
        except (HydraException, OmegaConfBaseException) as exc:
            failure = exc
        cfg = compose(experiment)  # the defaults: which keys exist, and their shapes
        for key, value in keys:
            problem = _unknown_key(key, value, cfg)
            if problem:
                return f"{problem} (experiment {experiment})"
        return f"{_composition_error(failure, first_job, cfg)} (experiment {experiment})"
    return None


def _first_value(override: Any) -> str | None:
    """``key=value`` of the override's first job (itself when it is not a sweep; ``None`` for a
    sweep of no value, which :func:`~privrepro.runner.cli.empty_sweep` reports)."""
    if not override.is_sweep_override():
        return str(override.input_line)
    try:
        first = next(iter(override.sweep_string_iterator()), None)
    except Exception:  # a glob sweep: Hydra expands it
        return None
    return None if first is None else f"{override.get_key_element()}={first}"


def _composition_error(failure: Exception, first_job: list[str], cfg: Any) -> str:
    """Hydra's refusal to merge a value into the config (a mapping given for a list, an unknown
    profile, ...), as one line naming the key, the value given and the shape of the default."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    cause = failure.__cause__ if isinstance(failure.__cause__, OmegaConfBaseException) else failure
    key = str(getattr(cause, "full_key", "") or "")
    given = next((o for o in first_job if key and o.split("=", 1)[0] == key), None)
    reason = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
    if given is None:
        return f"configuration error: {reason}{_available_options(str(cause))}"
    default = OmegaConf.select(cfg, key, default=None)
    if OmegaConf.is_config(default):
        default = OmegaConf.to_container(default)
    return (
        f"configuration error: {key} = {given.split('=', 1)[1]}: {reason} "
        f"(its default: {default!r})"
    )


def _available_options(message: str) -> str:
    """``; options: a, b, c`` from Hydra's 'Available options in ...' listing (else empty)."""
    lines = message.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith("Available options")), None)
    if at is None:
        return ""
    options = []
    for line in lines[at + 1 :]:
        if not line.startswith(("\t", " ")) or not line.strip():
            break
        options.append(line.strip())
    return f"; options: {', '.join(options)}" if options else ""
    return None


def with_profile_from_env(args: list[str]) -> list[str]:
    """``args`` plus ``profile=$PRIVREPRO_PROFILE`` when that is set and no profile is given."""
    profile = os.environ.get(PROFILE_ENV, "").strip()
    given = any(a.split("=", 1)[0].lstrip("+~") == "profile" for a in args)
    if not profile or given:
        return args
    # beside the other overrides: Hydra's parser takes them as one run of positionals
    at = next((i for i, a in enumerate(args) if "=" in a and not a.startswith("-")), len(args))
    return [*args[:at], f"profile={profile}", *args[at:]]
