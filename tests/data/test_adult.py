"""UCI Adult loader: the real file formats (no header, the test file's first line and trailing
periods; or a header row), '?' rows dropped; the shipped age histogram."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from privrepro.data.adult import adult_age_histogram, embedded_age_histogram, load_adult
from privrepro.data.registry import MissingDataError, get_dataset

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
    df = load_adult(tmp_path)
    assert len(df) == 5  # 4 + 3 rows, one '?' row in each file dropped
    assert len(load_adult(tmp_path, split="train")) == 3
    assert len(load_adult(tmp_path, split="test")) == 2
    assert df["age"].tolist() == [39, 50, 90, 25, 17]
    assert set(df["income"]) == {"<=50K", ">50K"}  # the test file's trailing periods are stripped
    assert df["age"].dtype.kind == "i"
    assert df.attrs["data_source"].label == "UCI Adult"  # no rehearsal marker: the real data


def test_registry_and_missing_file(tmp_path: Path) -> None:
    info = get_dataset("adult")
    assert info.loader is load_adult
    with pytest.raises(MissingDataError, match=r"adult\.data"):
        load_adult(tmp_path)


def test_age_histogram(tmp_path: Path) -> None:
    _write(tmp_path, False)
    h = adult_age_histogram(load_adult(tmp_path))
    assert h.shape == (91,) and h.sum() == 5
    assert h[17 - 10] == 1 and h[90 - 10] == 1 and h[39 - 10] == 1


def test_embedded_histogram_is_the_full_dataset() -> None:
    h = embedded_age_histogram()
    # 45,222 complete records (note §4, Fig. 7; UCI counts 30,162 + 15,060); ages span 17–90
    assert h.sum() == 45_222
    assert np.flatnonzero(h).min() + 10 == 17 and np.flatnonzero(h).max() + 10 == 90
