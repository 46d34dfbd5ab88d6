"""The usage sections of docs/cl.md and docs/cl-peft.md run as a new user would run them: each
``python`` block of "Using the library from Python", as written, in an empty folder (blocks
whose first line starts with ``# needs`` want real data and are only compiled). What the prose
around them claims is checked on what they computed."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _snippets(doc: str) -> list[str]:
    text = (DOCS / doc).read_text(encoding="utf-8")
    section = text.split("## Using the library from Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def _run(code: str, where: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.chdir(where)
    namespace: dict = {"__name__": "__docs__"}
    exec(compile(code, "<docs snippet>", "exec"), namespace)
    return namespace


def test_every_snippet_compiles_and_the_sections_exist() -> None:
    for doc, count in (("cl.md", 4), ("cl-peft.md", 2)):
        snippets = _snippets(doc)
        assert len(snippets) == count, doc
        for code in snippets:
            compile(code, doc, "exec")


def test_cosine_classifier_in_one_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one_call, shared, orders, real = _snippets("cl.md")
    assert real.startswith("# needs")
    ns = _run(one_call, tmp_path, monkeypatch)
    run = ns["run"]
    # σ of the analytic Gaussian mechanism at (1, 1e-5), Δ = 1 (cl note §7.5: 3.7306)
    assert run.sigma == pytest.approx(3.7306, abs=5e-5)
    assert run.acc.shape == (10, 10) and 0 < run.final_aa < 1
    ns = _run(shared, tmp_path, monkeypatch)
    # the last run of the loop released the base labels plus ×100 dummies: 100 · 100 per task
    assert ns["run"].labels_released == 100 * 100
    ns = _run(orders, tmp_path, monkeypatch)
    assert len(ns["table"]) == 2 * 6 * 5  # two models × six orders × five tasks
    assert list(tmp_path.iterdir()) == []  # synthetic features: nothing written


@pytest.mark.slow
def test_peft_head_ensemble(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fixed, tuned = _snippets("cl-peft.md")
    rows = _run(fixed, tmp_path, monkeypatch)["rows"]
    priv = rows[rows["row"] == "privacy"]
    assert len(priv) == 5 and (priv["dp_epsilon_spent"] <= 8.0).all()
    aa = rows[(rows["row"] == "metric") & (rows["metric"] == "AA")]["value"].to_numpy()
    assert aa.shape == (5,) and np.all((aa >= 0) & (aa <= 1))
    rows = _run(tuned, tmp_path, monkeypatch)["rows"]
    assert set(rows["method"]) == {"peft_head", "naive_head"}
    tuning = rows[rows["row"] == "tuning"]
    # both methods of the repeat share one study of three trials, kept in the workspace
    assert tuning["study"].nunique() == 1 and set(tuning["n_complete"]) == {3}
    assert len(list((tmp_path / "studies").glob("*.log"))) == 1
