"""``privrepro``: the Hydra command line.

    privrepro experiment=cl/fig2                       # one figure, smoke profile
    privrepro experiment=cl/fig2 profile=paper seed=3  # overrides
    privrepro -m experiment=cl/fig2 params.epsilons=[1.0],[8.0] hydra/launcher=local
    privrepro --help                                   # the experiments and the main options

A configuration error (unknown key, value out of range) is reported in one line naming the key,
the value and the allowed range, with exit status 2, before anything is computed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

from privrepro.config.validation import ConfigError
from privrepro.runner.catalog import conf_dir

__all__ = ["main"]


def report_run(run: object) -> None:
    """One line per figure: where its table and plot are, and what was reused."""
    from privrepro.runner.run import FigureRun

    assert isinstance(run, FigureRun)
    plots = ", ".join(str(p) for p in run.plot_paths if p.suffix == ".png") or "no plot"
    print(
        f"{run.paper}/{run.figure}: {len(run.table)} rows -> {run.table_path}; {plots} "
        f"({run.computed} units computed, {run.reused} reused, {run.wall_time_s:.1f} s)"
    )


@hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")
def _app(cfg: DictConfig) -> None:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    from privrepro.runner.run import run_config

    hc = HydraConfig.get()
    try:
        run = run_config(
            cfg,
            overrides=list(hc.overrides.task),
            multirun=hc.mode == RunMode.MULTIRUN,
            repo=Path.cwd(),
        )
    except ConfigError as exc:
        print(f"privrepro: configuration error: {exc}", file=sys.stderr)
        sys.exit(2)
    report_run(run)


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
    sys.argv[1:] = with_profile_from_env(args)
    _app()


if __name__ == "__main__":
    main()
