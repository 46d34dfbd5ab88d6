"""Shared studies safe to start at once, and study stores that cannot work refused in one line.

* Workers started together on a fresh PostgreSQL database (the throw-away server of
  ``tests/components.py``) all open it: Optuna's table creation is serialised.
* A damaged Optuna journal (its last line cut by a killed writer, random bytes, a text file, a
  FIFO) is refused before Optuna reads or appends to it, by the storage check and by
  ``open_study`` alike; a healthy journal passes.
* An in-memory SQLite database is refused as a study store: no other process sees it.
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from privrepro.config.validation import ConfigError
from privrepro.training.optuna_studies import complete_trials, open_study, run_study
from privrepro.training.study_storage import check_journal, check_storage

WORKERS = 4


def _open_at_once(url: str, barrier: object, out: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    try:
        check_storage("params.tuning.storage", url)
        study = open_study("together", url, sampler="random")
        out.put(("ok", len(study.trials)))  # type: ignore[attr-defined]
    except BaseException as exc:
        out.put(("failed", f"{type(exc).__name__}: {exc}"[:300]))  # type: ignore[attr-defined]


@pytest.mark.slow
def test_workers_started_together_on_a_fresh_database_all_survive(postgres_url: str) -> None:
    ctx = multiprocessing.get_context("fork")
    barrier, out = ctx.Barrier(WORKERS), ctx.Queue()
    procs = [
        ctx.Process(target=_open_at_once, args=(postgres_url, barrier, out)) for _ in range(WORKERS)
    ]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert results == [("ok", 0)] * WORKERS


def _journal_with_two_trials(path: Path) -> None:
    study = open_study("s", path, sampler="random")
    run_study(study, lambda trial: trial.suggest_float("x", 0.0, 1.0), n_complete=2)


def test_a_healthy_journal_passes(tmp_path: Path) -> None:
    path = tmp_path / "s.log"
    _journal_with_two_trials(path)
    check_storage("params.tuning.storage", path)
    assert len(complete_trials(open_study("s", path, sampler="random"))) == 2


def _cut(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 7])  # the last operation loses its end and newline


def _random_bytes(path: Path) -> None:
    path.write_bytes(bytes(range(256)) * 4)


def _text(path: Path) -> None:
    path.write_text("a note a researcher kept here\nnot a journal\n")


def _json_not_journal(path: Path) -> None:
    path.write_text('{"a": 1}\n')


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (_cut, "cut off"),
        (_random_bytes, "not text"),
        (_text, "line 1 is not an Optuna journal operation"),
        (_json_not_journal, "line 1 is not an Optuna journal operation"),
    ],
    ids=["cut-last-line", "random-bytes", "text-file", "json-not-journal"],
)
def test_a_damaged_journal_is_refused_before_use(tmp_path: Path, damage: object, says: str) -> None:
    path = tmp_path / "s.log"
    _journal_with_two_trials(path)
    damage(path)  # type: ignore[operator]
    before = path.read_bytes()
    with pytest.raises(ConfigError) as err:
        check_storage("params.tuning.storage", path)
    assert err.value.key == "params.tuning.storage" and says in str(err.value)
    assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match=says):  # the default journal of a unit's study
        open_study("s", path, sampler="random")
    assert path.read_bytes() == before  # nothing appended to it


def test_a_fifo_named_as_the_journal_is_never_opened(tmp_path: Path) -> None:
    path = tmp_path / "s.log"
    os.mkfifo(path)
    with pytest.raises(ConfigError, match="a named pipe, not a regular file"):
        check_storage("params.tuning.storage", path)
    with pytest.raises(ConfigError, match="a named pipe, not a regular file"):
        check_journal("params.tuning.storage", path)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite+pysqlite://"])
def test_an_in_memory_sqlite_study_store_is_refused(url: str) -> None:
    with pytest.raises(ConfigError, match="in-memory SQLite") as err:
        check_storage("params.tuning.storage", url)
    assert err.value.key == "params.tuning.storage"


def test_a_sqlite_file_is_a_study_store(tmp_path: Path) -> None:
    check_storage("params.tuning.storage", f"sqlite:///{tmp_path / 'studies.db'}")
