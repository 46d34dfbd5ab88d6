"""The plan step: from a config to the units a figure runs, checked before any compute.

    plan = plan_experiment("pb/fig2", ["profile=tiny"])   # compose, then plan_config
    plan = plan_config(cfg)                               # a composed root config (the Hydra app)
    plan.recipe, plan.params, plan.units, plan.unit_ids, plan.sources

More in ``docs/modules.md``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from privrepro.config.validation import ConfigError, build_params
from privrepro.data.provenance import DataSource
from privrepro.figures.api import Figure
from privrepro.runner.preflight import (
    check_device_memory,
    check_memory,
    check_output_paths,
    check_unit_list,
    validate_root,
)
from privrepro.runner.recipe_config import load_recipe, recipe_version
from privrepro.runner.storages import check_storages, without_study_locations
from privrepro.runner.time_budget import check_compute_time, launcher_limit
from privrepro.store.identity import unit_hash
from privrepro.store.units import UnitStore


def compose(experiment: str, overrides: Sequence[str] = (), conf: Path | None = None) -> DictConfig:
    """Compose the root config for ``experiment`` with overrides, outside a Hydra app."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    from privrepro.runner.catalog import conf_dir

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(conf or conf_dir()), version_base="1.3"):
        return hydra_compose("config", overrides=[f"experiment={experiment}", *overrides])


def configured_recipe(experiment: str, conf: Path | None = None) -> Figure[Any]:
    """The recipe the experiment config ``conf/experiment/<paper>/<figure>.yaml`` names."""
    return load_recipe(str(compose(experiment, (), conf).figure.recipe))


def effective_params(cfg: DictConfig) -> dict[str, Any]:
    """The ``params`` Hydra composed (recipe defaults, experiment, profile, command line),
    resolved: exactly what ``--cfg job`` prints."""
    return OmegaConf.to_container(cfg.params, resolve=True)  # type: ignore[return-value]


def unit_identity(
    paper: str,
    figure: str,
    recipe: Figure[Any],
    profile: str,
    seed: int,
    unit: Mapping[str, Any],
    data: DataSource | None = None,
) -> dict[str, Any]:
    """What names a unit in the store (its ``config.json``; its hash is the unit's folder),
    with the fingerprint of the data it reads from a data root, if any."""
    identity = {
        "paper": paper,
        "figure": figure,
        "profile": profile,
        "seed": seed,
        "recipe": f"{type(recipe).__module__}:{type(recipe).__qualname__}",
        "version": getattr(recipe, "version", 1),
        "unit": without_study_locations(unit),  # where a study is kept is no part of it
    }
    if data is not None and data.fingerprint is not None:
        identity["data"] = data.fingerprint
    return identity


def _check_unique_units(units: Sequence[Mapping[str, Any]], ids: Sequence[str]) -> None:
    seen: dict[str, int] = {}
    for i, uid in enumerate(ids):
        if uid in seen:
            raise ConfigError(
                "params",
                json.dumps(units[i], default=str)[:200],
                f"gives run units {seen[uid]} and {i} the same config; a repeated value in a "
                "list of params makes the same unit twice",
            )
        seen[uid] = i


@dataclass(frozen=True)
class FigurePlan:
    """A figure's validated parameters and units, ready to run: each unit's identity
    (:func:`unit_identity`), its hash (its folder's name) and the data it runs on."""

    cfg: DictConfig
    paper: str
    figure: str
    recipe: Figure[Any]
    params: Any
    device: str
    units: list[dict[str, Any]]
    identities: list[dict[str, Any]]
    unit_ids: list[str]
    sources: list[DataSource]

    @property
    def profile(self) -> str:
        return str(self.cfg.profile.name)

    @property
    def seed(self) -> int:
        return int(self.cfg.seed)

    @property
    def recipe_id(self) -> tuple[str, int]:
        """The recipe's ``module:Class`` and version: which units of the store the table holds."""
        cls = type(self.recipe)
        return f"{cls.__module__}:{cls.__qualname__}", recipe_version(self.recipe)


def _check_weights(params: Any, paths: Any) -> None:
    """Every weights file the parameters need exists or can be downloaded."""
    from privrepro.models.weights import check_weights, weights_needed

    if weights_needed(params):
        from functools import partial

        from privrepro.continual.features import has_cached_features

        cached = partial(has_cached_features, Path(paths.cache_dir))
        check_weights(params, Path(paths.data_dir), cached)


def requested_device(cfg: DictConfig) -> str:
    """``device=`` when set, else the profile's (``auto``, ``cpu`` or ``cuda``)."""
    if str(cfg.get("device", "auto")) != "auto":
        return str(cfg.device)
    return str(cfg.profile.get("device", "auto"))


def plan_config(cfg: DictConfig, *, check: bool = True) -> FigurePlan:
    """The plan of the figure ``cfg`` (a composed root config) describes.

    With ``check``, the preflight too (device, weights, compute time, host and device memory,
    output folders, stores: one ``ConfigError`` line each); without it (the rehearsal, which
    checks the target machine), ``device`` is the one requested.
    """
    validate_root(cfg)
    paper, figure = str(cfg.figure.paper), str(cfg.figure.name)
    recipe = load_recipe(str(cfg.figure.recipe))
    params: Any = build_params(recipe.params_type, effective_params(cfg), "params")
    profile, seed = str(cfg.profile.name), int(cfg.seed)
    device = requested_device(cfg)
    if check:
        from privrepro.runner.environment import resolve_device

        device = resolve_device(device)
    units = recipe.units(params)  # grids count their units before making them (MAX_UNITS)
    check_unit_list(units)
    data_dir = Path(cfg.paths.data_dir)  # resolved once: an interpolation costs a parse a read
    sources = [recipe.data_source(u, data_dir) for u in units]
    if check:
        _check_weights(params, cfg.paths)  # missing pretrained weights: one line
    identities = [
        unit_identity(paper, figure, recipe, profile, seed, u, source)
        for u, source in zip(units, sources, strict=True)
    ]
    ids = [unit_hash(i) for i in identities]
    _check_unique_units(units, ids)
    if check:  # the units still to compute within the stated time (max_hours, the launcher's)
        check_compute_time(
            UnitStore(Path(cfg.paths.experiments_dir), paper, figure),
            identities,
            ids,
            cfg.get("max_hours"),
            launcher_limit(),
            bool(cfg.get("force", False)),
        )
        check_memory(recipe, params)
        check_device_memory(recipe, units, device)
        check_output_paths(cfg, plot=bool(cfg.get("plot", True)))
        check_storages(params, cfg)  # every study and tracking store opens
    return FigurePlan(cfg, paper, figure, recipe, params, device, units, identities, ids, sources)


def plan_experiment(
    experiment: str, overrides: Sequence[str] = (), conf: Path | None = None, *, check: bool = True
) -> FigurePlan:
    """Compose ``experiment`` with ``overrides`` and plan it (:func:`plan_config`)."""
    return plan_config(compose(experiment, overrides, conf), check=check)
