"""Run one figure: config → validated params → run units (resumable) → table → plot.

The steps, in order, each before the next can start:

1. **Validate.** Build the recipe's parameter dataclass from ``params`` merged with the profile's
   block and the command-line overrides; any unknown key or out-of-range value raises
   :class:`~privrepro.config.ConfigError` naming key, value and range. Nothing has been computed.
2. **Units.** Each unit dict is hashed with the figure, profile, seed and recipe version; a unit
   whose folder is complete in the store is loaded, the rest are computed and written atomically.
3. **Table.** The units' rows are gathered into ``results/<paper>/<figure>.csv`` (and ``.parquet``),
   with ``<figure>.summary.csv`` and ``<figure>.meta.json`` (provenance). In a multirun sweep,
   workers merge their rows into the table under a file lock, replacing only their own units.
4. **Plot.** ``plots/<paper>/<figure>.png`` and ``.pdf`` from the table alone.
"""

from __future__ import annotations

import importlib
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from privrepro.config.validation import ConfigError, assumptions_of, build_params
from privrepro.figures.api import Figure, UnitContext
from privrepro.runner.environment import resolve_device, run_environment
from privrepro.store.atomic import atomic_write_table, atomic_write_text
from privrepro.store.units import UnitStore, unit_hash

__all__ = [
    "FigureRun",
    "compose",
    "effective_params",
    "load_recipe",
    "run_config",
    "run_experiment",
]

log = logging.getLogger("privrepro.runner")

PROFILES = ("smoke", "paper", "tiny")


@dataclass
class FigureRun:
    """What one run of a figure produced."""

    paper: str
    figure: str
    table: pd.DataFrame
    table_path: Path
    plot_paths: list[Path]
    computed: int
    reused: int
    wall_time_s: float


def load_recipe(path: str) -> Figure[Any]:
    """Instantiate the recipe named ``package.module:Class``."""
    module_name, _, class_name = path.partition(":")
    if not class_name:
        raise ConfigError("figure.recipe", path, "must read 'package.module:ClassName'")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ConfigError("figure.recipe", path, f"cannot be imported ({exc})") from exc
    if not (isinstance(cls, type) and issubclass(cls, Figure)):
        raise ConfigError(
            "figure.recipe", path, "must name a privrepro.figures.api.Figure subclass"
        )
    return cls()


