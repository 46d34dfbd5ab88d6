"""Nothing in a store or a results folder can run code, swap a table or stop a figure.

A store holding three figures (``test/noise``, ``pb/fig1`` and ``pac/curves_dimension``, profile
``tiny``) is damaged the ways an adversarial user tried: a unit copied into another figure's
folder, a unit forged to name another recipe (``this:s``, ``json:JSONDecoder``), a unit whose
manifest was deleted and rows edited, a unit the process may not read, a ``rows.csv`` replaced by
a named pipe, a sealed config with ``"seed": "x"``, table locks of another user, ``meta.json``
files that are cut short, a list, out of range or name another recipe, a killed plot write.
``make tables`` and ``make plots`` must handle each figure on its own, report what failed in one
line each and never import a name read from a file; a unit computed on other data is another
unit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from recipes_for_tests import scratch_paths

from components import unprivileged_prefix
from privrepro.runner import make_tables
from privrepro.runner.run import run_experiment
from privrepro.store.identity import UNIT_ID, unit_hash
from privrepro.store.seal import MANIFEST
from privrepro.store.units import UnitStore

ZEN = "Beautiful is better than ugly"  # what `import this` prints


def _paths(tmp: Path, *extra: str) -> list[str]:
    return scratch_paths(tmp, "device=cpu", *extra)


@pytest.fixture(scope="module")
def three_figures(tmp_path_factory: pytest.TempPathFactory, module_conf_root: Path) -> Path:
    tmp = tmp_path_factory.mktemp("three")
    run_experiment("test/noise", _paths(tmp, "params.draws=200"), conf=module_conf_root)
    for name in ("pb/fig1", "pac/curves_dimension"):
        run_experiment(name, _paths(tmp, "profile=tiny"), conf=module_conf_root)
    return tmp


@pytest.fixture
def store(three_figures: Path, tmp_path: Path) -> Path:
    """A copy of the three figures' store, results and plots, to damage."""
    shutil.copytree(three_figures, tmp_path / "s")
    return tmp_path / "s"


def _units(root: Path, figure: str) -> list[Path]:
    folder = root / "exp" / figure
    return sorted(p for p in folder.iterdir() if UNIT_ID.match(p.name))


def _table(root: Path, figure: str) -> pd.DataFrame:
    return pd.read_parquet(root / "res" / f"{figure}.parquet")


