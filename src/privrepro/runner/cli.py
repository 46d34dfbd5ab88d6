"""``privrepro``: the Hydra command line.

    privrepro experiment=cl/fig2                       # one figure, smoke profile
    privrepro experiment=cl/fig2 profile=paper seed=3  # overrides
    privrepro -m experiment=cl/fig2 params.epsilons=[1.0],[8.0] hydra/launcher=local
    privrepro --help                                   # the experiments and the main options

A configuration error (unknown key, value out of range, a unit too big for the machine, an
unwritable output folder, a multirun of zero jobs) is reported in one line naming the key, the
value and the allowed range, with exit status 2, before anything is computed. A missing or
damaged dataset file is reported the same way: one line naming the file (and what differs), how
to obtain a good copy and what points at the data root, exit status 2. An I/O failure while
writing (a full disk, a special file system) is one line naming the path, exit status 1; the
store is left as it was (a unit's build folder is removed, every file is written atomically).
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

__all__ = ["main"]


def report_run(run: object) -> str:
    """One line per figure, printed and returned: where its table and plot are, and what was
    reused."""
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
    print(line, flush=True)
    return line


def empty_sweep(argv: list[str]) -> ConfigError | None:
    """A ``-m`` multirun whose sweep expands to no job at all (``seed=range(0,0)``)."""
    if not any(a in ("-m", "--multirun") for a in argv):
        return None
    from hydra.core.override_parser.overrides_parser import OverridesParser

    overrides = [a for a in argv if "=" in a and not a.startswith("-")]
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except Exception:
        return None  # Hydra reports its own grammar errors
    for ov in parsed:
        if ov.is_sweep_override() and not list(ov.sweep_string_iterator()):
            return ConfigError(
                ov.key_or_group,
                ov.input_line.split("=", 1)[1] if ov.input_line else None,
                "a multirun sweep must list at least one value (this one makes zero jobs)",
            )
    return None


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
    return report_run(run)


def main() -> None:
    """Entry point of the ``privrepro`` script: help and misspelt names are answered here, in
    one line, before Hydra composes anything (``privrepro.runner.cli_help``)."""
    from privrepro.runner.cli_help import check_arguments, usage, with_profile_from_env

    args = sys.argv[1:]
    if not args or "--help" in args or "-h" in args:
        print(usage())
        sys.exit(0)
    problem = check_arguments(args)
    if problem:
        print(f"privrepro: {problem}", file=sys.stderr)
        sys.exit(2)
    empty = empty_sweep(args)
    if empty is not None:
        print(f"privrepro: configuration error: {empty}", file=sys.stderr)
        sys.exit(2)
    record_command(args)  # as typed: recorded by every unit and table, and the sweep folder
    sys.argv[1:] = with_profile_from_env(args)
    _app()


if __name__ == "__main__":
    main()
