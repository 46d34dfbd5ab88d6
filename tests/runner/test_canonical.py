"""A figure's canonical view: its default plot, summary and report verdicts come from the figure's
own parameters, whatever ran last; an ad-hoc run and a sweep get their own plots."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from privrepro.report.references import load_references
from privrepro.report.results import FigureResults, load_results
from privrepro.report.scorecard import build_scorecard
from privrepro.runner.canonical import _view, faithful_first, is_canonical_run
from privrepro.runner.figure_tables import StoredUnit
from privrepro.runner.run_views import varied_name

REPO = Path(__file__).resolve().parents[2]


def _unit(
    uid: str, seed: int, eps: float, finished: str = "", profile: str = "smoke"
) -> StoredUnit:
    identity = {"profile": profile, "seed": seed, "unit": {"k_max": 100, "epsilon": eps}}
    return StoredUnit(uid, identity, {"finished": finished})


OWN = [{"k_max": 100, "epsilon": 1.0}, {"k_max": 100, "epsilon": 8.0}]


def test_a_seed_is_canonical_only_with_every_unit_of_the_figure_own_parameters() -> None:
    units = [
        _unit("a0", 0, 1.0),
        _unit("b0", 0, 8.0),
        _unit("a1", 1, 1.0),  # seed 1 holds half the grid (a sweep's job): not canonical
        _unit("a2", 2, 8.0),
        _unit("b2", 2, 1.0),
        _unit("old", 3, 1.0, "2026-01-01T00:00:00"),  # the same unit twice (other data):
        _unit("new", 3, 1.0, "2026-02-01T00:00:00"),  # the copy finished last is canonical
        _unit("c3", 3, 8.0),
        _unit("k", 0, 2.0),  # other parameters (an ad-hoc run)
        _unit("p", 0, 1.0, profile="paper"),  # another profile
    ]
    view = _view(units, "smoke", None, OWN)
    assert view.seeds == [0, 2, 3]
    assert view.unit_ids == ["a0", "b0", "b2", "a2", "new", "c3"]  # the recipe's order per seed
    assert view.seed_ids(2) == ["b2", "a2"]
    views = {"smoke": view}
    assert is_canonical_run(views, "smoke", 2, ["a2", "b2"])
    assert not is_canonical_run(views, "smoke", 1, ["a1"])
    assert not is_canonical_run(views, "smoke", 0, ["a0"])  # part of seed 0's units
    assert not is_canonical_run(views, "paper", 0, ["p"])
    assert faithful_first(["tiny", "custom", "paper", "smoke"]) == [
        "paper",
        "smoke",
        "tiny",
        "custom",
    ]


def test_an_adhoc_plot_is_named_by_what_the_run_varied() -> None:
    typed = ["experiment=cl/fig2", "profile=paper", "seed=3", "params.k_max=200", "progress=false"]
    assert (
        varied_name([*typed, "paths.plots_dir=/x", "device=cpu"])
        == "profile-paper_seed-3_k_max-200"
    )
    assert varied_name(["params.epsilons=[1.0,8.0]"]) == "epsilons-1p0_8p0"
    assert varied_name(["experiment=cl/fig2"]) == "run"
    # a long one (a weights path among the overrides) stays a short file name, still distinct
    long = [f"params.features.weights=/data/weights/{'x' * 300}/{v}.pt" for v in ("a", "b")]
    names = [varied_name([o]) for o in long]
    assert all(len(n) <= 100 for n in names) and names[0] != names[1]


def test_a_sweep_plot_says_what_its_jobs_varied() -> None:
    from privrepro.runner.run_views import sweep_title

    def jobs(*overrides: str) -> list[dict[str, list[str]]]:
        return [{"overrides": ["experiment=cl/fig2", o]} for o in overrides]

    assert sweep_title(jobs("seed=0", "seed=1")) == (["seed"], "varied seed")
    # two workers on the same units: not a seed sweep (it was titled "varied seed")
    assert sweep_title(jobs("worker=0", "worker=1")) == (
        ["worker"],
        "varied worker only: the same units",
    )
    assert sweep_title(jobs("params.k_max=5", "params.k_max=9"))[1] == "varied k_max"
    assert sweep_title(jobs("seed=0")) == ([], "one job")  # one figure of a sweep of figures


def test_jobs_that_computed_the_same_numbers_are_told_apart_from_those_that_did_not() -> None:
    from privrepro.runner.run_views import same_numbers

    a = pd.DataFrame({"seed": [0, 0], "unit_id": ["u", "u"], "k": [1, 2], "p": [0.5, 0.25]})
    b = a.assign(seed=1, unit_id="v").iloc[::-1]  # another seed, rows in another order
    assert same_numbers([a, b])
    assert not same_numbers([a, b.assign(p=[0.25, 0.5 * (1 + 1e-9)])])  # one number moved
    assert not same_numbers([a, a.assign(k=[1, 3])])
    assert not same_numbers([a, a.assign(extra="x")]) and not same_numbers([a])


def test_the_report_scores_the_canonical_rows_alone() -> None:
    from privrepro.report.results import _keep_canonical

    table = pd.DataFrame({"unit_id": ["a", "a", "b", "c"], "profile": "smoke", "v": [1, 2, 3, 4]})
    canonical = {"smoke": {"seeds": [0], "unit_ids": ["a", "b"], "params": {}}}
    fr = FigureResults("cl", "fig2", table=table, meta={"canonical": canonical})
    _keep_canonical(fr)
    assert fr.table is not None and list(fr.table["v"]) == [1, 2, 3] and fr.table_units == 3
    from privrepro.report.figure_section import _scored_text

    said = _scored_text(fr) or ""
    assert "under profile `smoke`" in said and "seed 0 (2 units)" in said
    assert "other 1 units (ad-hoc runs, sweeps)" in said
    only_adhoc = FigureResults("cl", "fig2", table=table, summary=table, meta={"canonical": {}})
    _keep_canonical(only_adhoc)
    assert only_adhoc.table is None and only_adhoc.summary is None  # scored as not run
    old = FigureResults("cl", "fig2", table=table, meta={})  # written before canonical views
    _keep_canonical(old)
    assert old.table is not None and len(old.table) == 4


def _paths(tmp: Path) -> list[str]:
    return [
        f"paths.experiments_dir={tmp / 'exp'}",
        f"paths.results_dir={tmp / 'res'}",
        f"paths.plots_dir={tmp / 'plots'}",
        "progress=false",
    ]


def _verdicts(tmp: Path) -> pd.DataFrame:
    figures = load_results(tmp / "res", tmp / "plots", REPO / "conf" / "experiment")
    card = build_scorecard(figures, load_references())
    rows = card[card["figure"].eq("fig2") & card["paper"].eq("cl")]
    return rows[["id", "profile", "reproduced", "verdict", "why"]].reset_index(drop=True)


def _state(tmp: Path) -> dict[str, object]:
    res, plots = tmp / "res" / "cl", tmp / "plots" / "cl"
    meta = json.loads((res / "fig2.meta.json").read_text())
    return {
        "summary": (res / "fig2.summary.csv").read_bytes(),
        "png": (plots / "fig2.png").read_bytes(),
        "canonical": meta["canonical"],
    }


def _privrepro(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIVREPRO_")}
    out = subprocess.run(
        [sys.executable, "-m", "privrepro.runner.cli", *args, *_paths(tmp)],
        cwd=tmp,
        env={**env, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out


@pytest.mark.slow
def test_an_adhoc_run_and_a_sweep_leave_the_canonical_view(tmp_path: Path) -> None:
    """cl Fig. 2 in smoke (analytic: seconds), then the README's ad-hoc example and the README's
    sweep of cl Fig. 2, each as typed: the default plot, the summary and the report's verdicts
    stay those of the figure's own run; the ad-hoc run and the sweep each get their own plot."""
    _privrepro(tmp_path, "experiment=cl/fig2")
    before, verdicts = _state(tmp_path), _verdicts(tmp_path)
    assert set(verdicts["verdict"]) == {"pass"} and set(verdicts["profile"]) == {"smoke"}
    assert before["canonical"]["smoke"]["seeds"] == [0]  # type: ignore[index]
    assert len(before["canonical"]["smoke"]["unit_ids"]) == 12  # type: ignore[index]

    _privrepro(tmp_path, "experiment=cl/fig2", "profile=paper", "seed=3", "params.k_max=200")
    own = tmp_path / "plots" / "cl" / "fig2" / "runs" / "profile-paper_seed-3_k_max-200.png"
    assert own.is_file()
    assert _state(tmp_path) == before
    pd.testing.assert_frame_equal(_verdicts(tmp_path), verdicts)

    out = _privrepro(
        tmp_path, "-m", "experiment=cl/fig2", "params.epsilons=[1.0],[8.0]", "seed=0,1"
    )
    sweep = [p for p in (tmp_path / "exp" / "_sweeps").iterdir() if p.is_dir()]
    assert len(sweep) == 1
    drawn = list((tmp_path / "plots" / "cl" / "fig2" / "sweeps").glob("*.png"))
    assert [p.name for p in drawn] == [f"{sweep[0].name}_epsilons+seed.png"], out.stdout[-2000:]
    assert (sweep[0] / "cl-fig2.png").is_file()
    assert _state(tmp_path) == before
    pd.testing.assert_frame_equal(_verdicts(tmp_path), verdicts)
    # the table holds them all: the 12 canonical units, the ad-hoc run's 12 and the sweep's 4
    # new ones (seed 1); the sweep's seed-0 jobs reused canonical units
    table = pd.read_parquet(tmp_path / "res" / "cl" / "fig2.parquet")
    assert table["unit_id"].nunique() == 12 + 12 + 4