def _parse_param_overrides(overrides: Sequence[str]) -> dict[str, Any]:
    """The ``params.*`` command-line overrides as a nested mapping (Hydra's grammar)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(list(overrides))
    out = OmegaConf.create({})
    for ov in parsed:
        key = ov.key_or_group
        if key.startswith("params.") and not ov.is_delete() and not ov.is_sweep_override():
            OmegaConf.update(out, key[len("params.") :], ov.value(), merge=False)
    return OmegaConf.to_container(out)  # type: ignore[return-value]


def effective_params(cfg: DictConfig, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """``params`` merged with ``profiles[<profile>]``, then the command line's ``params.*`` again.

    The profile block shrinks a grid for ``smoke``/``tiny``; an explicit command-line override
    always wins over it.
    """
    profile = str(cfg.profile.name)
    base = OmegaConf.create(OmegaConf.to_container(cfg.get("params") or {}, resolve=True))
    blocks = cfg.get("profiles") or {}
    block = blocks.get(profile) if profile in blocks else None
    merged = OmegaConf.merge(base, block or {})
    merged = OmegaConf.merge(merged, _parse_param_overrides(overrides))
    return OmegaConf.to_container(merged, resolve=True)  # type: ignore[return-value]


def _validate_root(cfg: DictConfig) -> None:
    profile = cfg.get("profile", {}).get("name")
    if profile not in PROFILES:
        raise ConfigError("profile.name", profile, f"must be one of {list(PROFILES)}")
    seed = cfg.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError("seed", seed, "must be an integer >= 0")
    for key in ("paper", "name", "recipe"):
        if not cfg.get("figure", {}).get(key):
            raise ConfigError(f"figure.{key}", None, "must be set by the experiment config")


def _unit_identity(
    paper: str, figure: str, recipe: Figure[Any], profile: str, seed: int, unit: Mapping[str, Any]
) -> dict[str, Any]:
    return {
        "paper": paper,
        "figure": figure,
        "profile": profile,
        "seed": seed,
        "recipe": f"{type(recipe).__module__}:{type(recipe).__qualname__}",
        "version": getattr(recipe, "version", 1),
        "unit": dict(unit),
    }


def _jsonable(obj: Any) -> Any:
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    return obj


class _UnitLog:
    """Attach a file handler for the ``privrepro`` logger while a unit computes."""

    def __init__(self, path: Path) -> None:
        self.handler = logging.FileHandler(path, encoding="utf-8")
        self.handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        self.logger = logging.getLogger("privrepro")

    def __enter__(self) -> None:
        self.logger.addHandler(self.handler)
        if self.logger.level == logging.NOTSET or self.logger.level > logging.INFO:
            self.logger.setLevel(logging.INFO)

    def __exit__(self, *exc: object) -> None:
        self.logger.removeHandler(self.handler)
        self.handler.close()


def _merge_into_table(
    path: Path, rows: pd.DataFrame, unit_ids: set[str], profile: str, multirun: bool
) -> pd.DataFrame:
    """The figure's table after this run: replaced (single run) or merged under a lock (sweep)."""
    if not multirun:
        atomic_write_table(rows, path)
        return rows
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        table = rows
        if path.with_suffix(".parquet").is_file() or path.is_file():
            old = (
                pd.read_parquet(path.with_suffix(".parquet"))
                if path.with_suffix(".parquet").is_file()
                else pd.read_csv(path)
            )
            old = old[(old["profile"] == profile) & ~old["unit_id"].isin(unit_ids)]
            table = pd.concat([old, rows], ignore_index=True)
        atomic_write_table(table, path)
    return table


