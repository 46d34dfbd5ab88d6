"""Plots of what is not the canonical view: an ad-hoc run's own plot and a sweep's plot.

A figure's default plot shows its canonical view (:mod:`privrepro.runner.canonical`). A run whose
units are not one seed of that view (an ad-hoc run: ``profile=paper seed=3 params.k_max=200``)
gets its own plot, ``plots/<paper>/<figure>/runs/<what it varied>.png``, named by the overrides
it was run with (``profile-paper_seed-3_k_max-200``). A sweep (``privrepro -m …``) gets one plot
after its last job, ``plots/<paper>/<figure>/sweeps/<sweep folder>.png``, one panel per job,
each titled with the values the sweep varied in it (``epsilons=[1.0] · seed=2``), and a copy in
the sweep's folder; its jobs draw no plot of their own. Neither replaces the default plot.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.figures.api import Figure

log = logging.getLogger("privrepro.runner")

#: Overrides that change where or how a run goes, not what it computes: not in a plot's name.
IGNORED_KEYS = (
    "experiment",
    "paths",
    "progress",
    "device",
    "threads",
    "force",
    "plot",
    "worker",
    "tracking",
    "hydra",
)
#: The record a sweep's job leaves in its job folder: which units it drew, with what.
SELECTION_FILE = "selection.json"
_MAX_PANELS = 24
#: The longest plot name from overrides; longer ones end in a hash of the whole name.
_MAX_NAME = 100


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def _kept(override: str) -> bool:
    key = _key(override)
    return "=" in override and key.split(".")[0].split("/")[0] not in IGNORED_KEYS


def _short(override: str) -> str:
    """``params.k_max=200`` → ``k_max=200``."""
    key, _, value = override.partition("=")
    return f"{key.lstrip('+~').removeprefix('params.')}={value}"


def _file_part(text: str) -> str:
    out = []
    for c in text:
        if c.isalnum() or c in "-_+":
            out.append(c)
        elif c == ".":
            out.append("p")
        elif c in "=/":
            out.append("-")
        elif c in "[](){}'\" ":
            continue
        else:
            out.append("_")
    name = "".join(out)
    while "__" in name:
        name = name.replace("__", "_")
    return name.strip("_")


def varied_overrides(overrides: Sequence[str]) -> list[str]:
    """The overrides that change what a run computes, short: ``k_max=200``, ``seed=3``."""
    return [_short(o) for o in overrides if _kept(o)]


def own_configuration(overrides: Sequence[str]) -> bool:
    """Whether a run with these overrides computes the figure's own parameters: it overrides
    nothing but the profile, the seed and where or how it runs (:data:`IGNORED_KEYS`)."""
    return all(_key(o) in ("profile", "seed") for o in overrides if _kept(o))


def _name_part(override: str) -> str:
    """``tuning.n_trials=4`` → ``tuning_n_trials-4``; ``epsilons=[1.0]`` → ``epsilons-1p0``."""
    key, _, value = _short(override).partition("=")
    return f"{_file_part(key.replace('.', '_'))}-{_file_part(value)}"


def varied_name(overrides: Sequence[str]) -> str:
    """A file name from the overrides that change what a run computes:
    ``["experiment=cl/fig2", "profile=paper", "seed=3", "params.k_max=200"]`` →
    ``profile-paper_seed-3_k_max-200`` (``run`` when none does)."""
    parts = [_name_part(o) for o in overrides if _kept(o)]
    return _capped("_".join(p for p in parts if p) or "run")


def _capped(name: str) -> str:
    """``name``, or its head and a hash of it when longer than :data:`_MAX_NAME` (a file name
    stays well under the 255 bytes file systems allow)."""
    if len(name) <= _MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    return f"{name[: _MAX_NAME - 11]}-{digest}"


def data_key(identities: Sequence[Mapping[str, Any]]) -> str | None:
    """What tells apart the data a run's units read from a data root: a short hash of their
    identities' ``data`` fingerprints (``None`` when none read a data root). The same overrides
    on another data root are another ad-hoc plot, not the same file drawn over."""
    prints = sorted({str(i["data"]) for i in identities if i.get("data") is not None})
    if not prints:
        return None
    return hashlib.sha256("\n".join(prints).encode()).hexdigest()[:8]


def adhoc_stem(
    plots_dir: Path, paper: str, figure: str, overrides: Sequence[str], data: str | None = None
) -> Path:
    """Where an ad-hoc run's own plot goes (without suffix): named by its overrides and, for a
    run that read a data root, by :func:`data_key` (``…_data-1a2b3c4d``)."""
    name = varied_name(overrides)
    if data:
        name = _capped(f"{name}_data-{_file_part(str(data))[:16]}")
    return Path(plots_dir) / paper / figure / "runs" / name


def no_view_reason(meta: Mapping[str, Any]) -> str:
    """Why a figure has no canonical view, as its ``meta.json`` records it (``canonical_gaps``)."""
    gaps = meta.get("canonical_gaps")
    if isinstance(gaps, Mapping) and gaps:
        return "; ".join(f"{p}: {w}" for p, w in gaps.items())[:300]
    return "no profile's own configuration is held at every unit of a seed"


def retire_default_plot(stem: Path, why: str) -> list[Path]:
    """Remove a figure's default plot (``<stem>.png`` and ``.pdf``) when the figure has no
    canonical view any more: a plot of units that are no longer the figure's own parameters is
    not left standing as if it were. One warning line says so; returns what was removed."""
    removed = []
    for suffix in (".png", ".pdf"):
        path = Path(stem).with_name(Path(stem).name + suffix)
        if os.path.lexists(path):
            path.unlink()
            removed.append(path)
    if removed:
        log.warning(
            "%s: the default plot removed (%s): the figure has no canonical view any more (%s)",
            Path(stem),
            "+".join(p.suffix.lstrip(".") for p in removed),
            why,
        )
    return removed


def record_job_selection(job_dir: Path, record: Mapping[str, Any]) -> None:
    """Leave the job's units and parameters in its folder for the sweep's plot."""
    from privrepro.store.atomic import atomic_write_text

    job_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(job_dir / SELECTION_FILE, json.dumps(record, indent=1, default=str))


def _rendered(fig: Any) -> Any:
    """The figure as an RGBA array (its whole tight box), then closed."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", dpi=110)
    plt.close(fig)
    buf.seek(0)
    return plt.imread(buf)


