"""``make rehearsal`` prices the cl PEFT figures from their FiLM image-passes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from privrepro.rehearsal.rehearse import rehearse_all
from privrepro.rehearsal.settings import RehearsalSettings
from privrepro.rehearsal.standins import write_standin
from privrepro.rehearsal.summary import gpu_totals


def test_the_peft_rows_carry_their_film_price_and_count_shared_studies_once(
    tmp_path: Path,
) -> None:
    """cl Figs. 3 and 4 PEFT priced at a stated 1 ms and 72 GFLOP per image-pass (bf16, the
    paper profile's precision, physical batch 256: the cache a rehearsal keeps of the counted
    step). Fig. 4 alone (closed form from its grid, cl paper App. E.1): 15 studies (3 ε × 5
    repeats) × 20 trials × 40 epochs × 3,500 tuning rows (70 % of a 10-class task's 5,000) =
    42.0 M passes and 45 ensembles × 40 epochs × 50,000 rows = 90.0 M: 132.0 M, 36.7 h. Its
    ε = 1, 8 studies (10) are Fig. 3's, so 28.0 M passes (7.8 h) are counted by the row above
    and the totals leave them out. No unit is run and no data file is read."""
    root = tmp_path / "data"
    write_standin("adult", root, {"train": 20, "test": 20})
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (scratch / "film-pass-cost.json").write_text(json.dumps({"bf16|256|H100 SXM": [1e-3, 72e9]}))
    settings = RehearsalSettings(root, scratch)
    table = rehearse_all(["cl/fig3_peft", "cl/fig4_peft"], settings, in_process=True, echo=False)
    rows = table.set_index("experiment")
    assert list(rows["status"]) == ["priced", "priced"], list(rows["note"])
    fig4 = rows.loc["cl/fig4_peft"]
    assert fig4["film_mpasses"] == pytest.approx(42.0 + 90.0)
    assert fig4["predicted_gpu_s"] == pytest.approx(132.0e6 * 1e-3)
    assert fig4["predicted_tflop"] == pytest.approx(132.0e6 * 72e9 / 1e12)
    assert fig4["cache_shared_gpu_s"] == pytest.approx(10 * 20 * 40 * 3500 * 1e-3)
    parts = json.loads(fig4["parts"])
    assert parts["FiLM tuning"][1] == pytest.approx(42.0e6 * 1e-3)
    assert parts["FiLM final training"][1] == pytest.approx(90.0e6 * 1e-3)
    assert fig4["estimated_device_bytes"] > 86e6 * 2  # ViT-B/16's weights in bf16, at least
    assert pd.isna(fig4["predicted_h"]) and not fig4["lower_bound"]
    totals = gpu_totals(table)
    fig3_h = rows.loc["cl/fig3_peft", "predicted_gpu_s"] / 3600
    assert totals["film_h"] == pytest.approx(fig3_h + (132.0 - 28.0) * 1e6 * 1e-3 / 3600)
    assert totals["total_h"] == pytest.approx(totals["film_h"])