def test_only_a_run_of_the_figure_own_parameters_records_them() -> None:
    """Where or how a run goes (paths, threads, progress, device), its profile and its seed leave
    it a run of the figure's own parameters; any ``params`` override makes it ad hoc."""
    from privrepro.runner.run_views import own_configuration

    where = ["experiment=cl/fig2", "paths.results_dir=/x", "progress=false", "threads=1"]
    assert own_configuration([*where, "profile=tiny", "seed=3", "device=cpu"])
    assert own_configuration([])
    assert not own_configuration([*where, "params.k_max=200"])
    assert not own_configuration([*where, "+params.extra=1"])


def test_views_come_from_the_recorded_units_and_say_why_a_profile_has_none(
    tmp_path: Path,
) -> None:
    """A view is read from the units the store records for its profile (no configuration is
    composed); a profile recorded as not composable, recorded for another recipe version or not
    recorded has no view, and the gap says which."""
    from dataclasses import dataclass

    from recipes_for_tests import NoiseFigure, NoiseParams

    from privrepro.runner.canonical import canonical_views, record_canonical, recorded_profiles
    from privrepro.store.units import UnitStore

    @dataclass
    class Derived:
        paper: str
        figure: str
        units: list[StoredUnit]

    recipe, rid = NoiseFigure(), ("recipes_for_tests:NoiseFigure", 1)
    params = NoiseParams(n_units=2, draws=7)
    own = recipe.units(params)
    store = UnitStore(tmp_path, "test", "noise")
    record_canonical(store, "smoke", rid, params, own)
    record_canonical(store, "paper", rid, error="profile 'paper' not found")
    record_canonical(store, "tiny", (rid[0], 2), params, own)
    assert recorded_profiles(store)["smoke"]["units"] == own

    def unit(uid: str, profile: str, u: dict[str, object]) -> StoredUnit:
        return StoredUnit(uid, {"profile": profile, "seed": 0, "unit": u}, {})

    held = [
        unit(f"{p}{i}", p, u) for p in ("smoke", "paper", "tiny", "x") for i, u in enumerate(own)
    ]
    gaps: dict[str, str] = {}
    views = canonical_views(
        Derived("test", "noise", held), recipe, rid, recorded_profiles(store), gaps
    )
    assert list(views) == ["smoke"] and views["smoke"].unit_ids == ["smoke0", "smoke1"]
    assert views["smoke"].params == params
    assert "cannot be composed (profile 'paper' not found)" in gaps["paper"]
    assert "version 2" in gaps["tiny"] and "no record" in gaps["x"]
