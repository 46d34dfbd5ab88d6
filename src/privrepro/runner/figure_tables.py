"""A figure's table is derived from the run store, never edited (``make tables``:
:mod:`privrepro.runner.make_tables`).

More in ``docs/modules.md``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from privrepro.bounded_read import (
    META_BYTES,
    TABLE_BYTES,
    UNIT_JSON_BYTES,
    read_bytes,
    read_json,
)
from privrepro.config.secrets import redact
from privrepro.data.provenance import UNDECLARED, DataSource
from privrepro.runner.catalog import figure_recipes
from privrepro.runner.recipe_config import load_recipe, recipe_version
from privrepro.store.atomic import (
    atomic_write_bytes,
    atomic_write_text,
    leftover_temporaries,
    parquet_bytes,
)
from privrepro.store.identity import canonical_json
from privrepro.store.units import UnitStore

log = logging.getLogger("privrepro.tables")

FRONT = ["paper", "figure", "profile", "seed", "unit_id", "data"]
#: The column added after :data:`FRONT` when the table's units read different data (their
#: identities' ``data`` fingerprints differ): the same unit on other data is another unit.
DATA_FINGERPRINT = "data_fingerprint"
LAST_RUN = "last_run.json"


@dataclass(frozen=True)
class StoredUnit:
    """One verified unit: its id, its identity (``config.json``) and its environment."""

    unit_id: str
    identity: Mapping[str, Any]
    env: Mapping[str, Any]

    @property
    def profile(self) -> str:
        return str(self.identity.get("profile"))

    @property
    def seed(self) -> int:
        return int(self.identity.get("seed", 0))

    @property
    def params(self) -> Mapping[str, Any]:
        return self.identity.get("unit") or {}

    @property
    def data(self) -> str:
        """The label of the data the unit ran on (``UNDECLARED``'s for a unit that recorded none)."""
        return str(self.env.get("data") or UNDECLARED.label)

    @property
    def recipe(self) -> tuple[str, int]:
        return str(self.identity.get("recipe")), int(self.identity.get("version", 1))

    def listing(self, rows: int) -> dict[str, Any]:
        """The entry of this unit in ``meta.json``."""
        return {
            "unit_id": self.unit_id,
            "profile": self.profile,
            "seed": self.seed,
            "rows": rows,
            "data": self.data,
            "params": self.params,
            **{
                k: self.env.get(k) for k in ("finished", "wall_time_s", "git_sha", "device", "host")
            },
        }


def _labelled(unit: StoredUnit, sources: Mapping[str, DataSource]) -> StoredUnit:
    """``unit`` with the running job's data label where it recorded none."""
    if unit.env.get("data") or unit.unit_id not in sources:
        return unit
    source = sources[unit.unit_id]
    return replace(unit, env={**unit.env, "data": source.label, "data_source": asdict(source)})


@dataclass
class DerivedTable:
    """What :func:`derive_table` found: the table and the units it holds."""

    paper: str
    figure: str
    table: pd.DataFrame
    units: list[StoredUnit]
    rows_per_unit: dict[str, int]
    param_columns: list[str]
    recipe: tuple[str, int] | None
    superseded: list[str] = field(default_factory=list)

    def listing(self) -> list[dict[str, Any]]:
        return [u.listing(self.rows_per_unit.get(u.unit_id, 0)) for u in self.units]


def stored_units(store: UnitStore) -> list[StoredUnit]:
    """Every verified unit of the store's figure; a unit failing verification is moved aside."""
    out = []
    for uid in store.unit_ids():
        if not store.is_complete(uid):
            continue
        try:
            out.append(StoredUnit(uid, store.load_config(uid), store.load_env(uid)))
        except (OSError, ValueError):  # removed by another worker between the two reads
            continue
    return out


class UnknownFigure(LookupError):
    """A store folder no experiment config registers: its recipe cannot be told."""


def figure_recipe(paper: str, figure: str, conf: Path | None = None) -> tuple[str, int]:
    """The recipe ``conf/experiment/<paper>/<figure>.yaml`` names, and its version (a name read
    from the store or a results file is never imported). ``UnknownFigure`` when none does."""
    name = figure_recipes(conf).get((paper, figure))
    if name is None:
        raise UnknownFigure(
            f"{paper}/{figure}: no experiment config registers this figure, so its recipe "
            "is unknown; its table is left as it is"
        )
    return name, recipe_version(load_recipe(name))


def _report_left_out(store: UnitStore, current: tuple[str, int], left: list[StoredUnit]) -> None:
    """One warning line for the verified units that are not of the figure's configured recipe."""
    if not left:
        return
    older = [u for u in left if u.recipe[0] == current[0]]
    other = sorted({u.recipe[0] for u in left if u.recipe[0] != current[0]})
    parts = []
    if older:
        versions = sorted({u.recipe[1] for u in older})
        parts.append(f"{len(older)} of version {versions} (current {current[1]})")
    if other:
        n = len(left) - len(older)
        parts.append(f"{n} naming another recipe ({', '.join(other)[:120]})")
    log.warning(
        "%s/%s: %d unit(s) left out of the table, not of the configured recipe %s: %s",
        store.paper,
        store.figure,
        len(left),
        current[0],
        "; ".join(parts),
    )


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping) and v:
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _same(a: Any, b: Any) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or (isinstance(b, float) and math.isnan(b))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return str(a) == str(b)


