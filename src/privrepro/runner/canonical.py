"""A figure's canonical view: for each profile, the units its own configuration makes, every seed.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.bounded_read import UNIT_JSON_BYTES, read_json
from privrepro.config.secrets import redact
from privrepro.config.validation import assumptions_of, build_params
from privrepro.figures.api import Figure
from privrepro.runner.figure_tables import DerivedTable, StoredUnit
from privrepro.store.atomic import atomic_write_text
from privrepro.store.identity import canonical_json
from privrepro.store.units import UnitStore

log = logging.getLogger("privrepro.canonical")

#: Profiles from the most faithful to the least: the default plot shows the first one held.
FAITHFUL_ORDER = ("paper", "smoke", "tiny")
#: A profile's record of its own units in the store: ``canonical-<profile>.json``.
RECORD_PREFIX = "canonical-"


def _plain(params: Any) -> Any:
    return asdict(params) if is_dataclass(params) and not isinstance(params, type) else params


def select_units(table: pd.DataFrame, unit_ids: Sequence[str]) -> pd.DataFrame:
    """The rows of ``unit_ids``, in that order (each unit's rows in their own order)."""
    if table.empty:
        return table
    order = {uid: i for i, uid in enumerate(unit_ids)}
    picked = table[table["unit_id"].isin(order)]
    rank = picked["unit_id"].map(order)
    return picked.iloc[rank.argsort(kind="stable")].reset_index(drop=True)


@dataclass(frozen=True)
class CanonicalView:
    """The canonical units of one profile: at each of ``seeds`` (those holding them all) the
    ``units_per_seed`` units its own ``params`` make, in the recipe's order."""

    profile: str
    params: Any
    seeds: list[int]
    unit_ids: list[str]
    units_per_seed: int

    def seed_ids(self, seed: int) -> list[str]:
        """The canonical units of ``seed``."""
        i = self.seeds.index(seed)
        return self.unit_ids[i * self.units_per_seed : (i + 1) * self.units_per_seed]

    def record(self) -> dict[str, Any]:
        """What ``meta.json`` keeps of the view (``canonical.<profile>``)."""
        return {
            "profile": self.profile,
            "seeds": list(self.seeds),
            "units_per_seed": self.units_per_seed,
            "unit_ids": list(self.unit_ids),
            "params": _plain(self.params),
            "assumptions": assumptions_of(self.params) if is_dataclass(self.params) else {},
        }


def faithful_first(profiles: Sequence[str]) -> list[str]:
    """``profiles`` from the most faithful (:data:`FAITHFUL_ORDER`), then the others by name."""
    known = [p for p in FAITHFUL_ORDER if p in profiles]
    return known + sorted(set(profiles) - set(FAITHFUL_ORDER))


def _record_path(store: UnitStore, profile: str) -> Path:
    return store.folder / f"{RECORD_PREFIX}{profile}.json"


def record_canonical(
    store: UnitStore,
    profile: str,
    recipe_id: tuple[str, int],
    params: Any = None,
    units: Sequence[Mapping[str, Any]] = (),
    error: str | None = None,
) -> None:
    """Keep in the store the units the figure's own configuration makes for ``profile``, or why
    it cannot be composed (``error``); views read only these records."""
    record: dict[str, Any] = {"profile": profile, "recipe": recipe_id[0], "version": recipe_id[1]}
    if error is not None:
        record["error"] = error
    else:
        record["params"] = _plain(params)
        record["units"] = [json.loads(canonical_json(dict(u))) for u in units]
    store.folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(_record_path(store, profile), json.dumps(redact(record), indent=1))


def recorded_profiles(store: UnitStore) -> dict[str, Any]:
    """Each profile's canonical record in the store (:func:`record_canonical`); a record that
    cannot be read is left out (its profile then has no view, said as a gap)."""
    out: dict[str, Any] = {}
    for path in sorted(store.folder.glob(f"{RECORD_PREFIX}*.json")):
        try:
            record = read_json(path, UNIT_JSON_BYTES, tree=store.folder)
        except (OSError, ValueError) as exc:
            log.warning("%s cannot be read (%s); no canonical view from it", path, exc)
            continue
        if isinstance(record, dict):
            out[path.name[len(RECORD_PREFIX) : -len(".json")]] = record
    return out


def _own_units(
    recipe: Figure[Any], recipe_id: tuple[str, int], record: Any
) -> tuple[Any, list[Any]]:
    """The parameters and units a profile's record holds, validated by the recipe; else a
    ``ValueError`` saying why it gives no view."""
    if record is None:
        raise ValueError("no record of its own configuration (run it, or `make tables`)")
    if "error" in record:
        raise ValueError(f"its own configuration cannot be composed ({record['error']})")
    if (record.get("recipe"), record.get("version")) != tuple(recipe_id):
        raise ValueError(
            f"its own configuration was recorded for {record.get('recipe')} version "
            f"{record.get('version')} (run it, or `make tables`)"
        )
    params: Any = build_params(recipe.params_type, record.get("params") or {}, "params")
    return params, list(record.get("units") or [])


def _view(
    units: Sequence[StoredUnit], profile: str, params: Any, own: Sequence[Mapping[str, Any]]
) -> CanonicalView:
    slot_of = {canonical_json(dict(u)): i for i, u in enumerate(own)}
    by_seed: dict[int, dict[int, StoredUnit]] = {}
    for unit in units:
        if unit.profile != profile:
            continue
        i = slot_of.get(canonical_json(dict(unit.params)))
        if i is None:
            continue
        held = by_seed.setdefault(unit.seed, {})
        old = held.get(i)
        if old is None or str(unit.env.get("finished") or "") >= str(old.env.get("finished") or ""):
            held[i] = unit
    seeds = sorted(s for s, held in by_seed.items() if len(held) == len(own))
    ids = [by_seed[s][i].unit_id for s in seeds for i in range(len(own))]
    return CanonicalView(profile, params, seeds, ids, len(own))


def canonical_views(
    derived: DerivedTable,
    recipe: Figure[Any],
    recipe_id: tuple[str, int],
    records: Mapping[str, Any],
    gaps: dict[str, str] | None = None,
) -> dict[str, CanonicalView]:
    """The canonical view of each profile the table holds, the most faithful first, from its
    record (:func:`recorded_profiles`); ``gaps`` receives each profile with none and why."""
    out: dict[str, CanonicalView] = {}
    profiles = faithful_first(sorted({u.profile for u in derived.units}))
    for profile in profiles:
        try:
            params, own = _own_units(recipe, recipe_id, records.get(profile))
        except Exception as exc:  # a ConfigError, or a record that says why it has no view
            why = " ".join(str(exc).split())[:300]
            log.warning(
                "%s/%s: profile %s: %s; no canonical view for it",
                derived.paper,
                derived.figure,
                profile,
                why,
            )
            if gaps is not None:
                gaps[profile] = why
            continue
        view = _view(derived.units, profile, params, own)
        if view.unit_ids:
            out[profile] = view
        elif gaps is not None:
            gaps[profile] = (
                f"no seed holds all {len(own)} unit(s) of its own configuration "
                f"(`privrepro experiment={derived.paper}/{derived.figure} profile={profile}`)"
            )
    return out


def is_canonical_run(
    views: Mapping[str, CanonicalView], profile: str, seed: int, unit_ids: Sequence[str]
) -> bool:
    """Whether a run's units are exactly one seed of its profile's canonical view."""
    view = views.get(profile)
    return view is not None and seed in view.seeds and set(view.seed_ids(seed)) == set(unit_ids)


def default_view(views: Mapping[str, CanonicalView]) -> CanonicalView | None:
    """The view the default plot shows: the most faithful profile's."""
    for profile in faithful_first(list(views)):
        return views[profile]
    return None


def canonical_summary(
    recipe: Figure[Any], table: pd.DataFrame, views: Mapping[str, CanonicalView]
) -> pd.DataFrame | None:
    """``<figure>.summary.csv``: the recipe's summary of each profile's canonical units, seed by
    seed, with ``profile`` and ``seed`` columns in front (``None`` when the recipe summarises
    nothing)."""
    parts = []
    for view in views.values():
        for seed in view.seeds:
            summary = recipe.summarize(select_units(table, view.seed_ids(seed)), view.params)
            if summary is None:
                continue
            summary = summary.reset_index(drop=True).copy()
            for pos, (col, value) in enumerate((("profile", view.profile), ("seed", seed))):
                if col not in summary.columns:
                    summary.insert(pos, col, value)
            parts.append(summary)
    if not parts:
        return None
    return pd.concat(parts, ignore_index=True)


def views_from_records(recipe: Figure[Any], records: Mapping[str, Any]) -> dict[str, CanonicalView]:
    """The views a ``meta.json`` records, their parameters validated by the recipe; a record
    that is not a view is a ``ValueError`` naming its profile."""
    out = {}
    for profile, rec in records.items():
        if not isinstance(rec, Mapping) or not isinstance(rec.get("unit_ids"), list):
            raise ValueError(f"canonical view of {profile!r} is not a record")
        try:
            seeds = [int(s) for s in rec.get("seeds") or []]
            per_seed = int(rec.get("units_per_seed") or 0)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"canonical view of {profile!r} has seeds that are not integers"
            ) from exc
        params: Any = build_params(recipe.params_type, rec.get("params") or {}, "params")
        out[str(profile)] = CanonicalView(
            str(profile), params, seeds, [str(u) for u in rec["unit_ids"]], per_seed
        )
    return out