def run_config(
    cfg: DictConfig, overrides: Sequence[str] = (), multirun: bool = False, repo: Path | None = None
) -> FigureRun:
    """Run the figure ``cfg`` describes (a composed root config)."""
    started = time.perf_counter()
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    _validate_root(cfg)
    paper, figure = str(cfg.figure.paper), str(cfg.figure.name)
    recipe = load_recipe(str(cfg.figure.recipe))
    params: Any = build_params(recipe.params_type, effective_params(cfg, overrides), "params")
    profile, seed, force = str(cfg.profile.name), int(cfg.seed), bool(cfg.get("force", False))
    requested = (
        str(cfg.device)
        if str(cfg.get("device", "auto")) != "auto"
        else str(cfg.profile.get("device", "auto"))
    )
    device = resolve_device(requested)
    paths = cfg.paths
    store = UnitStore(Path(paths.experiments_dir), paper, figure)
    env = run_environment(device, profile, repo)

    units = recipe.units(params)
    identities = [_unit_identity(paper, figure, recipe, profile, seed, u) for u in units]
    ids = [unit_hash(i) for i in identities]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{paper}/{figure}: two run units have the same config; units must differ")
    store.sweep_stale_temporaries()

    frames: list[pd.DataFrame] = []
    computed = reused = 0
    show = bool(cfg.get("progress", True))
    from privrepro.progress import progress_bar

    bar = progress_bar(
        list(zip(units, identities, ids, strict=True)),
        desc=f"{paper}/{figure}",
        enabled=show and len(units) > 1,
        unit="unit",
    )
    for unit, identity, uid in bar:
        if force and store.is_complete(uid):
            store.discard(uid)
        if store.is_complete(uid):
            rows = store.load_rows(uid)
            reused += 1
        else:
            with store.building(uid) as tmp:
                ctx = UnitContext(
                    seed=seed,
                    unit_id=uid,
                    profile=profile,
                    device=device,
                    data_dir=Path(paths.data_dir),
                    cache_dir=Path(paths.cache_dir),
                    show_progress=show,
                )
                t0 = time.perf_counter()
                with _UnitLog(tmp / "log.txt"):
                    log.info(
                        "unit %s of %s/%s: %s", uid, paper, figure, json.dumps(unit, default=str)
                    )
                    rows = recipe.compute(dict(unit), ctx)
                    log.info("unit %s: %d rows in %.2f s", uid, len(rows), time.perf_counter() - t0)
                if not isinstance(rows, pd.DataFrame):
                    raise TypeError(f"{type(recipe).__name__}.compute must return a DataFrame")
                unit_env = {
                    **env,
                    "wall_time_s": time.perf_counter() - t0,
                    "unit_id": uid,
                    "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                }
                store.write_unit(tmp, identity, rows, unit_env)
            computed += 1
        rows = rows.copy()
        for col, value in (
            ("paper", paper),
            ("figure", figure),
            ("profile", profile),
            ("seed", seed),
            ("unit_id", uid),
        ):
            rows[col] = value
        frames.append(rows)

    ours = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    front = ["paper", "figure", "profile", "seed", "unit_id"]
    ours = ours[front + [c for c in ours.columns if c not in front]]
    results = Path(paths.results_dir) / paper
    table_path = results / f"{figure}.csv"
    table = _merge_into_table(table_path, ours, set(ids), profile, multirun)

    summary = recipe.summarize(table, params)
    if summary is not None:
        atomic_write_table(summary, results / f"{figure}.summary.csv", parquet=False)

    wall = time.perf_counter() - started
    meta = {
        "paper": paper,
        "figure": figure,
        "title": recipe.title,
        "kind": recipe.kind,
        "recipe": str(cfg.figure.recipe),
        "profile": profile,
        "seed": seed,
        "started": started_at,
        "wall_time_s": round(wall, 3),
        "units_computed": computed,
        "units_reused": reused,
        "units": ids,
        "params": _jsonable(params),
        "assumptions": assumptions_of(params),
        "source": OmegaConf.to_container(cfg.figure.source, resolve=True)
        if cfg.figure.get("source") is not None
        else {},
        **env,
    }
    atomic_write_text(results / f"{figure}.meta.json", json.dumps(meta, indent=2, default=str))

    plot_paths: list[Path] = []
    if cfg.get("plot", True) and len(table):
        plot_paths = draw(recipe, table, params, Path(paths.plots_dir) / paper / figure, meta)
    return FigureRun(paper, figure, table, table_path, plot_paths, computed, reused, wall)


def draw(
    recipe: Figure[Any], table: pd.DataFrame, params: Any, stem: Path, meta: Mapping[str, Any]
) -> list[Path]:
    """Plot the table with the recipe and save PNG and PDF with a provenance footer."""
    from privrepro.plotting.style import save_figure, use_style

    use_style()
    fig = recipe.plot(table, params)
    sha = (meta.get("git_sha") or "no-git")[:10]
    footer = f"privrepro {meta['paper']}/{meta['figure']} · profile={meta['profile']} · {sha}"
    return save_figure(fig, stem, caption=footer)


def compose(experiment: str, overrides: Sequence[str] = (), conf: Path | None = None) -> DictConfig:
    """Compose the root config for ``experiment`` with overrides, outside a Hydra app."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from privrepro.runner.catalog import conf_dir

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(conf or conf_dir()), version_base="1.3"):
        return hydra_compose("config", overrides=[f"experiment={experiment}", *overrides])


def run_experiment(
    experiment: str, overrides: Sequence[str] = (), conf: Path | None = None
) -> FigureRun:
    """Compose and run one experiment in this process (what tests and ``make figures`` use)."""
    cfg = compose(experiment, overrides, conf)
    return run_config(cfg, overrides)
