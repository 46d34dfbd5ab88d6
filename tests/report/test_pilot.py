"""The real pipeline on the cl Fig. 2 pilot: runner (tiny profile) → report, with the shipped
reference file ``references/cl-fig2.yaml``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from privrepro.report.make import generate_report
from privrepro.report.references import default_references_dir


def test_pilot_runner_to_report(tmp_path: Path, store_overrides: list[str]) -> None:
    from privrepro.runner import run

    assert (default_references_dir() / "cl-fig2.yaml").is_file()  # shipped with the package
    run.run_experiment("cl/fig2", ["profile=tiny", "device=cpu", *store_overrides])
    out = generate_report(
        tmp_path / "results", tmp_path / "plots", tmp_path / "REPORT.md", conf=None, html=False
    )
    card = out.scorecard.set_index("id")
    # the caption's claim (cl paper, Fig. 2: ε=1, δ=1e-7, "fewer than 13") holds under tiny
    assert card.loc["cl-fig2-caption-k12", ["verdict", "reproduced", "profile"]].tolist() == [
        "pass",
        12,
        "tiny",
    ]
    # entries on the full grid are declared for smoke/paper only: not comparable under tiny
    assert card.loc["cl-fig2-largest-k-eps2-delta1e-07", "code"] == "profile"
    md = (tmp_path / "REPORT" / "cl.md").read_text()  # the paper's page, beside REPORT.md
    assert "![cl Fig. 2](../plots/cl/fig2.png)" in md
    # an edited summary cannot change the verdict: it no longer matches its hash in meta.json,
    # is named in a warning, and the figure is scored from the summary of its verified table
    path = tmp_path / "results" / "cl" / "fig2.summary.csv"
    summary = pd.read_csv(path)
    hit = (summary["metric"] == "largest_k_dropped_99") & (summary["epsilon"] == 1.0)
    summary.loc[hit, "value"] = 11
    summary.to_csv(path, index=False)
    out = generate_report(
        tmp_path / "results", tmp_path / "plots", tmp_path / "REPORT.md", conf=None, html=False
    )
    assert out.scorecard.set_index("id").loc["cl-fig2-caption-k12", "verdict"] == "pass"
    assert any(str(path) in w for w in out.figures[("cl", "fig2")].warnings)
