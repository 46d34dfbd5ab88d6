"""UCI Adult ("Census Income", Becker & Kohavi 1996, CC BY 4.0), used by pb Fig. 7.

Reads the UCI files ``<root>/adult/adult.data`` and ``adult.test`` (comma-separated, no header;
``adult.test`` starts with a ``|1x3 Cross validator`` line and its labels end with a period).
A header row starting with ``age`` is accepted too. Rows with a missing value (``?``) are
dropped, leaving 30,162 + 15,060 = 45,222 records.

:func:`adult_age_histogram` returns the count of each integer age; the histogram of the full
45,222 records ships with the package (``embedded/adult_age_histogram.csv``) so that Fig. 7 runs
without the files.
"""

from __future__ import annotations

import io
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from privrepro.data.registry import MissingDataError, register_dataset

__all__ = ["COLUMNS", "adult_age_histogram", "embedded_age_histogram", "load_adult"]

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


def _read_one(path: Path) -> pd.DataFrame:
    lines = []
    for line in path.read_text().splitlines():
        s = line.strip()
        if not s or s.startswith("|") or s.lower().startswith("age,"):
            continue
        lines.append(s)
    df = pd.read_csv(
        io.StringIO("\n".join(lines)), header=None, names=COLUMNS, skipinitialspace=True, dtype=str
    )
    df = df.apply(lambda col: col.str.strip())
    df = df[~(df == "?").any(axis=1)].copy()
    df["income"] = df["income"].str.rstrip(".")
    for col in _NUMERIC:
        df[col] = df[col].astype(int)
    return df.reset_index(drop=True)


@register_dataset(
    "adult",
    description="UCI Adult census records (45,222 complete rows)",
    source="https://archive.ics.uci.edu/dataset/2/adult (CC BY 4.0)",
)
def load_adult(root: str | Path, split: str = "all", download: bool = False) -> pd.DataFrame:
    """The Adult records of ``split`` (``train``, ``test`` or ``all``), rows with '?' dropped;
    ``records.attrs["data_source"]`` says whether they are UCI Adult or a rehearsal stand-in."""
    if split not in _FILES:
        from privrepro.config.validation import ConfigError

        raise ConfigError("dataset.split", split, f"must be one of {sorted(_FILES)}")
    folder = Path(root) / "adult"
    frames = []
    for name in _FILES[split]:
        path = folder / name
        if not path.is_file():
            if download:
                _download(folder)
            if not path.is_file():
                raise MissingDataError("adult", path, _HOW)
        frames.append(_read_one(path))
    records = pd.concat(frames, ignore_index=True)
    from privrepro.data.provenance import data_source_of
    from privrepro.data.standin_checks import log_stand_in

    records.attrs["data_source"] = data_source_of(root, "adult")  # real, or rehearsal stand-in
    if records.attrs["data_source"].is_stand_in:
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