def _rows_explain(rows: pd.DataFrame, key: str, value: Any) -> bool:
    """Whether the unit's own rows already carry ``value`` in a column named ``key``."""
    if key not in rows.columns or rows.empty:
        return False
    col = pd.unique(rows[key]).tolist()  # a unit's rows repeat few distinct values
    if isinstance(value, list):
        present = [v for v in col if not _same(v, None)]
        return bool(present) and all(any(_same(v, x) for x in value) for v in present)
    if isinstance(value, Mapping):
        return False
    return all(_same(v, value) for v in col)


def _column_values(values: list[Any]) -> list[Any]:
    """Unit parameter values as one column: scalars as they are, lists and mappings as JSON."""
    out = [canonical_json(v) if isinstance(v, (list, Mapping)) else v for v in values]
    kinds = {type(v) for v in out if v is not None}
    if len(kinds) > 1 and not kinds <= {int, float}:
        out = [None if v is None else str(v) for v in out]
    return out


def param_columns(
    units: Sequence[StoredUnit], frames: Mapping[str, pd.DataFrame]
) -> dict[str, list[Any]]:
    """One column per unit parameter that differs between units and that the rows do not show.

    Nested keys are dotted (``features.source``); the column is ``unit.<key>`` when the rows use
    ``<key>`` for something else; lists and mappings are written as canonical JSON.
    """
    flat = {u.unit_id: _flatten(u.params) for u in units}
    keys = sorted({k for f in flat.values() for k in f})
    row_columns = {c for fr in frames.values() for c in fr.columns} | set(FRONT)
    out: dict[str, list[Any]] = {}
    for key in keys:
        having = [u for u in units if key in flat[u.unit_id]]
        if len({canonical_json(flat[u.unit_id][key]) for u in having}) < 2:
            continue
        if all(_rows_explain(frames[u.unit_id], key, flat[u.unit_id][key]) for u in having):
            continue
        name = key if key not in row_columns else f"unit.{key}"
        out[name] = _column_values([flat[u.unit_id].get(key) for u in units])
    return out


