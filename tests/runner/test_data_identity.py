"""A unit is stored only under the fingerprint of the data it read.

pb Fig. 7 reads UCI Adult from a data root (tiny files with the release's documented counts);
its fingerprint (the files' SHA-256) is taken in the plan. Data edited after the plan — before a
unit starts, or while it computes — stops the run in one line and leaves no unit under the plan's
fingerprint; the next run plans on the data as it is and computes on it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_untrusted_store import _adult

from privrepro.data.provenance import DataChangedError, read_from
from privrepro.figures.pb.fig7 import PBGRRAdult
from privrepro.runner import run as run_module
from privrepro.runner.plan import plan_config
from privrepro.runner.preflight import error_line
from privrepro.runner.run import run_experiment


def _base(tmp_path: Path, root: Path) -> list[str]:
    return [
        f"paths.experiments_dir={tmp_path / 'exp'}",
        f"paths.results_dir={tmp_path / 'res'}",
        f"paths.plots_dir={tmp_path / 'plots'}",
        f"paths.data_dir={root}",
        "progress=false",
        "device=cpu",
        "profile=tiny",
        "params.data=uci",
        "plot=false",
    ]


def _edit(root: Path) -> None:
    """One record's age changed: the same size, another SHA-256."""
    path = root / "adult" / "adult.data"
    text = path.read_text()
    path.write_text(text.replace("39,", "38,", 1))


def _units(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "exp" / "pb" / "fig7"
    return [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))]


def test_data_edited_between_plan_and_compute_is_refused_before_the_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _adult(tmp_path / "data", 39)
    planned = read_from("adult", root).fingerprint

    def plan_then_edit(cfg: Any, **kw: Any) -> Any:
        plan = plan_config(cfg, **kw)
        _edit(root)  # a long sweep's data root edited after its plan
        return plan

    computed: list[Any] = []
    original = PBGRRAdult.compute
    monkeypatch.setattr(run_module, "plan_config", plan_then_edit)

    def counted(self: Any, unit: Any, ctx: Any) -> Any:
        computed.append(unit)
        return original(self, unit, ctx)

    monkeypatch.setattr(PBGRRAdult, "compute", counted)
    with pytest.raises(DataChangedError) as err:
        run_experiment("pb/fig7", _base(tmp_path, root))
    line = error_line(err.value)
    assert line is not None and line.startswith("data changed: UCI Adult under")
    assert "as unit" in line and str(planned)[:24] in line and "\n" not in line
    assert computed == []  # refused before any compute
    assert not (tmp_path / "exp" / "pb" / "fig7").exists() or _units(tmp_path) == []


def test_data_edited_while_a_unit_computes_is_not_stored_under_the_old_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _adult(tmp_path / "data", 39)
    before = read_from("adult", root).fingerprint
    original: Callable[..., Any] = PBGRRAdult.compute

    def compute_then_edit(self: Any, unit: Any, ctx: Any) -> Any:
        rows = original(self, unit, ctx)
        _edit(root)
        return rows

    monkeypatch.setattr(PBGRRAdult, "compute", compute_then_edit)
    with pytest.raises(DataChangedError, match="while unit"):
        run_experiment("pb/fig7", _base(tmp_path, root))
    assert _units(tmp_path) == []
    monkeypatch.undo()

    after = read_from("adult", root).fingerprint
    assert after != before
    again = run_experiment("pb/fig7", _base(tmp_path, root))  # planned on the data as it is
    assert again.computed == len(_units(tmp_path)) > 0
    stored = {json.loads((u / "config.json").read_text())["data"] for u in _units(tmp_path)}
    assert stored == {after}


def test_unchanged_data_is_stored_and_reused(tmp_path: Path) -> None:
    root = _adult(tmp_path / "data", 39)
    first = run_experiment("pb/fig7", _base(tmp_path, root))
    second = run_experiment("pb/fig7", _base(tmp_path, root))
    assert first.computed > 0 and (second.computed, second.reused) == (0, first.computed)
