"""Where an Optuna study lives: a journal file on one machine, or a database workers share.

A location containing ``://`` is an SQLAlchemy URL (``sqlite:///…``, ``postgresql://…``);
anything else is a path to an Optuna journal file. :func:`normalize_url` names the PostgreSQL
driver of a bare ``postgresql://`` URL and :func:`check_storage` opens the storage once, so a
storage that cannot be reached is reported in one line before any job starts.

Why the driver is named: a bare ``postgresql://`` URL leaves the driver to SQLAlchemy, whose
default changed from psycopg2 (SQLAlchemy 2.0) to psycopg 3 (SQLAlchemy 2.1). privrepro's
``postgres`` extra ships psycopg 3, so ``postgresql://`` is read as ``postgresql+psycopg://``
whatever SQLAlchemy release is installed; with only psycopg2 installed it is read as
``postgresql+psycopg2://``. A URL that names its driver is left as written.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from privrepro.config import ConfigError
from privrepro.config.secrets import redact

__all__ = [
    "check_journal",
    "check_storage",
    "is_rdb_url",
    "normalize_url",
    "open_rdb_storage",
    "postgres_driver",
]

#: the drivers tried for a bare ``postgresql://`` URL, in order (module, SQLAlchemy dialect)
_POSTGRES_DRIVERS = (("psycopg", "psycopg"), ("psycopg2", "psycopg2"))
_INSTALL = "install the PostgreSQL driver: pip install 'privrepro[postgres]' (psycopg 3)"


def is_rdb_url(location: str | Path) -> bool:
    """``location`` is a database URL (it holds ``://``), not a journal file path."""
    return "://" in str(location)


def postgres_driver() -> str | None:
    """The SQLAlchemy driver name of the first PostgreSQL driver installed, else ``None``."""
    for module, dialect in _POSTGRES_DRIVERS:
        if importlib.util.find_spec(module) is not None:
            return dialect
    return None


def normalize_url(url: str) -> str:
    """``url`` with the installed PostgreSQL driver named when it names none.

    ``postgresql://u@h/db`` → ``postgresql+psycopg://u@h/db`` (psycopg 3 installed) or
    ``postgresql+psycopg2://u@h/db`` (only psycopg2); ``postgres://`` (Heroku's spelling,
    which SQLAlchemy refuses) is read the same way. Any other URL is returned unchanged.
    """
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.lower() not in ("postgresql", "postgres"):
        return url
    driver = postgres_driver()
    return f"postgresql+{driver}://{rest}" if driver else url


#: the PostgreSQL advisory lock every privrepro process holds while Optuna creates its tables
SCHEMA_LOCK = int.from_bytes(hashlib.sha256(b"privrepro optuna schema").digest()[:8], "big") >> 1


def open_rdb_storage(url: str, **kwargs: Any) -> Any:
    """Optuna's ``RDBStorage`` for ``url`` (its driver named), its tables created when missing.

    Every worker creates the tables of a new database when it first opens it, and Optuna's
    ``create_all`` and version row race: two workers started together on a fresh PostgreSQL
    database both try, and the later one dies of a duplicate key (optuna issue 4621). On
    PostgreSQL the creation is serialised by a session advisory lock (:data:`SCHEMA_LOCK`), held
    on a connection of its own while Optuna opens the storage and released when it is closed,
    also when the process dies; the next worker finds the tables made.
    """
    import optuna

    if not url.lower().startswith("postgresql"):
        return optuna.storages.RDBStorage(url, **kwargs)
    import sqlalchemy
    from sqlalchemy.pool import NullPool

    engine = sqlalchemy.create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            conn.execute(sqlalchemy.text("SELECT pg_advisory_lock(:k)"), {"k": SCHEMA_LOCK})
            conn.commit()  # a session lock: held past the transaction, until unlocked or closed
            try:
                return optuna.storages.RDBStorage(url, **kwargs)
            finally:
                conn.execute(sqlalchemy.text("SELECT pg_advisory_unlock(:k)"), {"k": SCHEMA_LOCK})
                conn.commit()
    finally:
        engine.dispose()


def _journal_problem(text: str, lines: list[str]) -> str | None:
    """Why these lines are not an Optuna journal (each a JSON operation, ended by a newline)."""
    for i, line in enumerate(lines, start=1):
        if not line.endswith("\n"):
            return (
                f"its last line ({i}) is cut off, as a writer killed mid-write leaves it; "
                f"remove that line to keep the {i - 1} operations before it"
            )
        try:
            op = json.loads(line)
        except ValueError:
            op = None
        if not isinstance(op, dict) or "op_code" not in op:
            return f"line {i} is not an Optuna journal operation: it is not an Optuna journal"
    return None


def check_journal(key: str, path: str | Path) -> None:
    """The Optuna journal at ``path``, when it exists, can be used: a regular file (a FIFO or
    a device is never opened) whose every line is a journal operation ended by a newline.

    A cut last line (a writer killed mid-write) would have Optuna append to it and fail on
    every later read; random bytes or another file named as the journal would be a traceback.
    Each is a one-line :class:`~privrepro.config.ConfigError` naming ``key`` and the path, before
    the journal is used. The file is read under Optuna's own journal lock, so a write in
    progress in another worker is never taken for damage."""
    p = Path(path).expanduser()
    problem = journal_file_problem(p)
    if problem:
        raise ConfigError(key, str(path), f"must be an Optuna journal file; {problem}")
    if not p.exists():
        return  # a new study: Optuna creates it
    from optuna.storages.journal import JournalFileSymlinkLock

    lock = JournalFileSymlinkLock(str(p))
    try:
        locked = lock.acquire()
    except OSError:  # a folder we may not write in: read without the lock
        locked = False
    try:
        with open(p, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError(key, str(path), f"cannot be read: {exc.strerror}") from exc
    finally:
        if locked:
            lock.release()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        problem = "it is not text: it is not an Optuna journal"
    else:
        problem = _journal_problem(text, text.splitlines(keepends=True))
    if problem:
        raise ConfigError(key, str(path), f"is a damaged Optuna journal: {problem}")


def _in_memory_sqlite(url: str) -> bool:
    """``sqlite://`` or ``sqlite:///:memory:``: a database that lives in one process only."""
    scheme, _, rest = url.partition("://")
    if not scheme.lower().startswith("sqlite"):
        return False
    database = rest.split("?", 1)[0]
    return database in ("", "/", "/:memory:") or database.startswith("/file::memory:")


def _one_line(exc: BaseException) -> str:
    cause = exc.__cause__ if isinstance(exc, ImportError) and exc.__cause__ else None
    text = str(cause or getattr(exc, "orig", None) or exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:240]


def _folder_problem(folder: Path) -> str | None:
    """Why files cannot be created in ``folder`` (its nearest existing ancestor), else None."""
    probe = folder.expanduser()
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable"
    return None


def check_storage(key: str, location: str | Path) -> None:
    """Open the study storage at ``location`` once; a ``ConfigError`` naming ``key`` if it fails.

    A database URL is connected to and its Optuna tables are created when missing (what every
    worker would do first, so workers started together find them made); a journal path must lie
    in a folder that can be created and written. Nothing else is written.
    """
    text = str(location)
    shown = redact(text)  # a URL's password is never in an error
    if not is_rdb_url(text):
        problem = _folder_problem(Path(text).parent) or journal_file_problem(Path(text))
        if problem:
            raise ConfigError(key, shown, f"must be a journal file in a writable folder; {problem}")
        check_journal(key, text)
        return
    if _in_memory_sqlite(text):
        raise ConfigError(
            key,
            shown,
            "is an in-memory SQLite database, which lives in one process only: no other worker "
            "and no later run would see its trials; name a file (sqlite:///studies.db), a journal "
            "path or a PostgreSQL URL",
        )
    url = normalize_url(text)
    if url.lower().startswith(("postgresql://", "postgres://")):
        raise ConfigError(key, shown, f"cannot be opened: no PostgreSQL driver; {_INSTALL}")
    try:
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

        storage = open_rdb_storage(url)
        storage.get_all_studies()
        storage.remove_session()
        storage.engine.dispose()
    except ImportError as exc:
        hint = _INSTALL if url.startswith("postgresql+") else "install the driver the URL names"
        raise ConfigError(key, shown, f"cannot be opened: {_one_line(exc)}; {hint}") from exc
    except (ArgumentError, NoSuchModuleError) as exc:
        raise ConfigError(
            key, shown, f"is not a database URL SQLAlchemy can read: {_one_line(exc)}"
        ) from exc
    except SQLAlchemyError as exc:
        raise ConfigError(key, shown, f"cannot be opened: {_one_line(exc)}") from exc
    except Exception as exc:  # optuna wraps some failures (e.g. an unknown schema version)
        raise ConfigError(key, shown, f"cannot be opened: {_one_line(exc)}") from exc


#: The largest journal file a study may be read from (Optuna replays the whole journal).
JOURNAL_BYTES = 4 << 30


def journal_file_problem(path: Path) -> str | None:
    """Why the journal at ``path`` cannot be read (a named pipe, a device, a link out of its
    folder, larger than :data:`JOURNAL_BYTES`), else ``None`` (absent: Optuna creates it)."""
    from privrepro.bounded_read import UnsafeFile, regular_file

    try:
        regular_file(path.expanduser(), JOURNAL_BYTES)
    except FileNotFoundError:
        return None
    except UnsafeFile as exc:
        return exc.what
    except OSError as exc:
        return f"{exc.strerror or type(exc).__name__}"
    return None
