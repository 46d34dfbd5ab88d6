"""Real components the tests start: a throw-away PostgreSQL server (Debian's Chromium is found
by ``tests/report/page_check.py``'s ``find_chromium``).

A test that needs a component which is not installed says so in one line: locally it is
skipped with the command that installs it; under ``CI=true`` it fails (CI must run it).
``make test`` installs the system packages itself when it runs as root (``.ci/system-packages``)
and ends by counting the tests that could not run (``tests/conftest.py``).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

#: the reason of every skip for a missing component starts with this (counted by conftest)
MISSING = "component missing:"

#: what installs each component (Debian package names; ``make test`` runs this as root)
INSTALL = {
    "postgresql": "apt-get install -y postgresql",
    "chromium": "apt-get install -y chromium",
    "setpriv": "apt-get install -y util-linux",
}


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(component: str, what: str) -> None:
    """Skip (locally) or fail (under CI) a test whose component is not on this machine."""
    line = f"{MISSING} {component}: {what}; install it with `{INSTALL[component]}` (as root)"
    if in_ci():
        pytest.fail(line, pytrace=False)
    pytest.skip(line)


# ----------------------------------------------------------------------------- PostgreSQL


def postgres_bindir() -> Path | None:
    """The PostgreSQL server binaries: ``PRIVREPRO_PG_BIN``, Debian's newest
    ``/usr/lib/postgresql/<ver>/bin``, or ``initdb`` on PATH."""
    env = os.environ.get("PRIVREPRO_PG_BIN")
    candidates: list[Path] = []
    versions = glob.glob("/usr/lib/postgresql/*/bin")
    candidates += sorted(
        (Path(p) for p in versions),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    found = shutil.which("initdb")
    if found:
        candidates.append(Path(found).resolve().parent)
    if env:  # an explicit choice is the only candidate
        candidates = [Path(env)]
    for c in candidates:
        if (c / "initdb").is_file() and (c / "pg_ctl").is_file() and (c / "postgres").is_file():
            return c
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _unprivileged() -> tuple[int, int] | None:
    """(uid, gid) to run the server as when we are root (initdb and postgres refuse root)."""
    if os.geteuid() != 0:
        return None
    import pwd

    for name in ("postgres", "nobody"):
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            continue
        return pw.pw_uid, pw.pw_gid
    raise RuntimeError("running as root and neither user 'postgres' nor 'nobody' exists")


def _demote(ids: tuple[int, int] | None) -> Callable[[], None] | None:
    if ids is None:
        return None
    uid, gid = ids

    def run() -> None:
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)

    return run


@dataclass
class PostgresServer:
    """A PostgreSQL server on 127.0.0.1:``port`` with trust authentication for ``user``."""

    bindir: Path
    datadir: Path
    port: int
    ids: tuple[int, int] | None
    user: str = "postgres"

    def url(self, database: str = "postgres") -> str:
        """The URL in the README's form, ``postgresql://user@host/db`` (no driver named: the
        installed SQLAlchemy picks its default, psycopg 3 from 2.1 on)."""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=self.user, dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        subprocess.run(
            [str(self.bindir / "pg_ctl"), "stop", "-D", str(self.datadir), "-m", "immediate", "-w"],
            preexec_fn=_demote(self.ids),
            capture_output=True,
            timeout=60,
        )


def start_postgres(bindir: Path) -> PostgresServer:
    """initdb in a fresh temporary folder and start the server on a free loopback port.

    As root the folder is owned by, and the server runs as, an unprivileged user. Only TCP on
    127.0.0.1 is opened (no Unix socket). The caller stops it and removes ``datadir``.
    """
    ids = _unprivileged()
    datadir = Path(tempfile.mkdtemp(prefix="privrepro-pg-"))
    if ids is not None:
        os.chown(datadir, *ids)
    demote = _demote(ids)
    pgdata = datadir / "data"
    subprocess.run(
        [str(bindir / "initdb"), "-D", str(pgdata), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
        preexec_fn=demote,
        capture_output=True,
        check=True,
        timeout=120,
    )
    last = ""
    for _ in range(5):  # another process may take the port between picking and binding it
        port = _free_port()
        opts = (
            f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories='' "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100"
        )
        log = str(datadir / "server.log")
        proc = subprocess.run(
            [
                str(bindir / "pg_ctl"),
                "start",
                "-D",
                str(pgdata),
                "-w",
                "-t",
                "60",
                "-o",
                opts,
                "-l",
                log,
            ],
            preexec_fn=demote,
            capture_output=True,
            text=True,
            timeout=90,
        )
        if proc.returncode == 0:
            return PostgresServer(bindir, pgdata, port, ids)
        last = (datadir / "server.log").read_text(errors="replace")[-2000:]
    shutil.rmtree(datadir, ignore_errors=True)
    raise RuntimeError(f"PostgreSQL did not start:\n{last}")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One throw-away PostgreSQL server per test process, torn down at the end of the session
    (also when tests fail)."""
    bindir = postgres_bindir()
    if bindir is None:
        missing("postgresql", "no PostgreSQL server binaries (initdb, pg_ctl, postgres)")
    assert bindir is not None
    server = start_postgres(bindir)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.datadir.parent, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database on the throw-away server (one per test)."""
    return postgres_server.create_database()


# ----------------------------------------------------------------------------- permissions


def unprivileged_prefix() -> list[str]:
    """A command prefix under which file permissions hold for this process's files.

    Root reads a ``chmod 000`` file all the same (``CAP_DAC_OVERRIDE``); ``setpriv`` (util-linux)
    drops that capability and ``CAP_DAC_READ_SEARCH`` from the command it starts, so a test of an
    unreadable file means the same as root and as a user. Empty for a user.
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        missing("setpriv", "a test of files this process may not read, as root")
    return [str(setpriv), "--bounding-set=-dac_override,-dac_read_search", "--"]