def facet(panels: Sequence[tuple[str, Any]], title: str, ncols: int | None = None) -> Any:
    """One figure holding each ``(panel title, figure)`` as a panel, in a grid of ``ncols``
    (default: two, one for panels more than 1.6 times as wide as tall)."""
    import math

    from privrepro.plotting.style import new_figure

    images = [(name, _rendered(fig)) for name, fig in panels]
    height = max(img.shape[0] for _, img in images) / 110
    width = max(img.shape[1] for _, img in images) / 110
    if ncols is None:
        ncols = 1 if width > 1.6 * height else 2
    ncols = max(1, min(ncols, len(images)))
    nrows = math.ceil(len(images) / ncols)
    fig, axes = new_figure(nrows, ncols, width=width, height=height + 0.3, squeeze=False)
    for ax in axes.flat:
        ax.set_axis_off()
    for ax, (name, img) in zip(axes.flat, images, strict=False):
        ax.imshow(img, interpolation="none")
        ax.set_title(name, fontsize=11, fontweight="bold")
    fig.suptitle(title, fontsize=12)
    return fig


def _varied(jobs: Sequence[Mapping[str, Any]], computed: bool = True) -> list[str]:
    """The override keys whose values differ between the jobs: those that change what the jobs
    compute (the sweep's axes), or with ``computed`` false those that do not (``worker``)."""
    values: dict[str, set[str]] = {}
    for job in jobs:
        for o in job.get("overrides") or []:
            if "=" in o and _kept(o) == computed:
                values.setdefault(_key(o), set()).add(o.partition("=")[2])
    return [k for k, v in values.items() if len(v) > 1]


def sweep_title(jobs: Sequence[Mapping[str, Any]]) -> tuple[list[str], str]:
    """The keys a sweep's panels are titled by, and what the sweep varied, in words: the
    overrides that change what the jobs compute (``k_max, seed``); else those that do not,
    said so (``worker only: the same units``); else one job."""
    axes = _varied(jobs)
    if axes:
        return axes, "varied " + ", ".join(a.removeprefix("params.") for a in axes)
    others = _varied(jobs, computed=False)
    if others:
        return others, f"varied {', '.join(others)} only: the same units"
    return [], "one job" if len(jobs) == 1 else "nothing varied: the same units"


def _panel_title(job: Mapping[str, Any], axes: Sequence[str]) -> str:
    chosen = {_key(o): o for o in job.get("overrides") or [] if _key(o) in axes}
    return " · ".join(_short(chosen[k]) for k in axes if k in chosen) or f"job {job.get('job')}"


#: the columns that name a unit rather than hold what it computed
_NAMING = ("paper", "figure", "profile", "seed", "unit_id", "data")


def same_numbers(tables: Sequence[pd.DataFrame], rtol: float = 1e-12) -> bool:
    """Whether the tables hold the same rows once the columns that name a unit (seed, unit id,
    ...) are set aside: numbers equal to ``rtol`` (BLAS may round differently), the rest
    exactly; row order ignored."""
    import numpy as np

    if len(tables) < 2:
        return False
    shaped = []
    for t in tables:
        t = t.drop(columns=[c for c in _NAMING if c in t.columns])
        t = t.reindex(sorted(t.columns), axis=1)
        shaped.append(t.sort_values(list(t.columns)).reset_index(drop=True) if len(t) else t)
    first = shaped[0]
    for t in shaped[1:]:
        if list(t.columns) != list(first.columns) or len(t) != len(first):
            return False
        for c in first.columns:
            a, b = first[c], t[c]
            if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
                x, y = a.to_numpy(float), b.to_numpy(float)
                if not np.allclose(x, y, rtol=rtol, atol=0.0, equal_nan=True):
                    return False
            elif not a.astype(str).equals(b.astype(str)):
                return False
    return True


