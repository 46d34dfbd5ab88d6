"""Results and runs under faults beyond the store's own: every results file is read bounded, the
report scores only verified numbers, canonical views that vanish say so, ``force=true`` keeps the
stored unit until the new one is sealed, and the smaller cases of the command line.

Two figures of the test recipes (``test/noise``, and ``test/summary``, which summarises) run once
in a scratch store; each test damages a copy. Every read that could hang runs under an alarm
(``tests/alarm.py``): a regression fails the test instead of hanging it; oversized files are
sparse.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from recipes_for_tests import SUMMARY_EXPERIMENT, scratch_paths

from alarm import bounded
from privrepro.report.results import load_figure
from privrepro.runner import figure_tables as tables
from privrepro.runner import make_tables
from privrepro.runner.replot import replot
from privrepro.runner.run import run_experiment
from privrepro.store.units import UnitStore


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory, module_conf_root: Path) -> Path:
    """``test/noise`` and ``test/summary`` run once each (their default parameters: each has a
    canonical view and a default plot), with the config root beside them."""
    tmp = tmp_path_factory.mktemp("ran")
    conf = Path(shutil.copytree(module_conf_root, tmp / "conf"))
    (conf / "experiment" / "test" / "summary.yaml").write_text(SUMMARY_EXPERIMENT)
    for name in ("test/noise", "test/summary"):
        run_experiment(name, scratch_paths(tmp, "device=cpu", "params.draws=50"), conf=conf)
    # draws=50 is not the figures' own parameter: make it theirs, so the runs are canonical
    for name in ("noise", "summary"):
        folder = conf / "params" / "test" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "smoke.yaml").write_text("draws: 50\n")
    for store in make_tables.figure_stores(tmp / "exp"):
        make_tables.rebuild(store, tmp / "res", conf=conf)
    replot(tmp / "res", tmp / "plots", conf)  # the default plots
    return tmp


@pytest.fixture
def site(ran: Path, tmp_path: Path) -> Path:
    """A copy of the store, results, plots and config root, to damage."""
    shutil.copytree(ran, tmp_path / "s", symlinks=True)
    return tmp_path / "s"


def _res(site: Path, name: str, suffix: str) -> Path:
    return site / "res" / "test" / f"{name}{suffix}"


def _damage(path: Path, kind: str) -> None:
    path.unlink()
    if kind == "pipe":
        os.mkfifo(path)
    elif kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "oversized":
        with open(path, "wb") as fh:
            fh.truncate(8 << 30)  # sparse


def test_the_runs_are_canonical(ran: Path) -> None:
    """The premise of the tests below: each figure has a canonical view, a summary (the one that
    summarises) and a default plot."""
    for name in ("noise", "summary"):
        meta = json.loads(_res(ran, name, ".meta.json").read_text())
        assert list(meta["canonical"]) == ["smoke"]
        assert (ran / "plots" / "test" / f"{name}.png").is_file()
    meta = json.loads(_res(ran, "summary", ".meta.json").read_text())
    assert meta["table"]["summary_sha256"] and _res(ran, "summary", ".summary.csv").is_file()


# -- 1. every results file is read bounded: make plots, make tables, make report ----------------


@pytest.mark.parametrize("kind", ["pipe", "device", "oversized"])
@pytest.mark.parametrize("suffix", [".parquet", ".meta.json"])
def test_make_plots_refuses_a_special_table_or_meta_in_one_line_and_draws_the_rest(
    site: Path, suffix: str, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: a FIFO hangs ``make plots`` with nothing drawn; a link to /dev/zero is read until the
    kernel kills the process."""
    target = _res(site, "noise", suffix)
    _damage(target, kind)
    (site / "plots" / "test" / "summary.png").unlink()
    with bounded(120):
        made, failed = replot(site / "res", site / "plots", site / "conf")
    assert failed == ["test/noise"]
    assert site / "plots" / "test" / "summary.png" in made  # the next figure goes on
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("test/noise")]
    assert len(err) == 1 and str(target) in err[0]


