"""cl Fig. 2: group-privacy drop bound against the caption, the note and a brute-force sum."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from privrepro.dp.group import drop_probability_lower_bound, group_delta
from privrepro.runner.run import run_experiment


def test_group_delta_equals_the_literal_sum() -> None:
    # δ_k = Σ_{i=0}^{k−1} e^{iε} δ (cl paper, Sec. 4.4), summed term by term
    for eps in (0.0, 1e-9, 0.1, 1.0, 8.0):
        for k in (1, 2, 13, 40):
            brute = sum(np.exp(i * eps) * 1e-7 for i in range(k))
            assert group_delta(eps, 1e-7, k) == pytest.approx(brute, rel=1e-12)


def test_note_values_for_eps1_delta1e7() -> None:
    # cl note, Fig. 2: 1 − δ_k for k = 12, 13 (6 decimals) and the first k with bound 0 (17)
    bound = drop_probability_lower_bound(1.0, 1e-7, np.arange(1, 20))
    assert bound[11] == pytest.approx(0.990528, abs=5e-7)
    assert bound[12] == pytest.approx(0.974253, abs=5e-7)
    assert np.flatnonzero(bound == 0.0)[0] + 1 == 17


def test_bad_k_is_refused() -> None:
    with pytest.raises(ValueError, match="k"):
        group_delta(1.0, 1e-7, 0)


def test_figure_reproduces_the_caption(store_overrides: list[str], tmp_path: Path) -> None:
    # caption: "classes having fewer than 13 samples are discarded with at least 99% probability"
    run = run_experiment("cl/fig2", store_overrides)
    summary = pd.read_csv(tmp_path / "results" / "cl" / "fig2.summary.csv")
    row = summary[
        (summary.metric == "largest_k_dropped_99")
        & (summary.epsilon == 1.0)
        & (summary.delta == 1e-7)
    ]
    assert row["value"].item() == 12
    # the note's grid of largest k (δ = 1e-5 / 1e-7, ε = 0.1 … 8), closed form
    note = {1e-5: [46, 12, 7, 4, 2, 1], 1e-7: [92, 22, 12, 6, 3, 2]}
    got = summary[summary.metric == "largest_k_dropped_99"]
    for delta, expected in note.items():
        values = got[got.delta == delta].sort_values("epsilon")["value"].tolist()
        assert values == expected
    assert len(run.table) == 12 * 100
