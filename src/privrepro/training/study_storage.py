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

import importlib.util
import os
from pathlib import Path

from privrepro.config import ConfigError

__all__ = ["check_storage", "is_rdb_url", "normalize_url", "postgres_driver"]

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
    if not is_rdb_url(text):
        problem = _folder_problem(Path(text).parent) or journal_file_problem(Path(text))
        if problem:
            raise ConfigError(key, text, f"must be a journal file in a writable folder; {problem}")
        return
    url = normalize_url(text)
    if url.lower().startswith(("postgresql://", "postgres://")):
        raise ConfigError(key, text, f"cannot be opened: no PostgreSQL driver; {_INSTALL}")
    try:
        import optuna
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError

        storage = optuna.storages.RDBStorage(url)
        storage.get_all_studies()
        storage.remove_session()
        storage.engine.dispose()
    except ImportError as exc:
        hint = _INSTALL if url.startswith("postgresql+") else "install the driver the URL names"
        raise ConfigError(key, text, f"cannot be opened: {_one_line(exc)}; {hint}") from exc
    except (ArgumentError, NoSuchModuleError) as exc:
        raise ConfigError(
            key, text, f"is not a database URL SQLAlchemy can read: {_one_line(exc)}"
        ) from exc
    except SQLAlchemyError as exc:
        raise ConfigError(key, text, f"cannot be opened: {_one_line(exc)}") from exc
    except Exception as exc:  # optuna wraps some failures (e.g. an unknown schema version)
        raise ConfigError(key, text, f"cannot be opened: {_one_line(exc)}") from exc


#: The largest journal file a study may be read from (Optuna replays the whole journal).
JOURNAL_BYTES = 4 << 30


def journal_file_problem(path: Path) -> str | None:
    """Why the journal at ``path`` cannot be read (a named pipe, a device, a link out of its
    folder, larger than :data:`JOURNAL_BYTES`), else ``None`` (absent: Optuna creates it)."""
    from privrepro.store.reading import UnsafeFile, regular_file

    try:
        regular_file(path.expanduser(), JOURNAL_BYTES)
    except FileNotFoundError:
        return None
    except UnsafeFile as exc:
        return exc.what
    except OSError as exc:
        return f"{exc.strerror or type(exc).__name__}"
    return None
