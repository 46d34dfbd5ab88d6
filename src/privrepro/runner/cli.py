"""``privrepro``: the Hydra command line.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

from privrepro.config.validation import ConfigError
from privrepro.data.provenance import DataChangedError
from privrepro.data.registry import MissingDataError
from privrepro.runner.catalog import conf_dir
from privrepro.runner.preflight import error_line
from privrepro.runner.sweeps import invocation, record_command


def report_run(run: object, job: int | None = None) -> str:
    """One line per figure, printed and returned: where its table and plot are, and what was
    reused; printed after ``job <n>:`` for a sweep's job (parallel jobs' lines interleave)."""
    from privrepro.runner.run import FigureRun

    assert isinstance(run, FigureRun)
    plots = ", ".join(str(p) for p in run.plot_paths if p.suffix == ".png") or "no plot"
    held = (
        f" (table: {run.table_rows} rows from {run.table_units} units)"
        if run.table_units > run.computed + run.reused
        else ""
    )
    line = (
        f"{run.paper}/{run.figure}: {len(run.table)} rows -> {run.table_path}{held}; {plots} "
        f"({run.computed} units computed, {run.reused} reused, {run.wall_time_s:.1f} s)"
    )
    print(line if job is None else f"job {job}: {line}", flush=True)
    return line


def empty_sweep(argv: list[str]) -> ConfigError | None:
    """A ``-m`` multirun the basic sweeper cannot enumerate, as a configuration error: a sweep
    of no value (``seed=range(0,0)``), or an ``interval(a,b)`` (tagged or not), which only a
    sampling sweeper (Optuna's, Ax's) can draw from."""
    if not any(a in ("-m", "--multirun") for a in argv):
        return None
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import IntervalSweep

    overrides = [a for a in argv if "=" in a and not a.startswith("-")]
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except Exception:
        return None  # Hydra reports its own grammar errors
    for ov in parsed:
        if not ov.is_sweep_override():
            continue
        given = ov.input_line.split("=", 1)[1] if ov.input_line else None
        if isinstance(ov.value(), IntervalSweep):
            return ConfigError(
                ov.key_or_group,
                given,
                "the basic sweeper enumerates values: list them (a,b,c) or use range(start,stop"
                "[,step]); an interval is drawn from only by a sampling sweeper",
            )
        try:
            values = list(ov.sweep_string_iterator())
        except Exception:  # a glob of config names: Hydra expands it (experiments: see below)
            continue
        if not values:
            return ConfigError(
                ov.key_or_group,
                given,
                "a multirun sweep must list at least one value (this one makes zero jobs)",
            )
    return None


def override_problem(argv: list[str]) -> str | None:
    """Why an override is not Hydra override syntax, in one line (Hydra's own message is several
    lines), naming the digits that are not ASCII where that is why (``seed=１２``)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for arg in (a for a in argv if "=" in a and not a.startswith("-")):
        try:
            parser.parse_overrides([arg])
        except Exception as exc:
            odd = sorted({c for c in arg if c.isdigit() and not c.isascii()})
            if odd:
                ascii_digits = "".join(str(int(c)) for c in odd)
                why = (
                    f"holds the digits {''.join(odd)!r}, which are not ASCII digits "
                    f"(write {ascii_digits})"
                )
            else:
                first = next((ln for ln in str(exc).splitlines() if ln.strip()), "")
                why = f"is not a valid override ({first.strip()[:160]})"
            return f"{arg!r} {why}"
    return None


def sweep_folder_problem(argv: list[str]) -> ConfigError | None:
    """For a multirun (``-m``): a sweep folder that cannot be made (``hydra.sweep.dir`` under
    ``/proc``, ``<experiments>/_sweeps`` a file), as a one-line error naming the key, before
    Hydra starts (its own failure there is a traceback). The folder the sweep goes to is made
    here, as Hydra would make it a moment later."""
    if not any(a in ("-m", "--multirun") for a in argv):
        return None
    values = dict(a.split("=", 1) for a in argv if "=" in a and not a.startswith("-"))
    key, folder = "hydra.sweep.dir", values.get("hydra.sweep.dir")
    if folder is None:
        key = "paths.experiments_dir"
        folder = str(Path(values.get(key, "experiments")) / "_sweeps")
    if "${" in folder:
        return None  # an interpolation: Hydra resolves it
    try:
        Path(folder).expanduser().mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        what = exc.strerror or type(exc).__name__
        return ConfigError(
            key,
            values.get(key, folder),
            f"the sweep folder {folder} cannot be made there ({what}: {exc.filename or folder})",
        )
    return None


