"""``make rehearsal``: every paper-profile figure on the full-size stand-ins, capped and measured.

    python -m privrepro.rehearsal --root data/rehearsal            # every figure
    python -m privrepro.rehearsal --root data/rehearsal --target pac-ex4 --items 3

With ``--target``, the rows of those figures in an existing ``rehearsal.csv`` are replaced and
the others kept. Each figure is rehearsed in its own process
(:func:`privrepro.rehearsal.measure.rehearse_figure`), so its peak host memory is its own and a
figure that crashes or runs out of memory is a row, not the end of the rehearsal. Writes ``results/rehearsal.csv`` (one row per figure: the measured
memory, load time, rates, the full run's counts and the predicted wall time, and how it was
predicted) and ``plots/rehearsal.png``. The rehearsal's store and caches go to ``--scratch``:
nothing it computes reaches the run store or a figure's table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.rehearsal.device_model import DEVICES, H100
from privrepro.rehearsal.measure import STUCK_GRACE_S, rehearse_figure
from privrepro.rehearsal.settings import GIB, RehearsalSettings
from privrepro.rehearsal.summary import (
    COLUMNS,
    GPU_TARGET_H,
    PROFILE_TARGET_H,
    gpu_totals,
    mark_shared_caches,
    part_totals,
)

__all__ = ["MAX_COST_CLASSES", "main", "plot_rehearsal", "rehearse_all", "settings_json"]


def settings_json(settings: RehearsalSettings) -> str:
    """The settings as the text a figure's process reads back (:func:`_child_settings`)."""
    values = {k: str(v) for k, v in asdict(settings).items()}
    return json.dumps({**values, "overrides_json": json.dumps(list(settings.overrides))})


