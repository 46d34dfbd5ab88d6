"""The cost of a table derived from a verified store, against writing the same rows unverified.

A store of 200 units × 500 rows (8 columns) is built once. Measured: verifying every unit from
a cold process state (hashing each file against its manifest), and deriving the figure's table
(verify, read every unit, add the id and parameter columns, write Parquet and CSV) against the
straw man the runner used before: concatenate the rows it already holds and write them, with no
store read and no verification.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

UNITS, ROWS = 200, 500
RECIPE = ("bench_tables:Fake", 1)


def _build(root: Path, units: int, rows_per_unit: int) -> list[pd.DataFrame]:
    from privrepro.store.identity import unit_hash
    from privrepro.store.units import UnitStore

    store = UnitStore(root, "bench", "fig")
    frames = []
    rng = np.random.default_rng(0)
    for i in range(units):
        identity = {
            "paper": "bench",
            "figure": "fig",
            "profile": "smoke",
            "seed": i % 4,
            "recipe": RECIPE[0],
            "version": RECIPE[1],
            "unit": {"i": i, "epsilon": float(i % 10), "tag": "a"},
        }
        rows = pd.DataFrame(
            {
                "i": i,
                "epsilon": float(i % 10),
                "k": np.arange(rows_per_unit),
                **{f"v{j}": rng.normal(size=rows_per_unit) for j in range(5)},
            }
        )
        with store.building(unit_hash(identity)) as tmp:
            store.write_unit(tmp, identity, rows, {"wall_time_s": 0.0})
        frames.append(rows)
    return frames


def bench(device: str = "cpu", quick: bool = False) -> list[dict[str, object]]:
    """Rows of the store's cost (CPU only: ``device`` is accepted for the runner)."""
    from privrepro.benchmark_harness import best_time, row
    from privrepro.runner import figure_tables as tables
    from privrepro.store.atomic import atomic_write_table
    from privrepro.store.units import UnitStore

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        units, rows_per_unit = (20, 50) if quick else (UNITS, ROWS)
        frames = _build(root / "exp", units, rows_per_unit)

        def verify_cold() -> None:
            store = UnitStore(root / "exp", "bench", "fig")  # no verification cached
            assert all(store.verify(u).ok for u in store.unit_ids())

        def derive() -> None:
            store = UnitStore(root / "exp", "bench", "fig")
            with store.table_lock():
                derived = tables.derive_table(store, RECIPE)
                tables.write_table(derived, root / "res")
            assert len(derived.table) == units * rows_per_unit

        def straw_man() -> None:
            atomic_write_table(pd.concat(frames, ignore_index=True), root / "old" / "fig.csv")

        t0 = time.perf_counter()
        t_verify = best_time(verify_cold)
        t_derive = best_time(derive)
        t_straw = best_time(straw_man)
        total = time.perf_counter() - t0
    note = f"{units} units × {rows_per_unit} rows; {total:.1f} s in all"
    return [
        row(
            "tables",
            "verify every unit (cold)",
            t_verify,
            "s",
            t_straw,
            "write the same rows unverified (the runner before the store)",
            "floor",
            note,
        ),
        row(
            "tables",
            "derive the table from the store",
            t_derive,
            "s",
            t_straw,
            "write the same rows unverified (the runner before the store)",
            "floor",
            note,
        ),
    ]


if __name__ == "__main__":
    for r in bench():
        print(r)