def expand_experiment_glob(argv: list[str]) -> list[str]:
    """``experiment=glob(pb/*)`` as the list of the experiments it matches (Hydra's own glob sees
    only the top of a nested group); a glob that matches none is a ``ConfigError``."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.core.override_parser.types import Glob

    from privrepro.runner.catalog import list_experiments

    out = list(argv)
    for i, arg in enumerate(argv):
        if arg.startswith("-") or arg.split("=", 1)[0] != "experiment":
            continue
        try:
            (ov,) = OverridesParser.create().parse_overrides([arg])
        except Exception:
            continue
        glob: object = ov.value()
        if not isinstance(glob, Glob):
            continue
        names = glob.filter([e.name for e in list_experiments()])
        if not names:
            raise ConfigError("experiment", arg.split("=", 1)[1], "matches no experiment")
        out[i] = "experiment=" + ",".join(names)
    return out


_COMPLETION = ("-sc", "--shell-completion")


def complete_experiment(argv: list[str]) -> list[str] | None:
    """Shell completion's answer for a word ``experiment=...`` (the experiments are nested,
    ``paper/figure``, which Hydra's completion does not list); ``None`` for any other query,
    which Hydra answers."""
    import os

    if not any(a.startswith("query=") for a in argv):
        return None
    line = os.environ.get("COMP_LINE", "")
    point = int(os.environ.get("COMP_POINT", len(line)) or len(line))
    words = line[:point].split(" ")
    word = words[-1] if words else ""
    if not word.startswith("experiment="):
        return None
    from privrepro.runner.catalog import list_experiments

    return sorted(
        f"experiment={e.name}"
        for e in list_experiments()
        if f"experiment={e.name}".startswith(word)
    )


@hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")
def _app(cfg: DictConfig) -> str:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from privrepro.runner.run import run_config

    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    try:
        run = run_config(cfg, multirun=multirun, repo=Path.cwd(), command=invocation(hc, multirun))
    except (ConfigError, MissingDataError) as exc:
        print(f"privrepro: {error_line(exc)}", file=sys.stderr)
        sys.exit(2)
    except DataChangedError as exc:  # the data root edited during the run: run again
        print(f"privrepro: {error_line(exc)}", file=sys.stderr)
        sys.exit(1)
    except OSError as exc:  # a full disk, a read-only or special file system: the path named
        line = error_line(exc)
        if line is None:
            raise
        print(f"privrepro: {line}", file=sys.stderr)
        sys.exit(1)
    return report_run(run, int(hc.job.num) if multirun else None)


def _refusal(args: list[str]) -> tuple[list[str], str | None]:
    """The arguments with any experiment glob expanded, and why they are refused (one line), or
    ``None``: a glob matching nothing, a misspelt name, a bad override, an empty sweep."""
    from privrepro.runner.cli_help import check_arguments

    try:
        args = expand_experiment_glob(args)
    except ConfigError as exc:
        return args, f"configuration error: {exc}"
    problem = check_arguments(args)
    if problem:
        return args, problem
    for check in (override_problem, empty_sweep, sweep_folder_problem):
        bad = check(args)
        if bad is not None:
            return args, f"configuration error: {bad}"
    return args, None


def main() -> None:
    """Entry point of the ``privrepro`` script: help and misspelt names are answered here, in
    one line, before Hydra composes anything (``privrepro.runner.cli_help``)."""
    from privrepro.runner.cli_help import usage, with_profile_from_env

    args = sys.argv[1:]
    if any(a in _COMPLETION for a in args):  # Hydra's shell completion, no experiment needed
        answer = complete_experiment(args)
        if answer is not None:
            print(" ".join(answer))
            sys.exit(0)
        _app()
        return
    if not args or "--help" in args or "-h" in args:
        print(usage())
        sys.exit(0)
    typed = list(args)
    args, problem = _refusal(args)
    if problem is not None:
        print(f"privrepro: {problem}", file=sys.stderr)
        sys.exit(2)
    record_command(typed)  # as typed: recorded by every unit and table, and the sweep folder
    sys.argv[1:] = with_profile_from_env(args)
    _app()


if __name__ == "__main__":
    main()
