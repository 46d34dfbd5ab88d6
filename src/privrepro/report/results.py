"""Read what the runner leaves for each figure: tables, summary, metadata and plot.

Layout (``docs/adding-a-figure.md``)::

    results/<paper>/<figure>.csv           the long tidy table (also .parquet)
    results/<paper>/<figure>.summary.csv   optional rows of the recipe's summarize
    results/<paper>/<figure>.meta.json     provenance: profile, seed, git sha, device, ...
    plots/<paper>/<figure>.png             the plot (and .pdf)

and, for the figures that exist but have not been run, ``conf/experiment/<paper>/<figure>.yaml``.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "FigureResults",
    "ResultsError",
    "discover_configs",
    "load_figure",
    "load_results",
    "make_target",
]

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
        error: why a results file that exists could not be read (the figure is then treated as
            having no results, and the report says why).
        canonical: the canonical view of each profile (``meta.json``'s ``canonical``: seeds,
            unit ids, parameters); ``table`` then holds those units alone.
        table_units: how many units the whole table holds (scored or not), when known.
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


def _read_table(path: Path) -> pd.DataFrame:
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path)
        return pd.read_csv(path)
    except Exception as e:  # pandas raises many kinds; name the file
        raise ResultsError(f"{path}: cannot be read as a table: {e}") from e


def load_figure(results_dir: Path, plots_dir: Path, paper: str, figure: str) -> FigureResults:
    """Read one figure's outputs. The Parquet is the table of record (a CSV that no longer matches
    it is reported in one warning line and ignored); a CSV is read only when it is alone.

    A file that exists but cannot be read does not stop the report: the figure gets no results
    and ``error`` says which file failed and why.
    """
    base = results_dir / paper
    fr = FigureResults(paper=paper, figure=figure)
    csv, parquet = base / f"{figure}.csv", base / f"{figure}.parquet"
    summary, meta = base / f"{figure}.summary.csv", base / f"{figure}.meta.json"
    try:
        if meta.is_file():
            try:
                loaded = json.loads(meta.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise ResultsError(f"{meta}: not valid JSON: {e}") from e
            fr.meta = loaded if isinstance(loaded, dict) else {}
        if parquet.is_file():
            from privrepro.runner.figure_tables import read_table

            try:
                fr.table = read_table(results_dir, paper, figure, fr.meta)
            except Exception as e:  # pandas raises many kinds; name the file
                raise ResultsError(f"{parquet}: cannot be read as a table: {e}") from e
        elif csv.is_file():
            fr.table = _read_table(csv)
        if summary.is_file():
            fr.summary = _read_table(summary)
    except ResultsError as e:
        fr.table, fr.summary, fr.error = None, None, str(e)
    _keep_canonical(fr)
    png, pdf = plots_dir / paper / f"{figure}.png", plots_dir / paper / f"{figure}.pdf"
    fr.png = png if png.is_file() else None
    fr.pdf = pdf if pdf.is_file() else None
    return fr


def _keep_canonical(fr: FigureResults) -> None:
    """Restrict the table to the canonical units its ``meta.json`` records (each profile's own
    parameters, :mod:`privrepro.runner.canonical`): ad-hoc runs and sweeps are in the table but
    are not scored. A figure whose store holds no run of its own parameters counts as not run.
    A ``meta.json`` written before canonical views were recorded leaves the table whole."""
    views = fr.meta.get("canonical")
    if not isinstance(views, dict) or fr.table is None or "unit_id" not in fr.table.columns:
        return
    fr.canonical = {str(p): v for p, v in views.items() if isinstance(v, dict)}
    ids = {str(u) for v in fr.canonical.values() for u in v.get("unit_ids") or []}
    fr.table_units = int(fr.table["unit_id"].nunique())
    kept = fr.table[fr.table["unit_id"].astype(str).isin(ids)].reset_index(drop=True)
    if kept.empty:
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
    for paper, figure in sorted(keys):
        fr = load_figure(results_dir, plots_dir, paper, figure)
        fr.config_title = configs.get((paper, figure))
        out[(paper, figure)] = fr
    return out