def test_a_csv_export_that_is_a_pipe_is_said_and_the_parquet_drawn(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    csv = _res(site, "noise", ".csv")
    _damage(csv, "pipe")
    with bounded(120), caplog.at_level(logging.WARNING, logger="privrepro.tables"):
        _, failed = replot(site / "res", site / "plots", site / "conf")
    assert failed == []
    assert any(str(csv) in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("kind", ["pipe", "device"])
def test_make_tables_reads_no_special_run_record_and_replaces_special_results(
    site: Path, kind: str
) -> None:
    """``last_run.json`` in the store and the table files are never waited on or read."""
    _damage(site / "exp" / "test" / "noise" / tables.LAST_RUN, kind)
    for suffix in (".parquet", ".csv", ".summary.csv", ".meta.json"):
        if os.path.lexists(_res(site, "summary", suffix)):
            _damage(_res(site, "summary", suffix), kind)
    args = ["--experiments", str(site / "exp"), "--results", str(site / "res")]
    with bounded(120):
        assert make_tables.main([*args, "--conf", str(site / "conf")]) == 0
    table = pd.read_parquet(_res(site, "summary", ".parquet"))
    assert table["unit_id"].nunique() == 4
    assert _res(site, "summary", ".summary.csv").is_file()


@pytest.mark.parametrize("kind", ["pipe", "device", "oversized"])
@pytest.mark.parametrize("suffix", [".parquet", ".meta.json"])
def test_the_report_names_a_special_results_file_and_scores_nothing_of_it(
    site: Path, suffix: str, kind: str
) -> None:
    target = _res(site, "noise", suffix)
    _damage(target, kind)
    with bounded(120):
        fr = load_figure(site / "res", site / "plots", "test", "noise", site / "conf")
    assert fr.error is not None and str(target) in fr.error and "\n" not in fr.error
    assert fr.table is None and fr.summary is None


# -- 3. the report scores only verified numbers --------------------------------------------------


def test_an_edited_summary_is_said_and_the_verified_one_scored(
    site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Was: one number edited in ``summary.csv`` flipped a verdict without a word."""
    path = _res(site, "summary", ".summary.csv")
    verified = pd.read_csv(path)
    edited = verified.copy()
    edited.loc[0, "value"] = 99.0
    edited.to_csv(path, index=False)
    with caplog.at_level(logging.WARNING, logger="privrepro.report"):
        fr = load_figure(site / "res", site / "plots", "test", "summary", site / "conf")
    assert fr.error is None and len(fr.warnings) == 1 and str(path) in fr.warnings[0]
    assert any(str(path) in r.getMessage() for r in caplog.records)
    got = fr.summary
    assert got is not None
    pd.testing.assert_frame_equal(got.reset_index(drop=True), verified, check_exact=False)
    assert 99.0 not in set(got["value"])


@pytest.mark.parametrize("fault", ["pipe", "removed"])
def test_a_summary_that_cannot_be_read_is_derived_again(site: Path, fault: str) -> None:
    path = _res(site, "summary", ".summary.csv")
    verified = pd.read_csv(path)
    if fault == "pipe":
        _damage(path, "pipe")
    else:
        path.unlink()
    with bounded(120):
        fr = load_figure(site / "res", site / "plots", "test", "summary", site / "conf")
    assert fr.summary is not None and len(fr.warnings) == 1
    pd.testing.assert_frame_equal(fr.summary, verified, check_exact=False)


def test_an_edited_table_is_not_scored(site: Path) -> None:
    path = _res(site, "summary", ".parquet")
    table = pd.read_parquet(path)
    table.loc[0, "x"] = 99.0
    table.to_parquet(path, index=False)
    fr = load_figure(site / "res", site / "plots", "test", "summary", site / "conf")
    assert fr.error is not None and str(path) in fr.error and not fr.ran


# -- 4. canonical views that vanish say so -------------------------------------------------------


@pytest.mark.parametrize("change", ["parameters changed", "profile file removed"])
def test_a_vanished_canonical_view_is_said_recorded_and_not_drawn(
    site: Path, change: str, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: ``summary.csv`` deleted, ``canonical: {}`` in the meta, the old default plot left
    standing, and the report saying "Not run" for a figure with verified units."""
    conf = site / "conf"
    if change == "parameters changed":
        (conf / "params" / "test" / "summary" / "smoke.yaml").write_text("draws: 60\n")
    else:
        (conf / "profile" / "smoke.yaml").unlink()
    store = UnitStore(site / "exp", "test", "summary")
    with caplog.at_level(logging.WARNING, logger="privrepro"):
        make_tables.rebuild(store, site / "res", conf=conf)
    said = [r.getMessage() for r in caplog.records if "had a canonical view" in r.getMessage()]
    assert len(said) == 1 and "profile smoke" in said[0] and "\n" not in said[0]
    meta = json.loads(_res(site, "summary", ".meta.json").read_text())
    assert meta["canonical"] == {} and meta["canonical_vanished"] == ["smoke"]
    why = meta["canonical_gaps"]["smoke"]
    assert ("cannot be composed" in why) == (change == "profile file removed")
    assert meta["table"]["summary_sha256"] is None
    assert not _res(site, "summary", ".summary.csv").exists()
    # make plots: the stale default plot is removed, in one line
    with caplog.at_level(logging.WARNING, logger="privrepro"):
        replot(site / "res", site / "plots", conf)
    assert not (site / "plots" / "test" / "summary.png").exists()
    stem = site / "plots" / "test" / "summary"
    assert any(f"{stem}: the default plot removed" in r.getMessage() for r in caplog.records)
    # the report: ran, but no canonical view; not "not run"
    fr = load_figure(site / "res", site / "plots", "test", "summary", conf)
    assert not fr.ran and fr.error is None
    assert fr.no_canonical is not None and "4 verified unit(s)" in fr.no_canonical


_REFS = """\
paper: test
values:
  - id: test-summary-mean0
    figure: summary
    quantity: mean draw of unit 0
    value: {value}
    source: {{where: "the verified summary", kind: derived}}
    derivation: {{formula: "the mean of unit 0's draws"}}
    match: {{table: summary, metric: mean_x, where: {{i: 0}}}}
    tolerance: {{abs: 1.0e-9, reason: "the same rows summarised again"}}
    profiles: [smoke]
"""


def _card(site: Path, value: float) -> pd.Series:
    from privrepro.report.references import load_references
    from privrepro.report.scorecard import build_scorecard

    refs = site / "references"
    refs.mkdir(exist_ok=True)
    (refs / "test.yaml").write_text(_REFS.format(value=repr(value)))
    fr = load_figure(site / "res", site / "plots", "test", "summary", site / "conf")
    card = build_scorecard({("test", "summary"): fr}, load_references(refs))
    return card.set_index("id").loc["test-summary-mean0"]


def test_the_scorecard_scores_the_verified_summary_and_names_no_canonical_view(
    site: Path,
) -> None:
    """An edited ``summary.csv`` cannot flip the verdict; a figure whose canonical view vanished
    is "no canonical view", not "not run"."""
    path = _res(site, "summary", ".summary.csv")
    verified = pd.read_csv(path)
    mean0 = float(verified.loc[verified["i"] == 0, "value"].iloc[0])  # the reference: itself
    assert _card(site, mean0)["verdict"] == "pass"
    edited = verified.copy()
    edited.loc[edited["i"] == 0, "value"] = mean0 + 1.0
    edited.to_csv(path, index=False)
    assert _card(site, mean0)["verdict"] == "pass"  # scored from the verified table
    (site / "conf" / "params" / "test" / "summary" / "smoke.yaml").write_text("draws: 60\n")
    make_tables.rebuild(
        UnitStore(site / "exp", "test", "summary"), site / "res", conf=site / "conf"
    )
    row = _card(site, mean0)
    assert row["code"] == "no-canonical" and "no canonical view" in row["why"]


# -- 5. force=true keeps the stored unit until the recompute succeeds ---------------------------


def test_a_failing_forced_recompute_leaves_the_figure_whole(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import recipes_for_tests

    store = UnitStore(site / "exp", "test", "noise")
    before = {u: store.verify(u).ok for u in store.unit_ids()}
    assert len(before) == 4 and all(before.values())
    table = pd.read_parquet(_res(site, "noise", ".parquet"))

    def failing(self: Any, unit: dict[str, Any], ctx: Any) -> pd.DataFrame:
        raise RuntimeError("the recompute fails")

    monkeypatch.setattr(recipes_for_tests.NoiseFigure, "compute", failing)
    paths = scratch_paths(site, "device=cpu", "params.draws=50", "force=true")
    with pytest.raises(RuntimeError, match="the recompute fails"):
        run_experiment("test/noise", paths, conf=site / "conf")
    fresh = UnitStore(site / "exp", "test", "noise")
    assert sorted(fresh.unit_ids()) == sorted(before) and all(
        fresh.verify(u).ok for u in fresh.unit_ids()
    )
    assert not [p for p in fresh.folder.iterdir() if p.name.startswith((".tmp-", ".trash-"))]
    make_tables.rebuild(fresh, site / "res", conf=site / "conf")
    pd.testing.assert_frame_equal(pd.read_parquet(_res(site, "noise", ".parquet")), table)


def test_a_forced_recompute_replaces_the_units(site: Path) -> None:
    """``force=true`` still recomputes every unit (seeded: the same rows)."""
    store = UnitStore(site / "exp", "test", "noise")
    marker = site / "computed.txt"
    os.environ["PRIVREPRO_TEST_MARKER"] = str(marker)
    try:
        run = run_experiment(
            "test/noise",
            scratch_paths(site, "device=cpu", "params.draws=50", "force=true"),
            conf=site / "conf",
        )
    finally:
        del os.environ["PRIVREPRO_TEST_MARKER"]
    assert run.computed == 4 and len(marker.read_text().split()) == 4
    assert all(store.verify(u).ok for u in store.unit_ids()) and len(store.unit_ids()) == 4


# -- 5. the smaller cases of the command line ------------------------------------------------


def test_full_width_digits_and_bad_override_syntax_are_one_line() -> None:
    """Was: Hydra's ``LexerNoViableAltException`` over several lines, exit status 1."""
    from privrepro.runner.cli import override_problem

    assert override_problem(["experiment=pb/fig1", "seed=12", "-m"]) is None
    line = override_problem(["experiment=pb/fig1", "seed=１２"])
    assert line is not None and "\n" not in line
    assert "seed=１２" in line and "not ASCII digits" in line and "write 12" in line
    line = override_problem(["params.x=[1,"])
    assert line is not None and "\n" not in line and "params.x=[1," in line


def test_full_width_digits_exit_2_before_hydra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from privrepro.runner import cli

    monkeypatch.setattr("sys.argv", ["privrepro", "experiment=pb/fig1", "seed=１２"])
    with pytest.raises(SystemExit) as info:
        cli.main()
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("privrepro: configuration error: 'seed=１２'")


def test_a_sweep_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    """Was: a traceback from Hydra's sweep-folder resolver (``_sweeps`` a file) or launcher
    (``hydra.sweep.dir=/proc/x/…``)."""
    from privrepro.runner.cli import sweep_folder_problem

    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "_sweeps").write_text("a file where the sweeps' folder goes")
    args = ["-m", "experiment=pb/fig1", f"paths.experiments_dir={exp}", "seed=0,1"]
    problem = sweep_folder_problem(args)
    assert problem is not None and problem.key == "paths.experiments_dir"
    assert "\n" not in str(problem) and str(exp / "_sweeps") in str(problem)
    problem = sweep_folder_problem([*args, "hydra.sweep.dir=/proc/x/y"])
    assert problem is not None and problem.key == "hydra.sweep.dir"
    assert "/proc/x" in str(problem)
    assert sweep_folder_problem(args[1:]) is None  # not a multirun: no sweep folder
    ok = sweep_folder_problem([*args, f"hydra.sweep.dir={tmp_path / 'mine'}"])
    assert ok is None and (tmp_path / "mine").is_dir()


def test_adhoc_plots_of_runs_on_other_data_are_other_files(tmp_path: Path) -> None:
    """Was: the same overrides on two data roots drew over one file. The name carries a short
    hash of the units' data fingerprints (none for units that read no data root)."""
    from privrepro.runner.run_views import adhoc_stem, data_key

    overrides = ["experiment=pb/fig7", "params.epsilon=2.0"]
    a = data_key([{"data": "sha256:aaa"}, {"data": "sha256:aaa"}])
    b = data_key([{"data": "sha256:bbb"}])
    assert a is not None and b is not None and a != b
    assert data_key([{"unit": {}}]) is None
    assert data_key([{"data": "sha256:bbb"}, {"data": "sha256:aaa"}]) == data_key(
        [{"data": "sha256:aaa"}, {"data": "sha256:bbb"}]
    )
    plain = adhoc_stem(tmp_path, "pb", "fig7", overrides)
    on_a = adhoc_stem(tmp_path, "pb", "fig7", overrides, a)
    on_b = adhoc_stem(tmp_path, "pb", "fig7", overrides, b)
    assert len({plain, on_a, on_b}) == 3
    assert on_a.name == f"epsilon-2p0_data-{a}" and plain.name == "epsilon-2p0"