def draw_sweep(sweep_dir: Path, conf: Path | None = None) -> list[Path]:
    """Draw each figure of the sweep in ``sweep_dir`` as one plot (a panel per job); return the
    PNGs written. Jobs that failed (no selection recorded) are left out."""
    from privrepro.bounded_read import UNIT_JSON_BYTES, read_json
    from privrepro.config.validation import build_params
    from privrepro.runner.canonical import select_units
    from privrepro.runner.figure_tables import figure_recipe, read_table
    from privrepro.runner.recipe_config import load_recipe

    sweep_dir = Path(sweep_dir)
    jobs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for path in sorted(sweep_dir.glob(f"*/{SELECTION_FILE}"), key=lambda p: int(p.parent.name)):
        try:
            record = read_json(path, UNIT_JSON_BYTES, tree=sweep_dir)
        except (OSError, ValueError) as exc:  # a pipe, a device, cut short: that job left out
            log.warning("%s: left out of the sweep's plot (%s)", path, exc)
            continue
        if not isinstance(record, dict):
            continue
        record["job"] = int(path.parent.name)
        jobs.setdefault((str(record["paper"]), str(record["figure"])), []).append(record)
    made: list[Path] = []
    for (paper, figure), records in jobs.items():
        axes, what = sweep_title(records)
        name, _ = figure_recipe(paper, figure, conf)
        recipe = load_recipe(name)
        results = Path(records[0]["results_dir"])
        table = read_table(results, paper, figure)
        panels = []
        selected = []
        for record in records[:_MAX_PANELS]:
            rows = select_units(table, record["unit_ids"])
            if rows.empty:
                continue
            selected.append(rows)
            params: Any = build_params(recipe.params_type, record["params"], "params")
            panels.append((_panel_title(record, axes), render(recipe, rows, params, record)))
        if not panels:
            continue
        # the seeds of a formula, say (jobs of workers compute the same units by design)
        if len(selected) > 1 and _varied(records) and same_numbers(selected):
            what += "; every job computed the same numbers"
            print(
                f"sweep {sweep_dir.name}: {paper}/{figure}'s {len(selected)} jobs "
                f"({', '.join(t for t, _ in panels)}) computed the same numbers: "
                "nothing it computes depends on what they varied",
                flush=True,
            )
        varied = "+".join(a.removeprefix("params.") for a in axes)
        shown = (
            f"{len(panels)} of {len(records)} jobs"
            if len(records) > len(panels)
            else f"{len(panels)} job{'s' if len(panels) > 1 else ''}"
        )
        fig = facet(panels, f"{paper}/{figure} — sweep {sweep_dir.name}: {what} ({shown})")
        from privrepro.plotting.style import save_figure

        stem = (
            Path(records[0]["plots_dir"])
            / paper
            / figure
            / "sweeps"
            / _capped("_".join(x for x in (sweep_dir.name, _file_part(varied)) if x))
        )
        caption = (
            f"privrepro {paper}/{figure} · sweep {sweep_dir.name} · not the figure's default plot"
        )
        paths = save_figure(fig, stem, caption=caption)
        png = paths[0]
        (sweep_dir / f"{paper}-{figure}.png").write_bytes(png.read_bytes())
        made.append(png)
    return made


def render(recipe: Figure[Any], table: pd.DataFrame, params: Any, meta: Mapping[str, Any]) -> Any:
    """The recipe's plot of ``table`` with the paper's printed values marked where they may be
    compared (:mod:`privrepro.runner.paper_values`, under ``meta``'s profile) and the stand-in
    data named; not saved."""
    from privrepro.plotting.style import use_style
    from privrepro.runner.paper_values import paper_values

    use_style()
    fig = recipe.plot(table, params)
    labels = [str(d) for d in table["data"].dropna().unique()] if "data" in table else []
    values = paper_values(str(meta["paper"]), str(meta["figure"]), str(meta["profile"]), labels)
    recipe.mark_paper_values(fig, values, table, params)
    mark_stand_in(fig, table)
    return fig


def mark_stand_in(fig: Any, table: pd.DataFrame) -> None:
    """Name the stand-in data in the figure's title (a red line above the recipe's title)."""
    from privrepro.plotting.style import stand_in_title

    if "data" in table.columns:
        stand_in_title(fig, [str(d) for d in table["data"].dropna().unique()])
