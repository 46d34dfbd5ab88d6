"""Stand-in of UCI Adult: ``adult/adult.data`` and ``adult/adult.test`` in the UCI format.

The UCI files have no header; fields are separated by ``", "``; ``adult.test`` starts with the line
``|1x3 Cross validator`` and its labels end with a period; both end with an empty line. Missing
values are ``?`` (in ``workclass``, ``occupation`` and ``native-country``). The real row counts
are kept: 32,561 + 16,281 rows, of which 2,399 + 1,221 hold a ``?``, so that the loader keeps
30,162 + 15,060 = 45,222 complete records, as on the real files.

Values are drawn uniformly from the real column domains (``adult.names``): ages 17–90,
``fnlwgt`` 12,285–1,484,705, the 16 education levels with their real ``education-num``, capital
gain 0–99,999, capital loss 0–4,356, hours 1–99, and every category of the categorical columns.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privrepro.rehearsal.standins.marker import WriteRequest
from privrepro.seeding import numpy_stream

__all__ = ["CATEGORIES", "EDUCATION_NUM", "adult_rows", "write_adult"]


#: ``education`` → ``education-num`` in the real files.
EDUCATION_NUM = {
    "Preschool": 1,
    "1st-4th": 2,
    "5th-6th": 3,
    "7th-8th": 4,
    "9th": 5,
    "10th": 6,
    "11th": 7,
    "12th": 8,
    "HS-grad": 9,
    "Some-college": 10,
    "Assoc-voc": 11,
    "Assoc-acdm": 12,
    "Bachelors": 13,
    "Masters": 14,
    "Prof-school": 15,
    "Doctorate": 16,
}

#: The categorical columns' domains, as ``adult.names`` lists them.
CATEGORIES: dict[str, list[str]] = {
    "workclass": (
        "Private Self-emp-not-inc Self-emp-inc Federal-gov Local-gov State-gov Without-pay "
        "Never-worked"
    ).split(),
    "marital-status": (
        "Married-civ-spouse Divorced Never-married Separated Widowed Married-spouse-absent "
        "Married-AF-spouse"
    ).split(),
    "occupation": (
        "Tech-support Craft-repair Other-service Sales Exec-managerial Prof-specialty "
        "Handlers-cleaners Machine-op-inspct Adm-clerical Farming-fishing Transport-moving "
        "Priv-house-serv Protective-serv Armed-Forces"
    ).split(),
    "relationship": "Wife Own-child Husband Not-in-family Other-relative Unmarried".split(),
    "race": "White Asian-Pac-Islander Amer-Indian-Eskimo Other Black".split(),
    "sex": ["Female", "Male"],
    "native-country": (
        "United-States Cambodia England Puerto-Rico Canada Germany Outlying-US(Guam-USVI-etc) "
        "India Japan Greece South China Cuba Iran Honduras Philippines Italy Poland Jamaica "
        "Vietnam Mexico Portugal Ireland France Dominican-Republic Laos Ecuador Taiwan Haiti "
        "Columbia Hungary Guatemala Nicaragua Scotland Thailand Yugoslavia El-Salvador "
        "Trinadad&Tobago Peru Hong Holand-Netherlands"
    ).split(),
}
_NUMERIC_RANGES = {
    "age": (17, 90),
    "fnlwgt": (12_285, 1_484_705),
    "capital-gain": (0, 99_999),
    "capital-loss": (0, 4_356),
    "hours-per-week": (1, 99),
}
_MISSABLE = ("workclass", "occupation", "native-country")
#: rows holding a '?' in the real files (rows − complete rows)
_MISSING = {"train": 32_561 - 30_162, "test": 16_281 - 15_060}
_FULL = {"train": 32_561, "test": 16_281}


def adult_rows(rng: np.random.Generator, n: int, missing: int, test: bool) -> list[str]:
    """``n`` Adult rows in the UCI text format, ``missing`` of them with at least one ``?``."""
    from privrepro.data.adult import COLUMNS

    cols: dict[str, np.ndarray] = {}
    levels = list(EDUCATION_NUM)
    education = rng.integers(0, len(levels), n)
    for name in COLUMNS:
        if name in _NUMERIC_RANGES:
            low, high = _NUMERIC_RANGES[name]
            cols[name] = rng.integers(low, high + 1, n).astype(str)
        elif name == "education":
            cols[name] = np.array(levels, dtype=object)[education]
        elif name == "education-num":
            cols[name] = np.array([str(EDUCATION_NUM[e]) for e in levels], dtype=object)[education]
        elif name == "income":
            labels = np.array(["<=50K", ">50K"], dtype=object)[rng.integers(0, 2, n)]
            cols[name] = labels + "." if test else labels
        else:
            domain = np.array(CATEGORIES[name], dtype=object)
            cols[name] = domain[rng.integers(0, len(domain), n)]
    holes = rng.choice(n, size=min(missing, n), replace=False)
    which = rng.integers(1, 2 ** len(_MISSABLE), len(holes))  # a non-empty subset per row
    for bit, name in enumerate(_MISSABLE):
        column = cols[name].astype(object)
        column[holes[((which >> bit) & 1) == 1]] = "?"
        cols[name] = column
    table = np.stack([np.asarray(cols[c], dtype=object) for c in COLUMNS], axis=1)
    return [", ".join(row) for row in table.tolist()]


def write_adult(req: WriteRequest) -> dict[str, Any]:
    """``adult/adult.data`` and ``adult/adult.test`` (``counts["train"]``, ``counts["test"]``
    rows; the real share of rows with a ``?``)."""
    complete = {}
    for split, name in (("train", "adult.data"), ("test", "adult.test")):
        n = int(req.counts[split])
        missing = round(_MISSING[split] * n / _FULL[split])
        rows = adult_rows(numpy_stream(req.seed, "adult", split), n, missing, split == "test")
        head = ["|1x3 Cross validator"] if split == "test" else []
        req.out.write_bytes(name, ("\n".join([*head, *rows]) + "\n\n").encode("ascii"))
        complete[split] = n - missing
    return {"complete_rows": complete}
