"""The "From Python" section of docs/pb.md runs as a new user would run it, and prints what the
page says it prints (each ```python block followed by a ```text block of its output)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "pb.md"


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def _blocks(section: str) -> list[tuple[str, str]]:
    """(code, printed output) pairs, in page order."""
    pairs = re.findall(r"```python\n(.*?)```\s*```text\n(.*?)```", section, flags=re.S)
    assert len(pairs) == 2, "docs/pb.md: each python snippet is followed by its output"
    return pairs


@pytest.mark.slow  # about 5 s of CPU: six exact profiles, matplotlib's import, one figure
def test_from_python_section_runs_and_prints_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_pb"}
    for code, printed in _blocks(_section("From Python")):
        exec(compile(code, str(DOC), "exec"), namespace)  # one namespace, like a notebook
        got = capsys.readouterr().out
        assert [ln.rstrip() for ln in got.splitlines()] == [
            ln.rstrip() for ln in printed.strip("\n").splitlines()
        ]
    # the utility constraint holds on the draws: in-region fraction ≥ ρ = 0.9 up to 5 standard
    # errors of a binomial mean over 100,000 draws (√(0.9·0.1/1e5) ≈ 9.5e-4)
    assert float(namespace["inside"]) >= 0.9 - 5 * 9.5e-4  # type: ignore[arg-type]
    rows = namespace["rows"]
    assert set(rows["accountant"]) == {"paper", "exact"}  # type: ignore[index]
    assert np.all(np.diff(rows[rows["case"] == "gaussian"]["epsilon"]) > 0)  # type: ignore[index]
    assert (tmp_path / "sweep.png").stat().st_size > 0
