"""A storage URL's password is never stored, and where a study is kept is no part of a unit.

The password goes into the URL of a real PostgreSQL database (the throw-away server of
``tests/components.py`` authenticates by trust, so any password connects); after a run, no file
under the run's folders holds it, and the same units are found again through another spelling of
the host, another password and the default journal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privrepro.config.secrets import REDACTED, has_secret, redact
from privrepro.runner.plan import plan_experiment
from privrepro.runner.preflight import error_line
from privrepro.runner.run import run_experiment
from privrepro.training.study_storage import check_storage

SECRET = "S3cret-pw_42"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("postgresql://alice:S3cret@db/x", f"postgresql://alice:{REDACTED}@db/x"),
        ("postgresql+psycopg://a:p@ss@h:5432/x", f"postgresql+psycopg://a:{REDACTED}@h:5432/x"),
        ("http://u:tok@mlflow.lab:5000", f"http://u:{REDACTED}@mlflow.lab:5000"),
        ("postgresql://a:S3cret/x@h/db", f"postgresql://a:{REDACTED}@h/db"),  # raw '/'
        (  # an override as Hydra records it (hydra.overrides.task), ':' escaped
            r"params.tuning.storage=postgresql\://a\:S3cret@h\:5432/db",
            rf"params.tuning.storage=postgresql\://a\:{REDACTED}@h\:5432/db",
        ),
        (
            "u=postgresql://a:S3cret@h/d v=sqlite:///x.db",
            f"u=postgresql://a:{REDACTED}@h/d v=sqlite:///x.db",
        ),
        ("x=postgresql://a@h/db?sslmode=require&password=pw", None),
        ("postgresql://a@h/db?PASSWORD=pw#f", f"postgresql://a@h/db?PASSWORD={REDACTED}#f"),
    ],
)
def test_credentials_in_urls_are_redacted(text: str, shown: str | None) -> None:
    out = redact(text)
    assert "S3cret" not in out and ":p@" not in out and "tok" not in out and "=pw" not in out
    if shown is not None:
        assert out == shown


@pytest.mark.parametrize(
    "text",
    ["postgresql://postgres@127.0.0.1:5432/db", "sqlite:///a/b.db", "host:5432/db", "lr=0.1"],
)
def test_urls_without_credentials_are_left_alone(text: str) -> None:
    assert redact(text) == text and not has_secret(text)


def test_redact_walks_records_keys_included() -> None:
    record = {"params": {"tuning": {"storage": f"postgresql://u:{SECRET}@h/d"}}, "n": 3}
    record["overrides"] = [f"params.tuning.storage=postgresql://u:{SECRET}@h/d"]  # type: ignore[assignment]
    assert SECRET not in json.dumps(redact(record)) and redact(record)["n"] == 3


def _plan_ids(store_overrides: list[str], storage: str) -> list[str]:
    tuned = ["profile=tiny", "params.tuning.enabled=true", f"params.tuning.storage={storage}"]
    plan = plan_experiment("cl/fig3_peft", [*store_overrides, *tuned], check=False)
    assert SECRET not in json.dumps(plan.identities)
    return plan.unit_ids


def test_where_a_study_is_kept_is_no_part_of_a_tuned_unit(
    store_overrides: list[str], tmp_path: Path
) -> None:
    journal = _plan_ids(store_overrides, "")
    for storage in (
        str(tmp_path / "studies.log"),
        f"postgresql://alice:{SECRET}@db.lab:5432/studies",
        "postgresql://alice:rotated@db.lab.example.org/studies",
        "postgresql+psycopg2://alice@10.0.0.7/studies",
    ):
        assert _plan_ids(store_overrides, storage) == journal, storage


def test_an_error_never_shows_the_password() -> None:
    url = f"postgresql://alice:{SECRET}@127.0.0.1:1/studies"  # port 1: refused at once
    with pytest.raises(Exception) as err:
        check_storage("params.tuning.storage", url)
    line = error_line(err.value)
    assert line is not None and SECRET not in line and f"alice:{REDACTED}@" in line


@pytest.mark.slow
def test_no_file_of_a_run_holds_the_password(
    postgres_url: str, store_overrides: list[str], tmp_path: Path
) -> None:
    url = postgres_url.replace("postgresql://postgres@", f"postgresql://postgres:{SECRET}@")
    assert SECRET in url
    base = [*store_overrides, "profile=tiny", "params.configs=[prior]", "plot=true"]
    # tuning off keeps the unit to seconds; the storage is still opened, and is in the
    # parameters, the unit, the command and every record, as with tuning on
    first = run_experiment("cl/fig3_peft", [*base, f"params.tuning.storage={url}"])
    assert first.computed == 1
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"config.json", "env.json", "log.txt", "last_run.json"} <= names
    assert any(n.endswith(".meta.json") for n in names)
    leaked = [p for p in files if SECRET.encode() in p.read_bytes()]
    assert not leaked
    meta = next(p for p in files if p.name.endswith(".meta.json")).read_text()
    assert f"postgres:{REDACTED}@" in meta  # the record says where, without the password

    other_host = url.replace("127.0.0.1", "localhost").replace(SECRET, "rotated")
    again = run_experiment("cl/fig3_peft", [*base, f"params.tuning.storage={other_host}"])
    journal = run_experiment("cl/fig3_peft", base)
    assert (again.computed, again.reused) == (0, 1)
    assert (journal.computed, journal.reused) == (0, 1)
