"""The compute time of a plan, priced before compute from the store's own records, against
``max_hours`` and the submitit launcher's ``hydra.launcher.timeout_min``: what cannot finish is
refused in one :class:`~privrepro.config.ConfigError` line naming the key.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import logging
import math
import os
import statistics
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from privrepro.bounded_read import UNIT_JSON_BYTES, read_json
from privrepro.config.validation import ConfigError
from privrepro.store.identity import canonical_json
from privrepro.store.units import UnitStore

log = logging.getLogger("privrepro.runner")

#: The largest ``max_hours``: ten years of compute.
MAX_HOURS = 87_600


def check_max_hours(value: Any) -> None:
    """``max_hours``: ``None`` (no limit) or a number of hours in ``(0, MAX_HOURS]``."""
    if value is None:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not 0 < value <= MAX_HOURS:
        raise ConfigError(
            "max_hours", value, f"must be null (no limit) or a number of hours in (0, {MAX_HOURS}]"
        )


def launcher_limit(launcher: Mapping[str, Any] | None = None) -> tuple[str, float] | None:
    """The job's time limit under Hydra's submitit launcher: ``("hydra.launcher.timeout_min",
    minutes)``; ``None`` under any other launcher or outside a Hydra job. ``launcher``: the
    launcher's config (default: the running Hydra job's)."""
    if launcher is None:
        try:
            from hydra.core.hydra_config import HydraConfig

            launcher = HydraConfig.get().launcher
        except Exception:  # not inside a Hydra job
            return None
    if launcher is None or "submitit" not in str(launcher.get("_target_", "")).lower():
        return None
    minutes = launcher.get("timeout_min")
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or minutes <= 0:
        return None
    return "hydra.launcher.timeout_min", float(minutes)


def _leaves(obj: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(obj, Mapping):
        for key in sorted(obj, key=str):
            yield from _leaves(obj[key], f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            yield from _leaves(value, f"{prefix}[{i}]")
    else:
        yield prefix, obj


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _axes(identities: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """The numeric settings of the units that differ across the plan (grid axes, repeats)."""
    seen: dict[str, set[str]] = defaultdict(set)
    for identity in identities:
        for path, value in _leaves(identity.get("unit", {})):
            if _is_number(value):
                seen[path].add(repr(value))
    return frozenset(path for path, values in seen.items() if len(values) > 1)


def _like(identity: Mapping[str, Any], axes: frozenset[str]) -> str:
    """What a unit is priced by: its identity less the seed and the plan's numeric axes."""
    settings = {p: v for p, v in _leaves(identity.get("unit", {})) if p not in axes}
    kept = ("recipe", "version", "profile", "data")
    return canonical_json([{k: identity.get(k) for k in kept}, settings])


def _stored_times(store: UnitStore, axes: frozenset[str]) -> dict[str, list[float]]:
    """The wall times the store's units record, by what they are like (:func:`_like`); a unit
    whose records cannot be read, or record no time, is passed over (its run reports it)."""
    out: dict[str, list[float]] = defaultdict(list)
    for uid in store.unit_ids():
        try:
            identity = read_json(store.path(uid) / "config.json", UNIT_JSON_BYTES)
            env = read_json(store.path(uid) / "env.json", UNIT_JSON_BYTES)
        except (OSError, ValueError):
            continue
        if not isinstance(identity, dict) or not isinstance(env, dict):
            continue
        wall = env.get("wall_time_s")
        if isinstance(wall, (int, float)) and not isinstance(wall, bool):
            if math.isfinite(wall) and wall >= 0:
                out[_like(identity, axes)].append(float(wall))
    return out


@dataclass(frozen=True)
class TimePrice:
    """The price of the ``to_compute`` units a run will compute: ``priced`` of them, in
    ``seconds`` (each at the median of the stored units like it), from ``stored`` units."""

    to_compute: int
    priced: int
    seconds: float
    stored: int

    @property
    def basis(self) -> str:
        """How the price was made, in words."""
        unpriced = self.to_compute - self.priced
        rest = f"; {unpriced} not priced, no stored unit is like them" if unpriced else ""
        return (
            f"{self.priced} priced at the median wall time of the {self.stored} stored units "
            f"like them{rest}"
        )


def price_units(
    store: UnitStore,
    identities: Sequence[Mapping[str, Any]],
    unit_ids: Sequence[str],
    force: bool = False,
) -> TimePrice:
    """The price of the plan's units still to compute (every unit under ``force``)."""
    todo = [
        identity
        for identity, uid in zip(identities, unit_ids, strict=True)
        if force or not os.path.lexists(store.path(uid))
    ]
    if not todo:
        return TimePrice(0, 0, 0.0, 0)
    axes = _axes(identities)
    times = _stored_times(store, axes)
    seconds, priced, used = 0.0, 0, set()
    for identity in todo:
        like = _like(identity, axes)
        if times.get(like):
            seconds += statistics.median(times[like])
            priced += 1
            used.add(like)
    return TimePrice(len(todo), priced, seconds, sum(len(times[k]) for k in used))


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.3g} h" if seconds >= 360 else f"{seconds:.3g} s"


def check_compute_time(
    store: UnitStore,
    identities: Sequence[Mapping[str, Any]],
    unit_ids: Sequence[str],
    max_hours: float | None = None,
    launcher: tuple[str, float] | None = None,
    force: bool = False,
) -> TimePrice | None:
    """Refuse, in one line, a run whose units cannot finish within its stated limits.

    ``launcher``: ``(key, minutes)`` (:func:`launcher_limit`). Returns the price, or ``None``
    with no limit (nothing is read then).
    """
    limits: list[tuple[str, float, float]] = []  # key, value as given, seconds
    if max_hours is not None:
        limits.append(("max_hours", max_hours, max_hours * 3600))
    if launcher is not None:
        limits.append((launcher[0], launcher[1], launcher[1] * 60))
    if not limits:
        return None
    price = price_units(store, identities, unit_ids, force)
    where = f"{store.paper}/{store.figure}"
    if price.to_compute and not price.priced:
        log.warning(
            "%s: not priced (no stored unit is like the %d to compute): %s not checked",
            where,
            price.to_compute,
            " and ".join(key for key, _, _ in limits),
        )
        return price
    for key, value, seconds in limits:
        if price.seconds > seconds:
            need = price.seconds / 3600 if key == "max_hours" else price.seconds / 60
            unit = "h" if key == "max_hours" else "min"
            raise ConfigError(
                key,
                value,
                f"the {price.to_compute} units of {where} still to compute would take about "
                f"{_hours(price.seconds)} ({price.basis}); must be at least {need:.3g} {unit}, "
                "or compute fewer units at once",
            )
    if price.priced < price.to_compute:
        log.warning(
            "%s: %d of the %d units to compute not priced (no stored unit is like them): %s "
            "checked on the other %d (about %s)",
            where,
            price.to_compute - price.priced,
            price.to_compute,
            " and ".join(key for key, _, _ in limits),
            price.priced,
            _hours(price.seconds),
        )
    return price