def derive_table(
    store: UnitStore,
    recipe: tuple[str, int] | None = None,
    sources: Mapping[str, DataSource] | None = None,
    conf: Path | None = None,
) -> DerivedTable:
    """The figure's table from every verified unit of ``recipe`` (default: the configured one);
    other units are left out in one warning line. ``sources`` labels units that recorded no data.
    """
    current = recipe or figure_recipe(store.paper, store.figure, conf)
    units = [_labelled(u, sources or {}) for u in stored_units(store)]
    left = [u for u in units if u.recipe != current]
    superseded = [u.unit_id for u in left]
    _report_left_out(store, current, left)
    units = [u for u in units if u.recipe == current]
    units.sort(key=lambda u: (u.profile, u.seed, u.unit_id))
    frames = {}
    for u in units:
        try:
            frames[u.unit_id] = store.load_rows(u.unit_id)
        except Exception as exc:  # verified a moment ago: removed or replaced since
            log.warning("unit %s could not be read (%s); left out", store.path(u.unit_id), exc)
    units = [u for u in units if u.unit_id in frames]
    extra = param_columns(units, frames)
    fingerprints = [u.identity.get("data") for u in units]
    if len(set(fingerprints)) > 1:  # the same parameters on other data: say which data
        extra = {DATA_FINGERPRINT: fingerprints, **extra}
    return DerivedTable(
        store.paper,
        store.figure,
        _assemble(store, units, frames, extra),
        units,
        {uid: len(fr) for uid, fr in frames.items()},
        list(extra),
        current,
        superseded,
    )


def _assemble(
    store: UnitStore,
    units: Sequence[StoredUnit],
    frames: Mapping[str, pd.DataFrame],
    extra: Mapping[str, list[Any]],
) -> pd.DataFrame:
    """The table: the columns that name each unit (:data:`FRONT`, then ``extra``), then its rows."""
    if not units:
        return pd.DataFrame(columns=FRONT)
    counts = [len(frames[u.unit_id]) for u in units]
    ids: dict[str, list[Any]] = {
        "paper": [store.paper] * len(units),
        "figure": [store.figure] * len(units),
        "profile": [u.profile for u in units],
        "seed": [u.seed for u in units],
        "unit_id": [u.unit_id for u in units],
        "data": [u.data for u in units],
        **extra,
    }
    body = pd.concat([frames[u.unit_id] for u in units], ignore_index=True)
    body = body.drop(columns=[c for c in ids if c in body.columns])
    front = pd.DataFrame(
        {c: pd.Series(v).repeat(counts).reset_index(drop=True) for c, v in ids.items()}
    )
    return pd.concat([front, body], axis=1)


def data_sources(derived: DerivedTable, unit_ids: Sequence[str]) -> list[dict[str, Any]]:
    """What the units ``unit_ids`` ran on: one entry per distinct label, with its
    :class:`~privrepro.data.provenance.DataSource` fields when the unit recorded them."""
    wanted = set(unit_ids)
    out: dict[str, dict[str, Any]] = {}
    for u in derived.units:
        if u.unit_id in wanted and u.data not in out:
            fields = u.env.get("data_source")
            out[u.data] = {"label": u.data, **(fields if isinstance(fields, Mapping) else {})}
    return list(out.values())


@dataclass(frozen=True)
class TableFiles:
    """Where a figure's derived outputs live."""

    csv: Path
    parquet: Path
    summary: Path
    meta: Path


def table_files(results_dir: Path, paper: str, figure: str) -> TableFiles:
    base = Path(results_dir) / paper
    return TableFiles(
        base / f"{figure}.csv",
        base / f"{figure}.parquet",
        base / f"{figure}.summary.csv",
        base / f"{figure}.meta.json",
    )


def _parquet_safe(table: pd.DataFrame) -> bytes:
    try:
        return parquet_bytes(table)
    except (ValueError, TypeError, ImportError, OverflowError):
        pass
    fixed = table.copy()
    for col in fixed.columns:
        if fixed[col].dtype == object:
            fixed[col] = [None if v is None else str(v) for v in fixed[col]]
    return parquet_bytes(fixed)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_table(derived: DerivedTable, results_dir: Path) -> dict[str, Any]:
    """Write the Parquet (the source of truth), then its CSV export; return their facts.

    The caller holds the store's table lock, so temporaries left by killed writers of these files are
    removed here.
    """
    files = table_files(results_dir, derived.paper, derived.figure)
    folder = files.csv.parent
    folder.mkdir(parents=True, exist_ok=True)
    names = tuple(p.name for p in (files.csv, files.parquet, files.summary, files.meta))
    for stale in leftover_temporaries(folder, names) + leftover_temporaries(
        folder, older_than_s=3600.0
    ):
        stale.unlink(missing_ok=True)
    pq = _parquet_safe(derived.table)
    csv = derived.table.to_csv(index=False).encode("utf-8")
    atomic_write_bytes(files.parquet, pq)
    atomic_write_bytes(files.csv, csv)
    t = derived.table
    return {
        "rows": len(t),
        "units": len(derived.units),
        "profiles": sorted({u.profile for u in derived.units}),
        "seeds": sorted({u.seed for u in derived.units}),
        "param_columns": derived.param_columns,
        "recipe": derived.recipe[0] if derived.recipe else None,
        "version": derived.recipe[1] if derived.recipe else None,
        "superseded_units": len(derived.superseded),
        "parquet_sha256": sha256(pq),
        "csv_sha256": sha256(csv),
    }


