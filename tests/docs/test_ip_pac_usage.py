"""The usage sections of docs/ip.md and docs/pac.md run as written (a new user's session).

Every ``python`` block of the section "Using the library from Python" is executed in order in one
namespace, in a fresh working directory; the checks below use the names the snippets define.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _run_usage(doc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    text = (DOCS / doc).read_text(encoding="utf-8")
    section = text.split("## Using the library from Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert blocks, f"{doc}: no python block in its usage section"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    for block in blocks:
        exec(compile(block, f"{doc} (usage)", "exec"), namespace)
    return namespace


@pytest.mark.slow
def test_ip_usage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ns = _run_usage("ip.md", tmp_path, monkeypatch)
    assert (tmp_path / "ip-cache").is_dir()  # the base model is cached where the snippet says
    cal, rows, base, series = ns["cal"], ns["rows"], ns["base"], ns["series"]
    # ε = 1: the classical σ holds; its exact δ is ip note M1's 4.11e-8 (Balle & Wang profile)
    assert cal.rule == "classical" and cal.true_delta == pytest.approx(4.1137e-8, rel=1e-4)
    # σ = sqrt(2 ln(1.25/δ)) Δ/ε with Δ = α μ_C (ip paper, Def. 4)
    assert cal.sigma == pytest.approx(4.844805262605389 * 0.1 * ns["mu"], rel=1e-12)
    assert ns["mu"] >= 1.0  # the row-normalised last layer has norm in [1, sqrt(k)] (docs/ip.md)
    assert list(rows["alpha"]) == [0.0, 0.05, 0.1, 0.2] and (rows["n_draws"] == 5).all()
    # α = 0: no noise, every draw gives the clean accuracy of the cached logits
    assert rows["accuracy"].iloc[0] == pytest.approx(base.clean_accuracy, abs=1e-6)
    assert rows["accuracy_std"].iloc[0] == 0.0
    assert set(series["series"]) == {"sll_output", "sll_input"} and len(series) == 8
    out = series[series["series"] == "sll_output"]
    assert (out["mu"] == ns["mu"]).all()  # corrected mode: μ_C is the computed bound
    g = ns["ip"].chaining(ns["ip"].IPGuarantee(1.0, 1e-5, 0.1), 0.25)
    assert (g.epsilon, g.alpha) == (3.0, 0.25)
    assert g.delta == pytest.approx(1.110733792739e-4, rel=1e-11)  # ip note §7


@pytest.mark.slow
def test_pac_usage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ns = _run_usage("pac.md", tmp_path, monkeypatch)
    private, pool = ns["private"], ns["pool"]
    assert len(private.rows) == 4  # two budgets × two noise methods
    assert private.released_subset.size == pool.size // 2
    assert private.held_out.size == pool.size - pool.size // 2
    by = {(r["v"], r["method"].split("_")[1]): r for r in private.rows}
    # Algorithm 1's isotropic noise is Tr/(2v): its norm halves from v = 1 to v = 4
    alg = [r for r in private.rows if r["method"].startswith("pac_algorithm1")]
    assert alg[0]["noise_norm"] / alg[1]["noise_norm"] == pytest.approx(2.0, rel=1e-6)
    assert by[(1.0, "theorem3")]["noise_norm"] <= alg[0]["noise_norm"]  # Cauchy–Schwarz
    assert ns["release"].shape == (64 * 16 + 16 + 16 * 10 + 10,)  # MLP 64-16-10 weights, biases
    norms = {r["method"]: r["noise_norm"] for r in ns["rows"]}
    # pac note T5: local DP on the digits (d = 64) is 64/sqrt(2) = 45.2548
    assert norms["dp_local"] == pytest.approx(45.2548, abs=1e-4)
    assert norms["pac_theorem3_exact"] <= norms["pac_isotropic_exact"] < norms["dp_local"]
    # pac note T1: p*(0.01, 1) = 0.3573
    assert float(ns["pac"].posterior_success_bound(0.01, 1.0)) == pytest.approx(0.3573, abs=5e-5)
    assert np.isfinite([r["accuracy_noisy_mean"] for r in private.rows]).all()