def _child(experiment: str, settings: RehearsalSettings, timeout_s: float) -> dict[str, Any]:
    """Rehearse one figure in a fresh process; a crash or a kill is a row too."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "row.json"
        cmd = [
            sys.executable,
            "-m",
            "privrepro.rehearsal.rehearse",
            "--one",
            experiment,
            "--json",
            str(out),
            "--settings",
            settings_json(settings),
        ]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
            if out.is_file():
                return dict(json.loads(out.read_text()))
            why = f"exit status {proc.returncode}: {proc.stderr.strip()[-400:]}"
            status = "does not fit (killed)" if proc.returncode in (-9, 137) else "error"
        except subprocess.TimeoutExpired:
            why, status = f"process stopped after {timeout_s:.0f} s", "timeout"
        paper, figure = experiment.split("/", 1)
        return {
            "paper": paper,
            "figure": figure,
            "experiment": experiment,
            "profile": "paper",
            "data": "rehearsal stand-in",
            "status": status,
            "note": why,
            "rehearsal_wall_s": time.perf_counter() - t0,
        }


def rehearse_all(
    experiments: list[str],
    settings: RehearsalSettings,
    in_process: bool = False,
    echo: bool = True,
) -> pd.DataFrame:
    """One row per experiment (see :data:`COLUMNS`)."""
    rows = []
    for name in experiments:
        if in_process:
            row = rehearse_figure(name, settings)
        else:
            units = settings.units * MAX_COST_CLASSES
            row = _child(name, settings, (settings.unit_timeout_s + STUCK_GRACE_S) * units + 120)
        rows.append(row)
        if echo:
            pred = row.get("predicted_gpu_s")
            print(
                f"{name:<22} {row['status']:<28} "
                f"{'' if pred is None else f'{pred / 3600:10.2f} H100 h predicted'}  "
                f"({row.get('rehearsal_wall_s', 0):.0f} s)",
                flush=True,
            )
    table = pd.DataFrame(rows)
    if "predicted_s" in table:
        table["predicted_h"] = table["predicted_s"] / 3600
    if "predicted_gpu_s" in table:
        table["predicted_gpu_h"] = table["predicted_gpu_s"] / 3600
    for col in COLUMNS:
        if col not in table:
            table[col] = pd.NA
    return mark_shared_caches(table[COLUMNS])


#: the most cost classes a figure has (ip: three series groups); bounds a figure's process time
MAX_COST_CLASSES = 4


def plot_rehearsal(table: pd.DataFrame) -> Any:
    """Predicted full time per figure (log scale): on the rehearsal's device and, predicted from
    operation counts, on one H100 (the priced cl PEFT figures: the H100 bar only); hatched: a
    lower bound."""
    from privrepro.plotting.style import new_figure

    fig, ax = new_figure()
    t = table.dropna(subset=["predicted_gpu_h"]).sort_values("predicted_gpu_h")
    names = t["experiment"].astype(str).tolist()
    lower = t.get("lower_bound", pd.Series(False, index=t.index)).fillna(False).astype(bool)
    pos = list(range(len(names)))
    here = ax.barh(
        [p + 0.2 for p in pos],
        pd.to_numeric(t["predicted_h"], errors="coerce").fillna(0).clip(lower=1e-4),
        height=0.4,
        color="tab:blue",
    )
    gpu_h = pd.to_numeric(t["predicted_gpu_h"], errors="coerce")
    gpu = ax.barh(
        [p - 0.2 for p in pos], gpu_h.fillna(0).clip(lower=1e-4), height=0.4, color="tab:orange"
    )
    for bars in (here, gpu):
        for bar, is_lower in zip(bars, lower, strict=True):
            if is_lower:
                bar.set_hatch("///")
    ax.axvline(GPU_TARGET_H, color="grey", ls=":", lw=1)
    ax.set_yticks(pos, names)
    ax.set_xscale("log")
    ax.set_xlabel("predicted wall time of the full paper profile (h)")
    devices = ", ".join(sorted({str(d) for d in table["device"].dropna()})) or "?"
    totals = gpu_totals(table)
    ax.legend(
        [here, gpu],
        [
            f"rehearsed on {devices}",
            f"one H100, predicted from operation counts: {totals['total_h']:.1f} h in all, "
            f"{totals['rest_h']:.1f} h without the cl PEFT figures",
        ],
        fontsize=6,
        loc="lower right",
    )
    ax.set_title(
        "Cost of the paper profile on rehearsal stand-ins (hatched: a lower bound; "
        f"dotted: {GPU_TARGET_H:g} h)",
        fontsize=8,
    )
    ax.tick_params(axis="y", labelsize=6)
    fig.set_size_inches(7, max(3, 0.3 * len(names) + 1))
    return fig


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="privrepro-rehearsal", description=__doc__)
    parser.add_argument("--root", default="data/rehearsal", help="the stand-in data root")
    parser.add_argument("--scratch", default="data/rehearsal-scratch", help="store and caches")
    parser.add_argument("--results", default="results", help="where rehearsal.csv goes")
    parser.add_argument("--plots", default="plots", help="where rehearsal.png goes")
    parser.add_argument("--target", action="append", default=[], help="e.g. pac-ex4")
    defaults = RehearsalSettings(Path(), Path())
    parser.add_argument("--items", type=int, default=defaults.items, help="items per capped loop")
    parser.add_argument(
        "--units", type=int, default=defaults.units, help="units run per cost class"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=defaults.unit_timeout_s,
        help="seconds per unit (then a lower bound)",
    )
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda")
    parser.add_argument("--host-gib", type=float, default=128.0, help="target host memory")
    parser.add_argument("--device-gib", type=float, default=80.0, help="target GPU memory")
    parser.add_argument(
        "--probe",
        type=int,
        default=defaults.probe_samples,
        help="samples per probed batch (a batch's time is scaled to its full size; 0: whole)",
    )
    parser.add_argument(
        "--no-count", action="store_true", help="do not count torch operators (no GPU prediction)"
    )
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Hydra override for every figure (e.g. ++params.train.precision=tf32)",
    )
    parser.add_argument(
        "--gpu-model",
        default=defaults.gpu_model,
        choices=sorted(DEVICES),
        help="the device model of the GPU prediction (datasheet rates)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=defaults.threads,
        help="torch and BLAS threads per unit (1: the measured CPU time is all of the unit's)",
    )
    parser.add_argument(
        "--rehearse-film",
        action="store_true",
        help="rehearse the cl PEFT figures instead of pricing their FiLM image-passes",
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--json", help=argparse.SUPPRESS)
    parser.add_argument("--settings", help=argparse.SUPPRESS)
    return parser


def _child_settings(text: str) -> RehearsalSettings:
    """The settings a parent process handed to the child of one figure (all values as text)."""
    raw = json.loads(text)
    return RehearsalSettings(
        root=Path(raw["root"]),
        scratch=Path(raw["scratch"]),
        items=int(raw["items"]),
        units=int(raw["units"]),
        unit_timeout_s=float(raw["unit_timeout_s"]),
        host_bytes=int(raw["host_bytes"]),
        device_bytes=int(raw["device_bytes"]),
        device=raw["device"],
        probe_samples=int(raw["probe_samples"]),
        count_operations=raw["count_operations"] == "True",
        overrides=tuple(json.loads(raw.get("overrides_json", "[]"))),
        gpu_model=raw.get("gpu_model", H100.name),
        threads=int(raw.get("threads", 1)),
        price_film=raw.get("price_film", "True") == "True",
    )


def _write(
    table: pd.DataFrame, names: list[str], args: argparse.Namespace
) -> tuple[Path, pd.DataFrame, list[Path]]:
    """Write ``rehearsal.csv`` (with ``--target``, the other figures' rows of an existing one
    kept) and ``rehearsal.png``; return the CSV's path, the table written and the plot's paths."""
    from privrepro.plotting.style import save_figure, use_style
    from privrepro.store.atomic import atomic_write_text

    out = Path(args.results) / "rehearsal.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.target and out.is_file():  # rehearsing some figures again replaces only their rows
        old = pd.read_csv(out)
        kept = old[~old["experiment"].isin(names)].astype(object)
        table = pd.concat([kept, table.astype(object)], ignore_index=True)
        table = table.sort_values(["paper", "figure"], kind="stable").reset_index(drop=True)
        table = mark_shared_caches(table)
    atomic_write_text(out, table.to_csv(index=False))
    use_style()
    plots = save_figure(plot_rehearsal(table), Path(args.plots) / "rehearsal")
    return out, table, list(plots)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.one:  # the child process of one figure
        out = Path(args.json)

        def stuck(row: dict[str, Any]) -> None:  # a unit inside one call past its timeout
            out.write_text(json.dumps(row, default=str))
            sys.stdout.flush()
            os._exit(0)

        row = rehearse_figure(args.one, _child_settings(args.settings), on_stuck=stuck)
        out.write_text(json.dumps(row, default=str))
        return 0

    from privrepro.config.validation import ConfigError
    from privrepro.data.provenance import is_rehearsal_root
    from privrepro.runner.catalog import list_experiments, resolve_target

    if not is_rehearsal_root(args.root):
        err = ConfigError(
            "root", args.root, "must be a stand-in root written by `make rehearsal-data`"
        )
        print(f"privrepro: configuration error: {err}", file=sys.stderr)
        return 2
    from privrepro.threads import check_threads

    try:
        check_threads(args.threads, "--threads")
    except ConfigError as err:
        print(f"privrepro: configuration error: {err}", file=sys.stderr)
        return 2
    settings = RehearsalSettings(
        root=Path(args.root).resolve(),
        scratch=Path(args.scratch).resolve(),
        items=args.items,
        units=args.units,
        unit_timeout_s=args.timeout,
        host_bytes=int(args.host_gib * GIB),
        device_bytes=int(args.device_gib * GIB),
        device=args.device,
        probe_samples=args.probe,
        count_operations=not args.no_count,
        overrides=tuple(args.override),
        gpu_model=args.gpu_model,
        threads=args.threads,
        price_film=not args.rehearse_film,
    )
    if args.target:
        names = [e.name for t in args.target for e in resolve_target(t)]
    else:
        names = [e.name for e in list_experiments()]
    t0 = time.perf_counter()
    out, table, plots = _write(rehearse_all(names, settings), names, args)
    totals = gpu_totals(table)
    print(
        f"{len(table)} figures rehearsed in {time.perf_counter() - t0:.0f} s: "
        f"{out}, {', '.join(map(str, plots))}; predicted full paper profile "
        f"{totals['cpu_h']:.1f} h here (each shared part once); on one H100 (predicted "
        f"from operation counts): {totals['total_h']:.1f} h in all (target ≤ "
        f"{PROFILE_TARGET_H:g} h), of it {totals['rest_h']:.1f} h for every figure but the cl "
        f"PEFT figures (target ≤ {GPU_TARGET_H:g} h) and {totals['film_h']:.1f} h for them"
        + (
            f"; {totals['lower_bounds']:.0f} rows are lower bounds"
            if totals["lower_bounds"]
            else ""
        )
    )
    for name, v in part_totals(table).items():
        print(f"  {name:<22} {v['gpu_h']:10.2f} H100 h  {v['tflop']:12.4g} TFLOP")
    return 0


if __name__ == "__main__":
    sys.exit(main())
