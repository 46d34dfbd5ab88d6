"""UCI Adult ("Census Income", Becker & Kohavi 1996, CC BY 4.0), used by pb Fig. 7.

Reads the UCI files ``<root>/adult/adult.data`` and ``adult.test`` (comma-separated, no header;
``adult.test`` starts with a ``|1x3 Cross validator`` line and its labels end with a period).
A header row starting with ``age`` is accepted too. Rows with a missing value (``?``) are
dropped, leaving 30,162 + 15,060 = 45,222 records.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import io
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from privrepro.data.registry import DamagedDataError, MissingDataError, register_dataset

__all__ = [
    "COLUMNS",
    "RELEASE_COUNTS",
    "adult_age_histogram",
    "embedded_age_histogram",
    "load_adult",
]

COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
_FILES = {"train": ["adult.data"], "test": ["adult.test"], "all": ["adult.data", "adult.test"]}
_HOW = (
    "Download adult.data and adult.test from https://archive.ics.uci.edu/dataset/2/adult "
    "into <data root>/adult/."
)
#: The release's documented counts per file (``adult.names``): records, and complete records.
RELEASE_COUNTS = {"adult.data": (32_561, 30_162), "adult.test": (16_281, 15_060)}


def _records(path: Path) -> list[str]:
    """The record lines of a UCI Adult file (blank lines, the test file's ``|`` line and a
    header row skipped), each checked to hold 15 fields."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DamagedDataError("adult", path, f"it cannot be read as text ({exc})", _HOW) from exc
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("|") or s.lower().startswith("age,"):
            continue
        if s.count(",") != len(COLUMNS) - 1:
            raise DamagedDataError(
                "adult",
                path,
                f"line {number} holds {s.count(',') + 1} fields, not {len(COLUMNS)}",
                _HOW,
            )
        lines.append(s)
    return lines


def _read_one(path: Path, check_counts: bool) -> pd.DataFrame:
    lines = _records(path)
    if check_counts and path.name in RELEASE_COUNTS:
        expected = RELEASE_COUNTS[path.name][0]
        if len(lines) != expected:
            raise DamagedDataError(
                "adult", path, f"it holds {len(lines):,} records, the release {expected:,}", _HOW
            )
    df = pd.read_csv(
        io.StringIO("\n".join(lines)), header=None, names=COLUMNS, skipinitialspace=True, dtype=str
    )
    df = df.apply(lambda col: col.str.strip())
    df = df[~(df == "?").any(axis=1)].copy()
    df["income"] = df["income"].str.rstrip(".")
    for col in _NUMERIC:
        bad = ~df[col].str.fullmatch(r"-?\d+", na=False)
        if bad.any():
            value = df.loc[bad, col].iloc[0]
            raise DamagedDataError(
                "adult", path, f"its column {col!r} holds {value!r}, not an integer", _HOW
            )
        df[col] = df[col].astype(int)
    if check_counts and path.name in RELEASE_COUNTS:
        complete = RELEASE_COUNTS[path.name][1]
        if len(df) != complete:
            raise DamagedDataError(
                "adult",
                path,
                f"it holds {len(df):,} records without a missing value, the release {complete:,}",
                _HOW,
            )
    return df.reset_index(drop=True)


@register_dataset(
    "adult",
    description="UCI Adult census records (45,222 complete rows)",
    source="https://archive.ics.uci.edu/dataset/2/adult (CC BY 4.0)",
)
def load_adult(
    root: str | Path, split: str = "all", download: bool = False, verify: bool = True
) -> pd.DataFrame:
    """The Adult records of ``split`` (``train``, ``test`` or ``all``), rows with '?' dropped;
    ``records.attrs["data_source"]`` says whether they are UCI Adult or a stand-in.

    Raises:
        MissingDataError: a file is missing.
        DamagedDataError: a file does not hold the release's counts (``verify=True``, outside a
            rehearsal stand-in) or is not in the format.
    """
    if split not in _FILES:
        from privrepro.config.validation import ConfigError

        raise ConfigError("dataset.split", split, f"must be one of {sorted(_FILES)}")
    from privrepro.data.provenance import data_source_of, unverified_source
    from privrepro.data.standin_checks import log_stand_in

    folder = Path(root) / "adult"
    source = data_source_of(root, "adult") if verify else unverified_source("adult")
    frames = []
    for name in _FILES[split]:
        path = folder / name
        if not path.is_file():
            if download:
                _download(folder)
            if not path.is_file():
                raise MissingDataError("adult", path, _HOW)
        frames.append(_read_one(path, check_counts=verify and not source.is_stand_in))
    records = pd.concat(frames, ignore_index=True)
    records.attrs["data_source"] = source  # UCI Adult, or a stand-in (marked or unverified)
    if source.is_stand_in and verify:
        log_stand_in("adult", folder)
    return records


def _download(folder: Path) -> None:  # pragma: no cover - network
    import urllib.request

    folder.mkdir(parents=True, exist_ok=True)
    base = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"
    for name in ("adult.data", "adult.test"):
        urllib.request.urlretrieve(base + name, folder / name)


def adult_age_histogram(records: pd.DataFrame, low: int = 10, high: int = 100) -> np.ndarray:
    """Counts of each integer age in ``[low, high]`` (pb Fig. 7's domain is [10, 100])."""
    ages = records["age"].to_numpy(int)
    if ages.min() < low or ages.max() > high:
        raise ValueError(f"ages span [{ages.min()}, {ages.max()}], outside [{low}, {high}]")
    return np.bincount(ages - low, minlength=high - low + 1)


def embedded_age_histogram(low: int = 10, high: int = 100) -> np.ndarray:
    """The shipped age histogram of the 45,222 complete Adult records, on ``[low, high]``."""
    text = (
        resources.files("privrepro.data").joinpath("embedded/adult_age_histogram.csv").read_text()
    )
    rows = [
        line.split(",")
        for line in text.splitlines()
        if line and not line.startswith("#") and not line.startswith("age")
    ]
    ages = np.array([int(r[0]) for r in rows])
    counts = np.array([int(r[1]) for r in rows])
    if ages.min() < low or ages.max() > high:
        raise ValueError(
            f"embedded ages span [{ages.min()}, {ages.max()}], outside [{low}, {high}]"
        )
    out = np.zeros(high - low + 1, dtype=int)
    out[ages - low] = counts
    return out
