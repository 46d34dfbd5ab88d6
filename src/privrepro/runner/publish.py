"""Publish a figure: from its store and recipe to its table, views, summary, meta and plots.

One step for a run (:func:`privrepro.runner.run.run_config`), ``make tables``
(:mod:`privrepro.runner.figure_tables`) and ``make plots`` (:mod:`privrepro.runner.replot`,
which draws from ``results/`` alone with :func:`draw_plots`). It reads no configuration: each
profile's canonical units are the list the store records
(:func:`~privrepro.runner.canonical.record_canonical`).

More in ``docs/modules.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.config.secrets import redact
from privrepro.config.validation import build_params
from privrepro.data.provenance import DataSource
from privrepro.figures.api import Figure
from privrepro.runner.canonical import (
    CanonicalView,
    canonical_summary,
    canonical_views,
    default_view,
    is_canonical_run,
    recorded_profiles,
    select_units,
)
from privrepro.runner.figure_tables import (
    DerivedTable,
    TableFiles,
    data_sources,
    derive_table,
    load_last_run,
    read_meta,
    sha256,
    table_files,
    write_last_run,
    write_meta,
    write_table,
)
from privrepro.runner.run_views import (
    adhoc_stem,
    facet,
    no_view_reason,
    render,
    retire_default_plot,
    varied_overrides,
)
from privrepro.store.atomic import atomic_write_bytes
from privrepro.store.units import UnitStore

log = logging.getLogger("privrepro.tables")


@dataclass(frozen=True)
class Published:
    """What :func:`publish` wrote: the derived table, its files, the meta, each profile's
    canonical view (the most faithful first) and the plots drawn."""

    derived: DerivedTable
    files: TableFiles
    meta: dict[str, Any]
    views: dict[str, CanonicalView]
    plots: list[Path]


def publish(
    store: UnitStore,
    recipe: Figure[Any],
    recipe_id: tuple[str, int],
    results_dir: Path,
    plots_dir: Path | None = None,
    *,
    run: Mapping[str, Any] | None = None,
    sources: Mapping[str, DataSource] | None = None,
    own_plot: bool = True,
) -> Published:
    """Derive and write the figure's table, summary and meta from ``store``, then its plots.

    Args:
        recipe_id: the recipe's ``module:Class`` and version (the units the table holds).
        plots_dir: where the plots go (``None``: none, as ``make tables``).
        run: the record of the run that just computed, kept in the store; ``None``: the
            store's last one. A unit of its ``selection`` gone from the store: ``RuntimeError``.
        sources: what the running job knows of its units' data (labels older units).
        own_plot: draw the run's own plot when it is not one seed of its profile's view.
    """
    files = table_files(results_dir, store.paper, store.figure)
    with store.table_lock():
        derived = derive_table(store, recipe_id, sources)
        facts = write_table(derived, results_dir)
        if run is not None:
            run = redact({**run, "data_sources": _sources_of(derived, run["selection"])})
            write_last_run(store, run)
        gaps: dict[str, str] = {}
        views = canonical_views(derived, recipe, recipe_id, recorded_profiles(store), gaps)
        vanished = _vanished(derived, files, views, gaps)
        facts["summary_sha256"] = _write_summary(recipe, derived.table, views, files)
        extra = {"canonical_gaps": gaps, "canonical_vanished": vanished}
        records = {p: v.record() for p, v in views.items()}
        meta = write_meta(files, run or load_last_run(store), derived, facts, records, extra)
        plots = []
        if plots_dir is not None:
            plots = draw_plots(recipe, derived.table, meta, Path(plots_dir), views, own=own_plot)
    return Published(derived, files, meta, views, plots)


def _sources_of(derived: DerivedTable, ids: Sequence[str]) -> list[dict[str, Any]]:
    lost = sorted(set(ids) - {u.unit_id for u in derived.units})
    if lost:
        raise RuntimeError(
            f"{derived.paper}/{derived.figure}: unit(s) {', '.join(lost)} vanished from the "
            "store while the table was derived (another worker ran force=true?); run again"
        )
    return data_sources(derived, ids)


def _vanished(
    derived: DerivedTable, files: TableFiles, views: Mapping[str, Any], gaps: dict[str, str]
) -> list[str]:
    """The profiles the previous ``meta.json`` had a view of and that have none now (one
    warning line each)."""
    try:
        before = read_meta(files.meta)
    except (OSError, ValueError):
        before = None
    canonical = before.get("canonical") if isinstance(before, dict) else None
    previous = [str(p) for p in canonical] if isinstance(canonical, dict) else []
    vanished = [p for p in previous if p not in views]
    for profile in vanished:
        why = gaps.setdefault(profile, "none of its units is in the table")
        log.warning(
            "%s/%s: profile %s had a canonical view and has none now: %s",
            derived.paper,
            derived.figure,
            profile,
            why,
        )
    return vanished


def _write_summary(
    recipe: Figure[Any], table: pd.DataFrame, views: Mapping[str, CanonicalView], files: TableFiles
) -> str | None:
    """Write ``summary.csv`` from the canonical views (or remove it); return its SHA-256."""
    summary = canonical_summary(recipe, table, views)
    if summary is None:
        files.summary.unlink(missing_ok=True)  # no canonical view: no summary to show
        return None
    data = summary.to_csv(index=False).encode("utf-8")
    atomic_write_bytes(files.summary, data)
    return sha256(data)


def shown_overrides(meta: Mapping[str, Any]) -> list[str]:
    """The run's overrides as a plot shows them: a study's storage (where it is kept, not what
    the run computes) left out, any other credential redacted."""
    overrides = [str(o) for o in meta.get("overrides") or []]
    return redact([o for o in overrides if not o.partition("=")[0].endswith(".storage")])


def draw_plots(
    recipe: Figure[Any],
    table: pd.DataFrame,
    meta: Mapping[str, Any],
    plots_dir: Path,
    views: Mapping[str, CanonicalView],
    own: bool = True,
) -> list[Path]:
    """The default plot and, with ``own``, the recorded run's own when it is not canonical."""
    paper, figure = str(meta["paper"]), str(meta["figure"])
    plots = draw_canonical(recipe, table, views, plots_dir / paper / figure, meta)
    ids = [str(u) for u in meta.get("selection") or []]
    if not own or not ids or "params" not in meta:
        return plots
    if is_canonical_run(views, str(meta.get("profile")), int(meta.get("seed") or 0), ids):
        return plots
    selection = select_units(table, ids)
    if selection.empty:
        return plots
    overrides = shown_overrides(meta)
    key = meta.get("data_key")
    stem = adhoc_stem(plots_dir, paper, figure, overrides, str(key) if key else None)
    params: Any = build_params(recipe.params_type, meta["params"], "params")
    return plots + draw(
        recipe, selection, params, stem, meta, caption=adhoc_footer(meta, overrides)
    )


