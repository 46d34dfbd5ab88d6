"""Run many figures in one process: ``make figures`` and ``make fig-<paper>-<id>``.

    python -m privrepro.runner.all                       # every experiment, smoke profile
    python -m privrepro.runner.all --target cl-2         # cl/fig2 (and cl/fig2_*)
    python -m privrepro.runner.all --paper pb --profile paper -- seed=1

Every figure runs even when one fails (what was computed stays in the store); the failures are
listed at the end. A configuration error or a missing dataset file is one line per figure; the
exit status is 2 when every failure was of that kind, 1 when any other error occurred.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback

from privrepro.commands import command_parser, quiet_console_logging
from privrepro.config.validation import ConfigError
from privrepro.data.registry import MissingDataError
from privrepro.runner.catalog import list_experiments, resolve_target
from privrepro.runner.cli import report_run
from privrepro.runner.preflight import error_line
from privrepro.runner.run import run_experiment


def _parser() -> argparse.ArgumentParser:
    parser = command_parser("privrepro-all", __doc__)
    parser.add_argument(
        "--target",
        action="append",
        default=[],
        help="a make target id such as cl-2 or pac-ex1 (repeatable)",
    )
    parser.add_argument("--paper", action="append", default=[], help="only this paper (repeatable)")
    parser.add_argument("--profile", default="smoke", help="smoke (default), paper or tiny")
    parser.add_argument("--list", action="store_true", help="list the experiments and exit")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides for every figure")
    return parser


def _run_one(name: str, overrides: list[str]) -> tuple[str, bool] | None:
    """Run one experiment: ``None`` when it ran, else why not and whether that is more than a
    configuration error or a missing dataset file (said in one line)."""
    try:
        report_run(run_experiment(name, overrides))
    except (ConfigError, MissingDataError) as exc:
        print(f"{name}: {error_line(exc)}", file=sys.stderr)
        return str(exc), False
    except OSError as exc:  # an I/O failure naming its path: one line
        line = error_line(exc)
        if line is None:
            traceback.print_exc()
            line = f"{type(exc).__name__}: {exc}"
        print(f"{name}: {line}", file=sys.stderr)
        return line, True
    except Exception as exc:  # keep going: other figures are independent
        traceback.print_exc()
        return f"{type(exc).__name__}: {exc}", True
    return None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    quiet_console_logging()
    if args.target:
        entries = [e for t in args.target for e in resolve_target(t)]
    else:
        entries = [e for e in list_experiments() if not args.paper or e.paper in args.paper]
    if args.list:
        for e in entries:
            print(f"{e.make_target:<22} experiment={e.name:<22} {e.description}")
        return 0
    t0 = time.perf_counter()
    overrides = [f"profile={args.profile}", *args.overrides]
    failures = [(e.name, f) for e in entries if (f := _run_one(e.name, overrides)) is not None]
    print(
        f"{len(entries) - len(failures)}/{len(entries)} figures done in "
        f"{time.perf_counter() - t0:.1f} s (profile={args.profile})"
    )
    for name, (why, _) in failures:
        print(f"FAILED {name}: {why}", file=sys.stderr)
    return 1 if any(other for _, (_, other) in failures) else (2 if failures else 0)


if __name__ == "__main__":
    sys.exit(main())
