"""Count the DP-SGD trainings and tuning studies the cl PEFT figures compute, and which of them
repeat a computation already made.

    python benchmarks/count_cl_trainings.py --profile smoke --root SCRATCH [--figure cl/figA1 ...]
    python benchmarks/count_cl_trainings.py --grid paper       # counted from the grids, no compute
    python benchmarks/count_cl_trainings.py --grid paper --readings   # per reading of the protocol
    python benchmarks/count_cl_trainings.py --grid paper --price OUT.csv   # GPU hours of each

Runs the PEFT figures (``cl/fig3_peft``, ``fig4_peft``, ``fig5_peft``, ``figA1``, ``tA7_peft``, in
that order; ``--figure`` picks some) of one profile in this process, into a fresh store under
``SCRATCH`` (its studies and caches too), and watches every call of
:func:`privrepro.continual.peft.members.train_member`. Each call is a *final* training (a
member, checkpoint or Non-CL model of a run) or a *trial* training (inside an Optuna study). A
training's fingerprint is what it computes from: the training rows, labels, label space,
hyperparameters and starting weights; with the state of its random stream added, two trainings
with equal fingerprints are the same computation, bit for bit.

For each figure it prints and writes (``SCRATCH/counts.csv``): the units; then for final and
for trial trainings, how many ran, how many have the inputs of an earlier training of this
figure or of an earlier figure (the same training up to its DP noise: shareable once its noise
stream follows its inputs), and how many are identical to an earlier one, inputs and stream (a
pure recomputation); and the study journals written. Threads: one (``OMP_NUM_THREADS=1`` unless set).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

FIGURES = ["cl/fig3_peft", "cl/fig4_peft", "cl/fig5_peft", "cl/figA1", "cl/tA7_peft"]


def _digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else repr(p).encode())
    return h.hexdigest()[:16]


def _rows_digest(x: Any) -> str:
    import torch

    if isinstance(x, torch.Tensor):
        return _digest(
            str(x.dtype), tuple(x.shape), x.detach().cpu().contiguous().numpy().tobytes()
        )
    rows = getattr(x, "rows", None)
    return _digest(type(x).__name__, None if rows is None else rows.tobytes())


def _weights_digest(model: Any) -> str:
    if model is None:
        return "fresh"
    return _digest(*(t.detach().cpu().numpy().tobytes() for t in model.state_dict().values()))


class Recorder:
    """The fingerprints of every ``train_member`` call, per figure."""

    def __init__(self) -> None:
        self.figure = ""
        self.calls: list[dict[str, Any]] = []

    def wrap(self, fn: Any) -> Any:
        import numpy as np

        def train_member(kind: str, x: Any, y: Any, label_ids: Any, hp: Any, **kw: Any) -> Any:
            callers = {f.frame.f_globals.get("__name__", "") for f in inspect.stack()[1:6]}
            trial = "privrepro.continual.peft.hyperparameter_search" in callers
            gen = kw.get("generator")
            inputs = _digest(
                kind,
                _rows_digest(x),
                np.asarray(y).tobytes(),
                np.asarray(label_ids).tobytes(),
                hp,
                _weights_digest(kw.get("init")),
                _weights_digest(kw.get("backbone")),
            )
            stream = _digest(gen.get_state().numpy().tobytes()) if gen is not None else "none"
            self.calls.append(
                {"figure": self.figure, "trial": trial, "inputs": inputs, "stream": stream}
            )
            return fn(kind, x, y, label_ids, hp, **kw)

        return train_member


def count(figures: list[str], profile: str, root: Path) -> Any:
    import pandas as pd

    import privrepro.continual.baselines as baselines
    import privrepro.continual.peft.members as members
    from privrepro.runner.run import run_experiment

    rec = Recorder()
    members.train_member = rec.wrap(members.train_member)
    baselines.train_member = members.train_member
    overrides = [
        f"profile={profile}",
        f"paths.experiments_dir={root}/experiments",
        f"paths.results_dir={root}/results",
        f"paths.plots_dir={root}/plots",
        "progress=false",
        "plot=false",
    ]
    units: dict[str, int] = {}
    for fig in figures:
        rec.figure = fig
        run = run_experiment(fig, overrides)
        units[fig] = run.computed + run.reused
    calls = pd.DataFrame(rec.calls)
    studies: Counter[str] = Counter()
    for log in (root / "experiments" / "_studies").glob("*.log"):
        studies[log.name] += 1
    first: dict[tuple[str, str], str] = {}  # (kind, inputs) → the figure that trained it first
    exact: set[tuple[str, str, str]] = set()
    out = []
    for fig in figures:
        c = calls[calls["figure"] == fig] if len(calls) else calls
        row: dict[str, Any] = {"figure": fig, "units": units[fig]}
        for kind, sub in (("final", c[~c["trial"]]), ("trial", c[c["trial"]])):
            here = earlier = same = 0
            for _, r in sub.iterrows():
                key = (kind, str(r["inputs"]))
                if key in first:
                    here += first[key] == fig
                    earlier += first[key] != fig
                first.setdefault(key, fig)
                same += (*key, str(r["stream"])) in exact
                exact.add((*key, str(r["stream"])))
            row[f"{kind}_trainings"] = len(sub)
            row[f"{kind}_repeats_this_figure"] = here
            row[f"{kind}_repeats_earlier_figure"] = earlier
            row[f"{kind}_identical_recomputations"] = same
        out.append(row)
    table = pd.DataFrame(out)
    table.attrs["studies"] = len(studies)
    return table, sorted(studies)


# the paper profile's training rows and a study's tuning rows: the rehearsal's pricing of these
# figures (``make rehearsal``) counts with the same functions
from privrepro.rehearsal.film_rows import NUM_CLASSES, TRAIN_ROWS, tuning_rows  # noqa: E402

__all__ = ["NUM_CLASSES", "TRAIN_ROWS", "grid_counts", "price", "reading_counts", "tuning_rows"]


def grid_counts(
    profile: str, figures: list[str], overrides: dict[str, list[str]] | None = None
) -> Any:
    """Per figure, from the units its grid makes under ``profile`` (nothing computed): the FiLM
    runs, the FiLM studies and PEFT ensembles it is the first to ask for (keyed as the
    rehearsal's cost model keys them: :mod:`privrepro.continual.peft.shared_work` — label
    configurations in S_prior^const, 5-Datasets orders in the canonical order's study, as the
    tuning rows agree there; ensembles by their run's settings and its study), and the
    Naive/Non-CL runs; and their image-passes in millions at the paper profile's sizes
    (:data:`TRAIN_ROWS`): a DP-SGD training's expected ones, ``epochs × rows`` (Poisson
    sampling), a study's ``n_trials × epochs × tuning rows`` (:func:`tuning_rows`), a final
    training (an ensemble's members, a Naive or Non-CL model) ``epochs ×`` the benchmark's rows.
    ``overrides``: per figure, Hydra overrides (a reading of the protocol)."""
    import pandas as pd

    from privrepro.config.validation import build_params
    from privrepro.continual.peft import PeftRun
    from privrepro.continual.peft.shared_work import ensemble_key, study_key
    from privrepro.runner.plan import compose, effective_params
    from privrepro.runner.recipe_config import load_recipe

    studies: set[str] = set()
    ensembles: set[str] = set()
    out = []
    for fig in figures:
        cfg = compose(fig, [f"profile={profile}", *(overrides or {}).get(fig, [])])
        recipe = load_recipe(str(cfg.figure.recipe))
        units = recipe.units(build_params(recipe.params_type, effective_params(cfg), "params"))
        row: dict[str, Any] = {
            "figure": fig,
            "units": len(units),
            "film_runs": 0,
            "new_film_studies": 0,
            "new_film_ensembles": 0,
            "film_baseline_runs": 0,
            "study_Mpasses": 0.0,
            "final_Mpasses": 0.0,
        }
        row["alone_Mpasses"] = 0.0  # the figure's, each of its studies and ensembles once
        mine: set[str] = set()
        for u in units:
            run = PeftRun.from_unit(u)
            if run.kind != "film":
                continue
            row["film_runs"] += 1
            epochs = float(u["train"].get("epochs", 40.0))
            final = epochs * sum(TRAIN_ROWS[run.benchmark]) / 1e6
            study = study_key(u, 0, profile)
            if u["tuning"].get("enabled", True) and (study not in studies or study not in mine):
                trials = int(u["tuning"].get("n_trials", 20))
                passes = trials * epochs * tuning_rows(u) / 1e6
                row["study_Mpasses"] += passes * (study not in studies)
                row["alone_Mpasses"] += passes * (study not in mine)
            row["new_film_studies"] += study not in studies
            studies.add(study)
            mine.add(study)
            ens = ensemble_key(u, 0, profile)
            if ens is None:
                row["film_baseline_runs"] += 1
                row["final_Mpasses"] += final
                row["alone_Mpasses"] += final
                continue
            row["final_Mpasses"] += final * (ens not in ensembles)
            row["alone_Mpasses"] += final * (ens not in mine)
            row["new_film_ensembles"] += ens not in ensembles
            ensembles.add(ens)
            mine.add(ens)
        out.append(row)
    return pd.DataFrame(out)


#: the readings of the cl paper's protocol other than the default (the paper's), each as the
#: overrides of the figures it changes (docs/cl-peft.md, "The protocol and its readings")
READINGS: dict[str, dict[str, list[str]]] = {
    "Fig. 4 tuned per blurry split": {"cl/fig4_peft": ["params.tuning.scenario=run"]},
    "Table A7: three Naive orders per (ε, seed)": {"cl/tA7_peft": ["params.naive_orders=3"]},
    "Fig. 5: Non-CL every seed": {"cl/fig5_peft": ["params.noncl_repeats=5"]},
    "Fig. 5: ImageNet-R five seeds": {"cl/fig5_peft": ["params.imagenet_r_repeats=5"]},
    "5-Datasets tuned on 10 % of all members": {"cl/tA7_peft": ["params.tuning.tune_of=benchmark"]},
    "dummy labels per task's labels": {"cl/fig3_peft": ["params.dummy_reference=task"]},
}


def _merged(*readings: dict[str, list[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in readings:
        for fig, o in r.items():
            out.setdefault(fig, []).extend(o)
    return out


def reading_counts(profile: str, figures: list[str]) -> Any:
    """One row per reading of the protocol (:data:`READINGS`; the default first, every larger
    reading at once last): its FiLM runs, new studies and ensembles, baseline runs and
    image-passes over ``figures``, and the difference to the default's image-passes."""
    import pandas as pd

    rows = []
    readings = {"default (the paper's)": {}, **READINGS, "all larger readings": {}}
    readings["all larger readings"] = _merged(*(v for k, v in READINGS.items() if "dummy" not in k))
    for name, over in readings.items():
        total = grid_counts(profile, figures, over).drop(columns="figure").sum()
        rows.append({"reading": name, **total.to_dict()})
    table = pd.DataFrame(rows)
    passes = table["study_Mpasses"] + table["final_Mpasses"]
    table["Mpasses"] = passes
    table["vs_default_Mpasses"] = passes - passes.iloc[0]
    return table


def price(profile: str, figures: list[str], batch: int) -> Any:
    """H100-hours (and the other device models') of the FiLM image-passes per figure and per
    reading, per precision: each pass priced from one counted FiLM DP-SGD step of ViT-B/16
    (:func:`privrepro.rehearsal.film_pricing.count_film_steps`) at physical batch ``batch``.
    Evaluation passes (a forward per test image per member) are not in the counts."""
    import pandas as pd

    from privrepro.rehearsal.device_model import DEVICES
    from privrepro.rehearsal.film_pricing import count_film_steps

    per_image: dict[tuple[str, str], float] = {}
    for precision in ("fp32", "tf32", "bf16"):
        step = count_film_steps(precision)
        for dev_name, dev in DEVICES.items():
            per_image[(dev_name, precision)] = sum(step.seconds_per_image(dev, batch).values())
    readings = {"default (the paper's)": {}, **READINGS}
    readings["all larger readings"] = _merged(*(v for k, v in READINGS.items() if "dummy" not in k))
    rows = []
    for reading, over in readings.items():
        grid = grid_counts(profile, figures, over)
        for _, g in grid.iterrows():
            new = g["study_Mpasses"] + g["final_Mpasses"]
            for (dev_name, precision), sec in per_image.items():
                rows.append(
                    {
                        "reading": reading,
                        "figure": g["figure"],
                        "device": dev_name,
                        "precision": precision,
                        "Mpasses_alone": g["alone_Mpasses"],
                        "Mpasses_counted": new,
                        "ms_per_pass": sec * 1e3,
                        "hours_alone": g["alone_Mpasses"] * 1e6 * sec / 3600,
                        "hours_earlier": (g["alone_Mpasses"] - new) * 1e6 * sec / 3600,
                        "hours_counted": new * 1e6 * sec / 3600,
                    }
                )
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--profile", default="smoke")
    ap.add_argument("--root", type=Path, help="a scratch folder (must not exist)")
    ap.add_argument("--figure", action="append", default=[], help="e.g. cl/figA1 (repeatable)")
    ap.add_argument("--grid", metavar="PROFILE", help="count from PROFILE's grids, no compute")
    ap.add_argument(
        "--readings", action="store_true", help="with --grid: one row per protocol reading"
    )
    ap.add_argument(
        "--price",
        metavar="CSV",
        type=Path,
        help="with --grid: hours per figure, reading, device and precision, written to CSV",
    )
    ap.add_argument("--batch", type=int, default=256, help="physical batch priced (--price)")
    args = ap.parse_args(argv)
    if args.grid and args.price:
        import pandas as pd

        table = price(args.grid, args.figure or FIGURES, args.batch)
        table.to_csv(args.price, index=False)
        h100 = table[table["device"] == "H100 SXM"]
        total = h100.groupby(["reading", "precision"], sort=False)["hours_counted"].sum()
        with pd.option_context("display.width", 250, "display.max_rows", None):
            print(total.unstack().round(1).to_string())
        return 0
    if args.grid and args.readings:
        import pandas as pd

        table = reading_counts(args.grid, args.figure or FIGURES)
        with pd.option_context("display.width", 250, "display.max_columns", None):
            print(table.round(1).to_string(index=False))
        return 0
    if args.grid:
        import pandas as pd

        grid = grid_counts(args.grid, args.figure or FIGURES)
        with pd.option_context("display.width", 200, "display.max_columns", None):
            print(grid.to_string(index=False))
        print(grid.drop(columns="figure").sum().to_string())
        return 0
    if args.root is None:
        print("--root: needed unless --grid is given", file=sys.stderr)
        return 2
    if args.root.exists():
        print(f"--root {args.root}: exists; give a fresh scratch folder", file=sys.stderr)
        return 2
    from privrepro.commands import quiet_console_logging

    quiet_console_logging()
    table, studies = count(args.figure or FIGURES, args.profile, args.root)
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_columns", None):
        print(table.to_string(index=False))
    print(f"\n{len(studies)} study journals under {args.root}/experiments/_studies:")
    for s in studies:
        print(f"  {s}")
    table.to_csv(args.root / "counts.csv", index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