def footer(meta: Mapping[str, Any], selected_units: int | None = None) -> str:
    """The provenance line under a plot of the run ``meta`` records (its seed and share of the
    table's units when the table holds more)."""
    sha = (meta.get("git_sha") or "no-git")[:10]
    text = f"privrepro {meta['paper']}/{meta['figure']} · profile={meta['profile']}"
    held = (meta.get("table") or {}).get("units")
    chosen = len(meta.get("selection") or []) if selected_units is None else selected_units
    if held is not None and held > chosen:
        text += f" · seed={meta.get('seed')} · {chosen} of the table's {held} units"
    return f"{text} · {sha}"


def canonical_footer(meta: Mapping[str, Any], view: CanonicalView) -> str:
    """The line under a default plot: figure, profile, and the seeds of its own parameters."""
    sha = (meta.get("git_sha") or "no-git")[:10]
    seeds = ", ".join(str(s) for s in view.seeds)
    return (
        f"privrepro {meta['paper']}/{meta['figure']} · profile={view.profile} · the figure's "
        f"own parameters, seed{'s' if len(view.seeds) > 1 else ''} {seeds} "
        f"({len(view.unit_ids)} units) · {sha}"
    )


def adhoc_footer(meta: Mapping[str, Any], overrides: Sequence[str]) -> str:
    """The line under an ad-hoc run's own plot: what it was run with."""
    sha = (meta.get("git_sha") or "no-git")[:10]
    varied = " ".join(varied_overrides(overrides)) or "the figure's parameters"
    return (
        f"privrepro {meta['paper']}/{meta['figure']} · ad-hoc run: {varied} · "
        f"not the figure's default plot · {sha}"
    )


def clear_temporaries(stem: Path) -> None:
    """Remove the temporaries a killed save of this plot left (older than a minute), and any
    older than an hour in its folder."""
    from privrepro.store.atomic import leftover_temporaries

    folder = Path(stem).parent
    names = (f"{Path(stem).name}.png", f"{Path(stem).name}.pdf")
    for stale in leftover_temporaries(folder, names, older_than_s=60.0) + leftover_temporaries(
        folder, older_than_s=3600.0
    ):
        stale.unlink(missing_ok=True)


def draw(
    recipe: Figure[Any],
    table: pd.DataFrame,
    params: Any,
    stem: Path,
    meta: Mapping[str, Any],
    caption: str | None = None,
) -> list[Path]:
    """Plot the table with the recipe; save PNG and PDF with ``caption`` (default
    :func:`footer`)."""
    from privrepro.plotting.style import save_figure

    clear_temporaries(stem)
    fig = render(recipe, table, params, meta)
    return save_figure(fig, stem, caption=caption or footer(meta))


def draw_canonical(
    recipe: Figure[Any],
    table: pd.DataFrame,
    views: Mapping[str, CanonicalView],
    stem: Path,
    meta: Mapping[str, Any],
) -> list[Path]:
    """The default plot: the most faithful profile's view, one panel per seed when several;
    with no view, an earlier default plot is retired."""
    from privrepro.plotting.style import save_figure

    view = default_view(views)
    if view is None:
        clear_temporaries(stem)
        retire_default_plot(stem, no_view_reason(meta))
        return []
    shown = {**meta, "profile": view.profile}
    caption = canonical_footer(meta, view)
    if len(view.seeds) == 1:
        rows = select_units(table, view.unit_ids)
        return draw(recipe, rows, view.params, stem, shown, caption=caption)
    clear_temporaries(stem)
    panels = [
        (
            f"seed {seed}",
            render(recipe, select_units(table, view.seed_ids(seed)), view.params, shown),
        )
        for seed in view.seeds
    ]
    fig = facet(panels, f"{meta['paper']}/{meta['figure']} — profile {view.profile}, every seed")
    return save_figure(fig, stem, caption=caption)