def _cli(module: str, root: Path, conf: Path, unprivileged: bool = False) -> Any:
    """``make tables`` / ``make plots`` on the scratch store, as a separate process."""
    args = {
        "privrepro.runner.make_tables": ["--experiments", str(root / "exp")],
        "privrepro.runner.replot": ["--plots", str(root / "plots")],
    }[module]
    prefix = unprivileged_prefix() if unprivileged else []
    extra = ["--results", str(root / "res"), "--conf", str(conf)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}  # recipes_for_tests
    return subprocess.run(
        [*prefix, sys.executable, "-m", module, *args, *extra],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _forge(folder: Path, **changes: Any) -> Path:
    """Rewrite a unit's config with ``changes``, rename it to the new hash and seal it again:
    what anyone who may write the store can do."""
    config = {**json.loads((folder / "config.json").read_text()), **changes}
    (folder / "config.json").write_text(json.dumps(config))
    new = folder.parent / unit_hash(config)
    folder.rename(new)
    (new / MANIFEST).unlink()
    UnitStore._write_manifest(new, new.name, sorted(p.name for p in new.iterdir()))
    return new


def test_a_foreign_unit_does_not_enter_the_table(store: Path, module_conf_root: Path) -> None:
    """The reported case: a genuine pac/curves_dimension unit copied into experiments/pb/fig1/
    turned results/pb/fig1 into its 4 pac rows. Now it fails verification there (its config
    names another figure): one warning, moved aside, the table unchanged."""
    before = _table(store, "pb/fig1")
    pac = _units(store, "pac/curves_dimension")[0]
    shutil.copytree(pac, store / "exp" / "pb" / "fig1" / pac.name)
    done = _cli("privrepro.runner.make_tables", store, module_conf_root)
    assert done.returncode == 0, done.stderr
    pd.testing.assert_frame_equal(_table(store, "pb/fig1"), before)
    warned = [line for line in done.stderr.splitlines() if "WARNING" in line]
    assert len(warned) == 1 and "names the figure pac/curves_dimension, not pb/fig1" in warned[0]
    assert not (store / "exp" / "pb" / "fig1" / pac.name).exists()
    assert pac.is_dir()  # the original is untouched


@pytest.mark.parametrize("recipe", ["this:s", "json:JSONDecoder"])
def test_a_recipe_named_by_a_file_is_never_imported(
    store: Path, module_conf_root: Path, recipe: str
) -> None:
    """A sealed unit of pb/fig1 naming another recipe, a last-run record and a meta.json naming
    it: the table and the summary keep the configured recipe's units, the plot is left, and the
    named module is never imported (``this`` prints the Zen of Python when it is)."""
    before = _table(store, "pb/fig1")
    _forge(_units(store, "pb/fig1")[0], recipe=recipe, version=1)
    last = store / "exp" / "pb" / "fig1" / "last_run.json"
    record = json.loads(last.read_text())
    last.write_text(json.dumps({**record, "recipe": recipe}))
    done = _cli("privrepro.runner.make_tables", store, module_conf_root)
    assert done.returncode == 0, done.stderr
    assert ZEN not in done.stdout + done.stderr
    table = _table(store, "pb/fig1")
    assert table.empty or set(table["unit_id"]) < set(before["unit_id"])  # the forged one left
    warned = [line for line in done.stderr.splitlines() if "WARNING" in line]
    assert any("left out of the table" in w and recipe in w for w in warned)
    forged = _units(store, "pb/fig1")[0].name
    canonical = json.loads((store / "res" / "pb" / "fig1.meta.json").read_text())["canonical"]
    assert all(forged not in v["unit_ids"] for v in canonical.values())  # nor summarised
    meta = store / "res" / "pb" / "fig1.meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "recipe": recipe}))
    drawn = _cli("privrepro.runner.replot", store, module_conf_root)
    assert ZEN not in drawn.stdout + drawn.stderr
    assert drawn.returncode == 1
    (line,) = [x for x in drawn.stderr.splitlines() if x.startswith("pb/fig1")]
    assert "not the configured privrepro.figures.pb.fig1:Illustration" in line


def test_an_edited_unit_without_a_manifest_is_not_read(store: Path, module_conf_root: Path) -> None:
    """The manifest and rows.parquet deleted, rows.csv edited: the pre-manifest rule accepted it
    (the CSV parses). Now it is not sealed: left out of the table, then computed again."""
    clean = _table(store, "test/noise")
    unit = _units(store, "test/noise")[0]
    (unit / MANIFEST).unlink()
    (unit / "rows.parquet").unlink()
    rows = pd.read_csv(unit / "rows.csv")
    rows["x"] = 99.0
    rows.to_csv(unit / "rows.csv", index=False)
    args = ["--experiments", str(store / "exp"), "--results", str(store / "res")]
    assert make_tables.main([*args, "--conf", str(module_conf_root), "--figure", "test/noise"]) == 0
    table = _table(store, "test/noise")
    assert unit.name not in set(table["unit_id"]) and 99.0 not in set(table["x"])
    again = run_experiment("test/noise", _paths(store, "params.draws=200"), conf=module_conf_root)
    assert again.computed == 1
    pd.testing.assert_frame_equal(_table(store, "test/noise"), clean)


def test_no_unit_folder_stops_the_other_figures(store: Path, module_conf_root: Path) -> None:
    """An unreadable unit (chmod 000), rows.csv a named pipe (reading it would hang), a sealed
    config with "seed": "x" and one with a list for its parameters, a table lock of another user
    (readable) and one nobody may read: every figure's table is still derived, each damaged unit
    is left out with one warning, nothing hangs, and the next run computes them again."""
    noise, fig1, pac = (_units(store, f) for f in ("test/noise", "pb/fig1", "pac/curves_dimension"))
    os.chmod(fig1[0], 0)
    (noise[0] / "rows.csv").unlink()
    os.mkfifo(noise[0] / "rows.csv")
    _forge(pac[0], seed="x")
    _forge(noise[1], unit=[1, 2])
    for figure, mode in (("test/noise", 0o444), ("pb/fig1", 0o000)):
        lock = store / "exp" / figure / ".table.lock"
        lock.write_text("")
        os.chmod(lock, mode)
    try:
        done = _cli("privrepro.runner.make_tables", store, module_conf_root, unprivileged=True)
    finally:
        for folder in (store / "exp" / "pb" / "fig1").iterdir():
            os.chmod(folder, 0o755)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    failed = [w for w in done.stderr.splitlines() if "failed verification" in w]
    assert len(failed) == 4, done.stderr  # one line per damaged unit
    assert any("Permission denied" in w for w in failed)
    assert any("rows.csv is a named pipe" in w for w in failed)
    assert sum("config.json" in w for w in failed) == 2
    assert "the table lock" in done.stderr  # the unreadable lock moved aside, one line
    held = {f: set(_table(store, f)["unit_id"]) for f in ("test/noise", "pb/fig1")}
    assert held["test/noise"] == {p.name for p in noise[2:]}
    assert held["pb/fig1"] == {p.name for p in fig1[1:]}
    again = run_experiment("test/noise", _paths(store, "params.draws=200"), conf=module_conf_root)
    assert again.computed == 2


META_DAMAGE = {
    "cut short": lambda text: text[: len(text) // 2],
    "a list": lambda text: "[1, 2]",
    "an out-of-range value": lambda text: _canonical(text, "params", {"sigma": -1.0}),
    "another recipe": lambda text: json.dumps({**json.loads(text), "recipe": "this:s"}),
    "units not a list": lambda text: _canonical(text, "unit_ids", 3),
}


def _canonical(text: str, key: str, value: object) -> str:
    """The meta.json with ``key`` of its canonical view (the default plot's) replaced."""
    meta = json.loads(text)
    view = meta["canonical"]["tiny"]
    view[key] = {**view[key], **value} if isinstance(value, dict) else value
    return json.dumps(meta)


@pytest.mark.parametrize("damage", list(META_DAMAGE))
def test_make_plots_draws_every_other_figure(
    store: Path, module_conf_root: Path, damage: str
) -> None:
    meta = store / "res" / "pb" / "fig1.meta.json"
    meta.write_text(META_DAMAGE[damage](meta.read_text()))
    stale = store / "plots" / "test" / ".tmp-noise.png-abc123"  # a killed plot write
    stale.write_bytes(b"half a png")
    old = time.time() - 120
    os.utime(stale, (old, old))
    for png in store.glob("plots/*/*.png"):
        png.unlink()
    done = _cli("privrepro.runner.replot", store, module_conf_root)
    assert done.returncode == 1
    assert ZEN not in done.stdout + done.stderr and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len([x for x in lines if x.startswith("pb/fig1: not drawn:")]) == 1
    assert lines[-1] == "1 figure(s) not drawn: pb/fig1"
    drawn = sorted(p.relative_to(store / "plots").as_posix() for p in store.glob("plots/*/*.png"))
    assert drawn == ["pac/curves_dimension.png"]
    # test/noise ran only with params.draws=200: no default plot, its run's own plot again
    assert (store / "plots" / "test" / "noise" / "runs" / "draws-200.png").is_file()
    assert not stale.exists()


def test_make_tables_reports_a_failing_figure_and_goes_on(
    store: Path, module_conf_root: Path
) -> None:
    """A store folder no experiment config registers cannot be derived (its recipe is unknown):
    one line, the other figures derived, a non-zero exit at the end."""
    shutil.copytree(store / "exp" / "pb" / "fig1", store / "exp" / "pb" / "fig99")
    done = _cli("privrepro.runner.make_tables", store, module_conf_root)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert [x for x in lines if x.startswith("pb/fig99: failed:")] != []
    assert lines[-1] == "1 figure(s) failed: pb/fig99"
    assert (
        sum(x.startswith(("pb/fig1:", "test/noise:", "pac/")) for x in done.stdout.splitlines())
        == 3
    )


def _adult(root: Path, age: int) -> Path:
    """UCI Adult files with the release's documented counts (adult.names), all records alike
    but the first, whose age is ``age``."""
    from privrepro.data.adult import RELEASE_COUNTS

    complete = "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K"
    missing = complete.replace("State-gov", "?")
    (root / "adult").mkdir(parents=True)
    for name, end in (("adult.data", ""), ("adult.test", ".")):
        total, ok = RELEASE_COUNTS[name]
        rows = [complete + end] * ok + [missing + end] * (total - ok)
        rows[0] = rows[0].replace("39,", f"{age},", 1)
        (root / "adult" / name).write_text("\n".join(rows) + "\n")
    return root


def test_other_data_does_not_reuse_units(tmp_path: Path) -> None:
    """pb Fig. 7 on UCI Adult read from one data root, then another holding different records:
    the second run computes its own units (the data's fingerprint is part of their identity),
    the table tells them apart, and switching back reuses the first ones."""
    one, two = _adult(tmp_path / "one", 39), _adult(tmp_path / "two", 71)
    base = _paths(tmp_path, "profile=tiny", "params.data=uci", "plot=false")
    first = run_experiment("pb/fig7", [*base, f"paths.data_dir={one}"])
    second = run_experiment("pb/fig7", [*base, f"paths.data_dir={two}"])
    assert first.computed > 0 and (second.computed, second.reused) == (first.computed, 0)
    assert set(first.table["unit_id"]).isdisjoint(second.table["unit_id"])
    back = run_experiment("pb/fig7", [*base, f"paths.data_dir={one}"])
    assert (back.computed, back.reused) == (0, first.computed)
    table = pd.read_parquet(tmp_path / "res" / "pb" / "fig7.parquet")
    assert table.groupby("data_fingerprint")["unit_id"].nunique().tolist() == [first.computed] * 2
    assert set(table["data"]) == {"UCI Adult"}
