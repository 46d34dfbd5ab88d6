"""Run many figures in one process: ``make figures`` and ``make fig-<paper>-<id>``.

    python -m privrepro.runner.all                       # every experiment, smoke profile
    python -m privrepro.runner.all --target cl-2         # cl/fig2 (and cl/fig2_*)
    python -m privrepro.runner.all --paper pb --profile paper -- seed=1

Every figure runs even when one fails (what was computed stays in the store); the failures are
listed at the end. A configuration error or a missing dataset file is one line per figure; the
exit status is 2 when every failure was of that kind, 1 when any other error occurred.
"""

from __future__ import annotations

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


def main(argv: list[str] | None = None) -> int:
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
    args = parser.parse_args(argv)
    quiet_console_logging()

    if args.target:
        entries = [e for t in args.target for e in resolve_target(t)]
    else:
        entries = [e for e in list_experiments() if not args.paper or e.paper in args.paper]
    if args.list:
        for e in entries:
            print(f"{e.make_target:<22} experiment={e.name:<22} {e.description}")
        return 0

    failures: list[tuple[str, str]] = []
    other_errors = 0
    t0 = time.perf_counter()
    for entry in entries:
        try:
            run = run_experiment(entry.name, [f"profile={args.profile}", *args.overrides])
            report_run(run)
        except (ConfigError, MissingDataError) as exc:
            print(f"{entry.name}: {error_line(exc)}", file=sys.stderr)
            failures.append((entry.name, str(exc)))
        except OSError as exc:  # an I/O failure naming its path: one line
            line = error_line(exc)
            if line is None:
                traceback.print_exc()
                line = f"{type(exc).__name__}: {exc}"
            print(f"{entry.name}: {line}", file=sys.stderr)
            other_errors += 1
            failures.append((entry.name, line))
        except Exception as exc:  # keep going: other figures are independent
            traceback.print_exc()
            other_errors += 1
            failures.append((entry.name, f"{type(exc).__name__}: {exc}"))
    print(
        f"{len(entries) - len(failures)}/{len(entries)} figures done in "
        f"{time.perf_counter() - t0:.1f} s (profile={args.profile})"
    )
    for name, why in failures:
        print(f"FAILED {name}: {why}", file=sys.stderr)
    return 1 if other_errors else (2 if failures else 0)


if __name__ == "__main__":
    sys.exit(main())
