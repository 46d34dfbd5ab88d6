"""The run store: one folder per run unit, written atomically, resumable."""

from privrepro.store.atomic import atomic_write_bytes, atomic_write_table, atomic_write_text
from privrepro.store.units import UnitStore, unit_hash

__all__ = [
    "UnitStore",
    "atomic_write_bytes",
    "atomic_write_table",
    "atomic_write_text",
    "unit_hash",
]
