"""The run store: one folder per run unit, written atomically, resumable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.store.atomic import atomic_write_bytes as atomic_write_bytes
    from privrepro.store.atomic import atomic_write_table as atomic_write_table
    from privrepro.store.atomic import atomic_write_text as atomic_write_text
    from privrepro.store.identity import unit_hash as unit_hash
    from privrepro.store.units import UnitStore as UnitStore

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
