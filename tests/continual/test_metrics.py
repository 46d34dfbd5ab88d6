"""AA_t and AF_t (cl App. E) against a hand-computed matrix."""

from __future__ import annotations

import numpy as np
import pytest

from privrepro.continual.metrics import average_accuracy, average_forgetting, forgetting

# acc[t, i]: accuracy on task i after task t (rows: after task 1, 2, 3)
ACC = np.array([[0.9, 0.0, 0.1],
                [0.7, 0.8, 0.0],
                [0.6, 0.5, 0.9]])


def test_average_accuracy() -> None:
    # AA_1 = 0.9; AA_2 = (0.7 + 0.8)/2 = 0.75; AA_3 = (0.6 + 0.5 + 0.9)/3 = 2/3
    assert average_accuracy(ACC) == pytest.approx([0.9, 0.75, 2 / 3], abs=1e-12)


def test_forgetting_paper_definition() -> None:
    f = forgetting(ACC)
    # F_{2,1} = acc_{1,1} − acc_{2,1} = 0.2; F_{3,1} = max(0.9, 0.7) − 0.6 = 0.3;
    # F_{3,2} = max_{k∈{1,2}} acc_{k,2} − acc_{3,2} = 0.8 − 0.5 = 0.3
    assert f[1, 0] == pytest.approx(0.2) and f[2, 0] == pytest.approx(0.3)
    assert f[2, 1] == pytest.approx(0.3)
    af = average_forgetting(ACC)
    assert np.isnan(af[0])
    assert af[1:] == pytest.approx([0.2, 0.3], abs=1e-12)  # AF_3 = (0.3 + 0.3)/2


def test_forgetting_from_k_1_differs_from_k_i() -> None:
    # task 2 scored 0.9 before it was learned: the paper's max over k from 1 counts it
    acc = np.array([[0.5, 0.9], [0.5, 0.6]])
    assert forgetting(acc, "paper")[1, 0] == pytest.approx(0.0)
    acc3 = np.array([[0.5, 0.9, 0], [0.5, 0.6, 0], [0.5, 0.4, 0.7]])
    assert forgetting(acc3, "paper")[2, 1] == pytest.approx(0.5)   # max(0.9, 0.6) − 0.4
    assert forgetting(acc3, "learned")[2, 1] == pytest.approx(0.2)  # max(0.6) − 0.4


def test_non_square_raises() -> None:
    with pytest.raises(ValueError, match="square"):
        average_accuracy(np.zeros((2, 3)))