def read_table(
    results_dir: Path, paper: str, figure: str, meta: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """The figure's table from its Parquet, read bounded (``UnsafeFile`` otherwise); a CSV or
    Parquet that was edited is reported.
    """
    import io

    files = table_files(results_dir, paper, figure)
    data = read_bytes(files.parquet, TABLE_BYTES, tree=results_dir)
    recorded = (meta or {}).get("table")
    facts: Mapping[str, Any] = recorded if isinstance(recorded, Mapping) else {}
    if facts.get("parquet_sha256") and sha256(data) != facts["parquet_sha256"]:
        log.warning(
            "%s differs from the table derived from the store (edited by hand?); "
            "run `make tables` to derive it again",
            files.parquet,
        )
    table = pd.read_parquet(io.BytesIO(data))
    try:
        csv = read_bytes(files.csv, TABLE_BYTES, tree=results_dir)
    except FileNotFoundError:
        return table
    except OSError as exc:  # the Parquet is the table; a CSV that cannot be read is said
        log.warning("%s; the table is read from %s", exc, files.parquet.name)
        return table
    if facts.get("csv_sha256"):
        edited = sha256(csv) != facts["csv_sha256"]
    else:
        edited = csv != table.to_csv(index=False).encode("utf-8")
    if edited:
        log.warning(
            "%s no longer matches %s, the table's source of truth: the CSV edits are "
            "ignored; run `make tables` to export it again",
            files.csv,
            files.parquet.name,
        )
    return table


def read_meta(path: Path, tree: Path | None = None) -> Any:
    """A ``meta.json`` read bounded (:func:`~privrepro.bounded_read.read_json`)."""
    return read_json(path, META_BYTES, tree=tree)


def write_last_run(store: UnitStore, record: Mapping[str, Any]) -> None:
    """Keep the run record (parameters and selection) in the store, beside its units."""
    atomic_write_text(store.folder / LAST_RUN, json.dumps(record, indent=2, default=str))


def load_last_run(store: UnitStore) -> dict[str, Any] | None:
    try:
        record = read_json(store.folder / LAST_RUN, UNIT_JSON_BYTES)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def write_meta(
    files: TableFiles,
    record: Mapping[str, Any] | None,
    derived: DerivedTable,
    facts: dict,
    canonical: Mapping[str, Mapping[str, Any]] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``meta.json``: the last run (top level), the table's facts, each profile's canonical view,
    ``extra`` (the profiles without one and why) and every unit the table holds."""
    meta = {  # a storage URL among the parameters is written without its password
        **redact(record or {"paper": derived.paper, "figure": derived.figure}),
        "table": facts,
        "canonical": redact(dict(canonical or {})),
        **(extra or {}),
        "units": derived.listing(),
    }
    atomic_write_text(files.meta, json.dumps(meta, indent=2, default=str))
    return meta


def failure_line(exc: BaseException) -> str:
    """An exception as one line: an I/O error names its file."""
    if isinstance(exc, UnknownFigure):
        return str(exc).split(": ", 1)[1]
    if isinstance(exc, OSError) and exc.filename:
        return f"{exc.strerror or type(exc).__name__}: {exc.filename}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}"
