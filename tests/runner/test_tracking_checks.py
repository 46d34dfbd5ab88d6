"""The tracking store is checked before compute, in seconds: a server that does not answer, a
store that cannot be written and an artifact location that is not a writable folder are each one
ConfigError before any unit runs (MLflow alone retries a silent server for minutes and finds a
read-only store or a bad artifact location only after the unit, the table and the plot)."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from components import unprivileged_prefix
from privrepro.config.validation import ConfigError
from privrepro.runner import tracking
from privrepro.runner.plan import compose
from privrepro.runner.tracking import check_tracking

pytest.importorskip("mlflow")


def _cfg(tmp_path: Path, *extra: str):  # type: ignore[no-untyped-def]
    return compose(
        "pb/fig2",
        ["profile=tiny", "tracking=mlflow", f"paths.experiments_dir={tmp_path / 'exp'}", *extra],
    )


def _within(seconds: float, call) -> BaseException | None:  # type: ignore[no-untyped-def]
    """Run ``call`` in a thread; the exception it raised, failing the test if it runs longer
    than ``seconds`` (so a regression cannot hang the suite for MLflow's minutes of retries)."""
    out: list[BaseException | None] = []

    def target() -> None:
        try:
            call()
            out.append(None)
        except BaseException as exc:  # the caller looks at it
            out.append(exc)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert out, f"the tracking check still ran after {seconds} s"
    return out[0]


def test_a_server_that_never_answers_is_one_line_after_one_short_try(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tracking, "CHECK_TIMEOUT_S", 1)
    with socket.socket() as silent:  # accepts connections (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        uri = f"http://127.0.0.1:{silent.getsockname()[1]}"
        err = _within(30, lambda: check_tracking(_cfg(tmp_path, f"tracking.uri={uri}")))
    assert isinstance(err, ConfigError) and err.key == "tracking.uri"
    assert "\n" not in str(err)
    assert "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ  # given back as it was


def test_a_closed_port_is_one_line_at_once(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    err = _within(
        30, lambda: check_tracking(_cfg(tmp_path, f"tracking.uri=http://127.0.0.1:{port}"))
    )
    assert isinstance(err, ConfigError) and "cannot be opened" in str(err)


def test_an_artifact_location_that_is_a_file_is_found_before_compute(tmp_path: Path) -> None:
    blocker = tmp_path / "artifacts"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="is a file") as err:
        check_tracking(_cfg(tmp_path, f"tracking.artifacts={blocker}"))
    assert err.value.key == "tracking.artifacts"


def test_a_read_only_sqlite_store_is_found_before_compute(tmp_path: Path) -> None:
    db = tmp_path / "mlflow.db"
    with sqlite3.connect(db) as conn:  # a store MLflow made (any SQLite file: the probe is generic)
        conn.execute("CREATE TABLE alembic_version (version_num TEXT)")
    tracking._check_sqlite_writable(f"sqlite:///{db}")  # writable: passes, and leaves nothing
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert tables == {"alembic_version"}
    db.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        code = (
            "import sys; from privrepro.runner.tracking import _check_sqlite_writable as c\n"
            "try:\n    c(sys.argv[1])\nexcept Exception as e:\n    print(e); sys.exit(3)\n"
        )
        proc = subprocess.run(
            [*unprivileged_prefix(), sys.executable, "-c", code, f"sqlite:///{db}"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        tmp_path.chmod(0o755)
        db.chmod(0o644)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "tracking.uri" in proc.stdout and "cannot be written" in proc.stdout
