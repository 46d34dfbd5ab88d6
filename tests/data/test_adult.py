"""UCI Adult loader: the real file formats (no header, the test file's first line and trailing
periods; or a header row), '?' rows dropped; each file checked against the release's documented
counts before use (a cut or edited file refused in one line naming it); the shipped age
histogram."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from privrepro.data.adult import (
    RELEASE_COUNTS,
    adult_age_histogram,
    embedded_age_histogram,
    load_adult,
)
from privrepro.data.registry import DamagedDataError, MissingDataError, get_dataset

TRAIN = """39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K
50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, <=50K
54, ?, 180211, Some-college, 10, Married-civ-spouse, ?, Husband, Asian-Pac-Islander, Male, 0, 0, 60, South, >50K
90, Private, 51744, Masters, 14, Never-married, Exec-managerial, Not-in-family, Black, Male, 0, 0, 50, United-States, >50K

"""
TEST = """|1x3 Cross validator
25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, 0, 0, 40, United-States, <=50K.
17, Private, 103497, Some-college, 10, Never-married, ?, Own-child, White, Female, 0, 0, 30, United-States, <=50K.
17, Private, 89814, HS-grad, 9, Married-civ-spouse, Farming-fishing, Husband, White, Male, 0, 0, 50, United-States, >50K.
"""
HEADER = (
    "age, workclass, fnlwgt, education, education-num, marital-status, occupation, relationship, "
    "race, sex, capital-gain, capital-loss, hours-per-week, native-country, Y\n"
)


def _write(root: Path, header: bool) -> None:
    folder = root / "adult"
    folder.mkdir(parents=True)
    (folder / "adult.data").write_text((HEADER if header else "") + TRAIN)
    test = TEST if not header else HEADER + TEST.split("\n", 1)[1]
    (folder / "adult.test").write_text(test)


@pytest.mark.parametrize("header", [False, True])
def test_loader_reads_uci_format(tmp_path: Path, header: bool) -> None:
    _write(tmp_path, header)
    df = load_adult(tmp_path, verify=False)  # tiny files: not the release's counts
    assert len(df) == 5  # 4 + 3 rows, one '?' row in each file dropped
    assert len(load_adult(tmp_path, split="train", verify=False)) == 3
    assert len(load_adult(tmp_path, split="test", verify=False)) == 2
    assert df["age"].tolist() == [39, 50, 90, 25, 17]
    assert set(df["income"]) == {"<=50K", ">50K"}  # the test file's trailing periods are stripped
    assert df["age"].dtype.kind == "i"
    # unverified files are never labelled as the paper's data
    source = df.attrs["data_source"]
    assert source.is_stand_in and source.label.startswith("unverified files in the UCI Adult")
    with pytest.raises(DamagedDataError, match=r"adult\.data .* 4 records, the release 32,561"):
        load_adult(tmp_path)  # verified: refused by name


def _full_size(root: Path, header: bool = False) -> None:
    """Files with the release's documented counts (adult.names): 32,561 + 16,281 records of
    which 30,162 + 15,060 are complete; the records themselves are repeated sample rows."""
    complete, missing = TRAIN.splitlines()[0], TRAIN.splitlines()[2]
    folder = root / "adult"
    folder.mkdir(parents=True)
    for name, line_end, first in (
        ("adult.data", "", ""),
        ("adult.test", ".", "|1x3 Cross validator\n"),
    ):
        total, ok = RELEASE_COUNTS[name]
        rows = [complete + line_end] * ok + [missing + line_end] * (total - ok)
        (folder / name).write_text((HEADER if header else first) + "\n".join(rows) + "\n\n")


def test_the_release_counts_are_checked_where_read(tmp_path: Path) -> None:
    """Files holding the documented counts are UCI Adult; cut at a row boundary (the case of
    3,000 of 32,561 rows), padded, a record's field changed or a field added: refused, one line
    naming the file, what differs and where to get a good copy."""
    _full_size(tmp_path)
    df = load_adult(tmp_path)
    assert len(df) == 45_222 and df.attrs["data_source"].label == "UCI Adult"
    data = tmp_path / "adult" / "adult.data"
    good = data.read_text()
    lines = good.splitlines()
    cases = {
        "cut": ("\n".join(lines[:3000]) + "\n", r"3,000 records, the release 32,561"),
        "padded": (good + lines[0] + "\n", r"32,562 records, the release 32,561"),
        "age edited": (good.replace("39,", "3x,", 1), r"column 'age' holds '3x'"),
        "field added": (good.replace("<=50K", "<=50K, 1", 1), r"line 1 holds 16 fields, not 15"),
        "a value made missing": (
            good.replace("State-gov", "?", 1),
            r"30,161 records without a missing value, the release 30,162",
        ),
    }
    for text, why in cases.values():
        data.write_text(text)
        with pytest.raises(DamagedDataError) as err:
            load_adult(tmp_path)
        message = str(err.value)
        assert str(data) in message and "archive.ics.uci.edu" in message
        assert "\n" not in message
        assert re.search(why, message), message


def test_registry_and_missing_file(tmp_path: Path) -> None:
    info = get_dataset("adult")
    assert info.loader is load_adult
    with pytest.raises(MissingDataError, match=r"adult\.data"):
        load_adult(tmp_path)


def test_age_histogram(tmp_path: Path) -> None:
    _write(tmp_path, False)
    h = adult_age_histogram(load_adult(tmp_path, verify=False))
    assert h.shape == (91,) and h.sum() == 5
    assert h[17 - 10] == 1 and h[90 - 10] == 1 and h[39 - 10] == 1


def test_embedded_histogram_is_the_full_dataset() -> None:
    h = embedded_age_histogram()
    # 45,222 complete records (note §4, Fig. 7; UCI counts 30,162 + 15,060); ages span 17–90
    assert h.sum() == 45_222
    assert np.flatnonzero(h).min() + 10 == 17 and np.flatnonzero(h).max() + 10 == 90
