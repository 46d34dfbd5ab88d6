"""Every storage a run will open, opened once before anything is computed.

A figure's Optuna studies (any ``storage`` parameter: ``params.tuning.storage``) and the tracking
store (``tracking.uri``) are checked by :func:`check_storages`: at the start of every run, and in
the launching process before a multirun starts any job (:mod:`privrepro.runner.sweeps`), so a
mistyped database URL or a missing driver is one line at once, not a failure in every job.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import fields, is_dataclass
from typing import Any

from omegaconf import DictConfig

#: the name of every field that says where an Optuna study is kept (``params.tuning.storage``)
STORAGE_KEY = "storage"


def study_storages(params: Any, prefix: str = "params") -> Iterator[tuple[str, str]]:
    """``(key, location)`` of every non-empty ``storage`` field in a parameter dataclass tree."""
    if not is_dataclass(params) or isinstance(params, type):
        return
    for f in fields(params):
        value = getattr(params, f.name)
        key = f"{prefix}.{f.name}"
        if f.name == STORAGE_KEY and isinstance(value, str) and value.strip():
            yield key, value
        elif is_dataclass(value):
            yield from study_storages(value, key)


def check_storages(params: Any, cfg: DictConfig | None = None) -> None:
    """Open each study storage of ``params`` and the tracking store of ``cfg`` (when tracking is
    on); the first that fails raises a one-line :class:`~privrepro.config.ConfigError`."""
    from privrepro.training.study_storage import check_storage

    for key, location in study_storages(params):
        check_storage(key, location)
    if cfg is not None:
        from privrepro.runner.tracking import check_tracking

        check_tracking(cfg)


def without_study_locations(unit: Mapping[str, Any]) -> dict[str, Any]:
    """``unit`` as it enters an identity: every ``storage`` entry (where a study is kept; it
    changes no result) at its default ``""``, so ``config.json`` never holds a URL."""
    out: dict[str, Any] = {}
    for k, v in unit.items():
        if k == STORAGE_KEY and isinstance(v, str):
            out[k] = ""
        elif isinstance(v, Mapping):
            out[k] = without_study_locations(v)
        else:
            out[k] = v
    return out
