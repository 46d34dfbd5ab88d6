"""``python -m privrepro.rehearsal.standins``: write the stand-ins into a data root.

    python -m privrepro.rehearsal.standins --root data/rehearsal            # everything, full size
    python -m privrepro.rehearsal.standins --root scratch/r --only cifar10,mnist --jobs 2

Prints one line per stand-in (files, bytes, space on disk, wall and CPU time) and, at the end,
how to point a run at the root. A bad argument is one line on standard error and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["main"]


def _progress(enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    def wrap(iterable: Iterable[Any], desc: str, total: int) -> Iterable[Any]:
        return tqdm(iterable, desc=desc, total=total, leave=False, dynamic_ncols=True, disable=None)

    return wrap


def _size(nbytes: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if nbytes < 1000 or unit == "GB":
            return f"{nbytes:,.0f} {unit}" if unit == "B" else f"{nbytes:,.1f} {unit}"
        nbytes /= 1000  # type: ignore[assignment]
    return str(nbytes)


def main(argv: Sequence[str] | None = None) -> int:
    from privrepro.config.validation import ConfigError
    from privrepro.rehearsal.standins.catalog import STANDINS, Written, write_standins

    parser = argparse.ArgumentParser(
        prog="python -m privrepro.rehearsal.standins",
        description="Write full-size, format-real stand-in datasets and random checkpoints "
        "(marked as rehearsal stand-ins) into a data root.",
    )
    parser.add_argument(
        "--root",
        default=os.environ.get("PRIVREPRO_DATA") or "data/rehearsal",
        help="the data root to write (default: $PRIVREPRO_DATA, else data/rehearsal); must be "
        "empty or written by this command before",
    )
    parser.add_argument(
        "--only", default="", help=f"comma-separated subset of: {', '.join(STANDINS)}"
    )
    parser.add_argument("--seed", type=int, default=0, help="root seed of the pixels and weights")
    parser.add_argument(
        "--jobs",
        type=int,
        default=max(1, min(os.cpu_count() or 1, 8)),
        help="worker processes encoding image files (default: the CPU count, at most 8)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    keys = [k.strip() for k in args.only.split(",") if k.strip()] or None

    def report(w: Written) -> None:
        print(
            f"{w.key:<13} {w.files:>6} files {_size(w.nbytes):>10} "
            f"({_size(w.disk_bytes)} on disk) {w.seconds:>7.1f} s ({w.cpu_seconds:.1f} s CPU)  "
            f"{w.folder}  "
            f"(stand-in for {w.stand_in_for})",
            flush=True,
        )

    try:
        if args.seed < 0:
            raise ConfigError("--seed", args.seed, "must be an integer >= 0")
        if args.jobs < 1:
            raise ConfigError("--jobs", args.jobs, "must be an integer >= 1")
        start = time.perf_counter()
        done = write_standins(
            args.root,
            keys,
            seed=args.seed,
            jobs=args.jobs,
            progress=_progress(not args.no_progress),
            report=report,
        )
    except ConfigError as exc:
        print(f"privrepro: configuration error: {exc}", file=sys.stderr)
        return 2
    total, disk = sum(w.nbytes for w in done), sum(w.disk_bytes for w in done)
    cpu = sum(w.cpu_seconds for w in done)
    print(
        f"{'total':<13} {sum(w.files for w in done):>6} files {_size(total):>10} "
        f"({_size(disk)} on disk) {time.perf_counter() - start:>7.1f} s ({cpu:.1f} s CPU)  "
        f"-> {args.root} (marked rehearsal stand-in)"
    )
    print(
        f"Run a figure on them: PRIVREPRO_DATA={args.root} make fig-<paper>-<id> PROFILE=paper "
        "(the cl figures also need params.features.weights=<root>/weights/timm/"
        "vit_base_patch16_224.augreg_in21k/model.safetensors)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
