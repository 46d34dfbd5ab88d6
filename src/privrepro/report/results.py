"""Read what the runner leaves for each figure: tables, summary, metadata and plot.

Layout (``docs/adding-a-figure.md``)::

    results/<paper>/<figure>.csv           the long tidy table (also .parquet)
    results/<paper>/<figure>.summary.csv   optional rows of the recipe's summarize
    results/<paper>/<figure>.meta.json     provenance: profile, seed, git sha, device, ...
    plots/<paper>/<figure>.png             the plot (and .pdf)

and, for the figures that exist but have not been run, ``conf/experiment/<paper>/<figure>.yaml``.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.bounded_read import TABLE_BYTES, UnsafeFile, read_bytes

__all__ = [
    "FigureResults",
    "ResultsError",
    "discover_configs",
    "load_figure",
    "load_results",
    "make_target",
]

log = logging.getLogger("privrepro.report")

_SUFFIXES = (".summary.csv", ".meta.json", ".csv", ".parquet")


class ResultsError(ValueError):
    """A results file that exists but cannot be read (names the file).

    :func:`load_figure` catches it and records it in ``FigureResults.error``.
    """


@dataclass
class FigureResults:
    """Everything the report knows about one figure; any part may be missing.

    Attributes:
        paper, figure: the figure's names (``cl``, ``fig2``).
        table: the tidy table, or ``None`` when the figure has not been run.
        summary: the ``summarize`` rows, or ``None``.
        meta: the ``.meta.json`` mapping (empty when absent).
        png, pdf: the plot files, when they exist.
        config_title: the first comment line of the figure's config, when one was found.
        error: why a results file that exists could not be read (then no results).
        canonical: each profile's canonical view (``meta.json``); ``table`` holds its units alone.
        table_units: how many units the whole table holds (scored or not), when known.
        no_canonical: why a table with units has no canonical one (``canonical_gaps``): the
            report says "no canonical view", not "not run".
        warnings: what reading the results set right (a summary re-derived), one line each.
    """

    paper: str
    figure: str
    table: pd.DataFrame | None = None
    summary: pd.DataFrame | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    png: Path | None = None
    pdf: Path | None = None
    config_title: str | None = None
    error: str | None = None
    canonical: dict[str, dict[str, Any]] = field(default_factory=dict)
    table_units: int | None = None
    no_canonical: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def ran(self) -> bool:
        """Whether the figure has results (a table or a summary)."""
        return self.table is not None or self.summary is not None

    @property
    def profile(self) -> str | None:
        """The profile the results were made under (metadata first, else the table's column)."""
        if self.meta.get("profile"):
            return str(self.meta["profile"])
        for df in (self.table, self.summary):
            if df is not None and "profile" in df.columns:
                profiles = sorted({str(p) for p in df["profile"].dropna().unique()})
                if profiles:
                    return ",".join(profiles)
        return None

    @property
    def title(self) -> str:
        """The recipe's title (metadata), else the config's first comment, else the name."""
        return str(self.meta.get("title") or self.config_title or self.figure)


def make_target(paper: str, figure: str) -> str:
    """The Makefile target that runs a figure: ``fig2`` of ``cl`` is ``make fig-cl-2``."""
    fid = figure[3:] if figure.startswith("fig") and len(figure) > 3 else figure
    return f"make fig-{paper}-{fid}"


def _read_table(path: Path, tree: Path) -> pd.DataFrame:
    """A table file read bounded (a regular file inside ``tree``: never a pipe or a device)."""
    import io

    try:
        data = read_bytes(path, TABLE_BYTES, tree=tree)
    except UnsafeFile as e:
        raise ResultsError(str(e)) from e
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(io.BytesIO(data))
        return pd.read_csv(io.BytesIO(data))
    except Exception as e:  # pandas raises many kinds; name the file
        raise ResultsError(f"{path}: cannot be read as a table: {e}") from e


def _present(path: Path) -> bool:
    """Whether anything is at ``path`` (a pipe or a device too: the reader then refuses it in
    one line rather than passing over it as if the figure had not run)."""
    return os.path.lexists(path)


def load_figure(
    results_dir: Path, plots_dir: Path, paper: str, figure: str, conf: Path | None = None
) -> FigureResults:
    """Read one figure's outputs. The Parquet is the table of record (a CSV that no longer matches
    it is reported in one warning line and ignored); a CSV is read only when it is alone.

    Every file is read bounded (:mod:`privrepro.bounded_read`) and checked against the hash
    ``meta.json`` records of it: a Parquet that differs is not scored (``error``); a
    ``summary.csv`` that differs is reported (``warnings``) and the summary re-derived in memory
    from the verified table (:func:`_verified_summary`).

    A file that exists but cannot be read does not stop the report: the figure gets no results
    and ``error`` says which file failed and why. ``conf``: the config root whose experiment
    config names the figure's recipe (default: ``PRIVREPRO_CONF`` or ``conf/``).
    """
    from privrepro.runner.figure_tables import read_meta, read_table

    base = results_dir / paper
    fr = FigureResults(paper=paper, figure=figure)
    csv, parquet = base / f"{figure}.csv", base / f"{figure}.parquet"
    summary, meta = base / f"{figure}.summary.csv", base / f"{figure}.meta.json"
    try:
        if _present(meta):
            try:
                loaded = read_meta(meta, tree=results_dir)
            except UnsafeFile as e:
                raise ResultsError(str(e)) from e
            except (OSError, ValueError) as e:
                raise ResultsError(f"{meta}: not valid JSON: {e}") from e
            fr.meta = loaded if isinstance(loaded, dict) else {}
        recorded_facts = fr.meta.get("table")
        facts: dict[str, Any] = recorded_facts if isinstance(recorded_facts, dict) else {}
        if _present(parquet):
            try:
                raw = read_bytes(parquet, TABLE_BYTES, tree=results_dir)
            except UnsafeFile as e:
                raise ResultsError(str(e)) from e
            recorded = facts.get("parquet_sha256")
            if recorded and hashlib.sha256(raw).hexdigest() != recorded:
                raise ResultsError(
                    f"{parquet} differs from the table its meta.json records (edited?); "
                    "not scored: run `make tables` to derive it again from the store"
                )
            try:
                fr.table = read_table(results_dir, paper, figure, fr.meta)
            except UnsafeFile as e:
                raise ResultsError(str(e)) from e
            except Exception as e:  # pandas raises many kinds; name the file
                raise ResultsError(f"{parquet}: cannot be read as a table: {e}") from e
        elif _present(csv):
            fr.table = _read_table(csv, results_dir)
        if _present(summary):
            fr.summary = _read_summary(fr, summary, results_dir, facts, conf)
        elif facts.get("summary_sha256"):
            fr.summary = _verified_summary(fr, summary, "is missing", conf)
    except ResultsError as e:
        fr.table, fr.summary, fr.error = None, None, str(e)
    _keep_canonical(fr)
    png, pdf = plots_dir / paper / f"{figure}.png", plots_dir / paper / f"{figure}.pdf"
    fr.png = png if _present(png) else None  # not a plot: refused in one line when embedded
    fr.pdf = pdf if pdf.is_file() else None
    return fr


def _read_summary(
    fr: FigureResults, path: Path, results_dir: Path, facts: dict[str, Any], conf: Path | None
) -> pd.DataFrame | None:
    """``summary.csv`` when it matches the hash ``meta.json`` records of it; otherwise (edited,
    unreadable, or not recorded by a meta that records canonical views) the summary re-derived
    from the verified table, with one warning line naming the file."""
    if "summary_sha256" not in facts:  # a meta.json written before summaries were hashed
        if isinstance(fr.meta.get("canonical"), dict) and fr.table is not None:
            return _verified_summary(fr, path, "has no hash in its meta.json", conf)
        return _read_table(path, results_dir)
    try:
        data = read_bytes(path, TABLE_BYTES, tree=results_dir)
    except UnsafeFile as e:
        return _verified_summary(fr, path, f"cannot be read ({e.what})", conf)
    if facts["summary_sha256"] is None:
        return _verified_summary(fr, path, "is not the one its meta.json records (none)", conf)
    if hashlib.sha256(data).hexdigest() != facts["summary_sha256"]:
        return _verified_summary(fr, path, "differs from its hash in meta.json (edited?)", conf)
    import io

    try:
        return pd.read_csv(io.BytesIO(data))
    except Exception as e:  # pandas raises many kinds; name the file
        raise ResultsError(f"{path}: cannot be read as a table: {e}") from e


def _verified_summary(
    fr: FigureResults, path: Path, why: str, conf: Path | None = None
) -> pd.DataFrame | None:
    """The figure's summary re-derived in memory from its verified table and the canonical views
    its ``meta.json`` records (:func:`privrepro.runner.canonical.canonical_summary`, the recipe the
    figure's experiment config names); ``why`` the file was not used is one warning line."""
    line = f"{path} {why}: the summary is derived again from the verified table"
    fr.warnings.append(line)
    log.warning("%s", line)
    if fr.table is None:
        return None
    from privrepro.runner.canonical import canonical_summary, views_from_records
    from privrepro.runner.figure_tables import figure_recipe
    from privrepro.runner.recipe_config import load_recipe

    try:
        recipe = load_recipe(figure_recipe(fr.paper, fr.figure, conf)[0])
        views = views_from_records(recipe, fr.meta.get("canonical") or {})
        return canonical_summary(recipe, fr.table, views)
    except Exception as e:  # an unknown figure, a view that does not validate
        raise ResultsError(f"{path}: the summary cannot be derived again ({e})") from e


def _keep_canonical(fr: FigureResults) -> None:
    """Restrict the table to the canonical units its ``meta.json`` records (each profile's own
    parameters, :mod:`privrepro.runner.canonical`): ad-hoc runs and sweeps are in the table but
    are not scored. A figure whose store holds units but no run of its own parameters has no
    canonical view (``no_canonical`` says why): nothing of it is scored, and it is not "not run".
    A ``meta.json`` written before canonical views were recorded leaves the table whole."""
    views = fr.meta.get("canonical")
    if not isinstance(views, dict) or fr.table is None or "unit_id" not in fr.table.columns:
        return
    fr.canonical = {str(p): v for p, v in views.items() if isinstance(v, dict)}
    ids = {str(u) for v in fr.canonical.values() for u in v.get("unit_ids") or []}
    fr.table_units = int(fr.table["unit_id"].nunique())
    kept = fr.table[fr.table["unit_id"].astype(str).isin(ids)].reset_index(drop=True)
    if kept.empty:
        if fr.table_units:
            gaps = fr.meta.get("canonical_gaps")
            said = (
                "; ".join(f"profile {p}: {w}" for p, w in gaps.items())
                if isinstance(gaps, dict) and gaps
                else "no profile's own configuration is held at every unit of a seed"
            )
            fr.no_canonical = f"{fr.table_units} verified unit(s), no canonical view ({said})"
        fr.table, fr.summary = None, None
    else:
        fr.table = kept


def _figure_name(path: Path) -> str | None:
    for suffix in _SUFFIXES:
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return None


def discover_configs(conf_dir: Path | None) -> dict[tuple[str, str], str | None]:
    """The figures with a config ``conf/experiment/<paper>/<figure>.yaml``, with their first comment.

    The first comment line of a config says what the figure is (``make help`` shows it too).
    """
    out: dict[tuple[str, str], str | None] = {}
    if conf_dir is None or not conf_dir.is_dir():
        return out
    for path in sorted(conf_dir.glob("*/*.yaml")):
        title = None
        for line in path.read_text(encoding="utf-8").splitlines():
            text = line.strip()
            if text.startswith("#") and not text.startswith("# @package"):
                title = text.lstrip("#").strip() or None
                break
        out[(path.parent.name, path.stem)] = title
    return out


def load_results(
    results_dir: str | Path,
    plots_dir: str | Path,
    conf_dir: str | Path | None = None,
    extra: list[tuple[str, str]] | None = None,
    papers: Collection[str] | None = None,
) -> dict[tuple[str, str], FigureResults]:
    """Every figure that has results, a config, or is named in ``extra`` (e.g. by a reference).

    ``papers``, when given, are the only folders of ``results_dir`` read as papers' (others, such
    as ``results/gpu-check/``, hold a tool's output, not a paper's figures).

    Returns a mapping ``(paper, figure) → FigureResults`` sorted by paper then figure; figures
    without results have ``table is None`` so the report can say "not run".
    """
    results_dir, plots_dir = Path(results_dir), Path(plots_dir)
    configs = discover_configs(Path(conf_dir) if conf_dir is not None else None)
    keys: set[tuple[str, str]] = set(configs) | set(extra or [])
    if results_dir.is_dir():
        for paper_dir in results_dir.iterdir():
            if not paper_dir.is_dir() or (papers is not None and paper_dir.name not in papers):
                continue
            for path in paper_dir.iterdir():
                name = _figure_name(path)
                if name and path.is_file():
                    keys.add((paper_dir.name, name))
    out = {}
    root = Path(conf_dir).parent if conf_dir is not None else None  # conf/experiment → conf/
    for paper, figure in sorted(keys):
        fr = load_figure(results_dir, plots_dir, paper, figure, root)
        fr.config_title = configs.get((paper, figure))
        out[(paper, figure)] = fr
    return out
