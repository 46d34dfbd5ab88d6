"""The run store: one folder per run unit, written atomically, resumable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.store.atomic import atomic_write_bytes, atomic_write_table, atomic_write_text
    from privrepro.store.units import UnitStore, unit_hash

_EXPORTS = {
    "privrepro.store.atomic": ("atomic_write_bytes", "atomic_write_table", "atomic_write_text"),
    "privrepro.store.units": ("UnitStore", "unit_hash"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "UnitStore",
    "atomic_write_bytes",
    "atomic_write_table",
    "atomic_write_text",
    "unit_hash",
]
