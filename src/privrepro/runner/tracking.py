"""Experiment tracking, optional: ``tracking=mlflow`` logs every run to MLflow.

    privrepro experiment=cl/fig3_peft tracking=mlflow
    mlflow ui --backend-store-uri sqlite:///experiments/_mlflow/mlflow.db   # to look

``conf/tracking/<backend>.yaml`` chooses the backend (``none``, the default, or ``mlflow``).
MLflow needs the ``mlflow`` extra and no server (a local store, ``tracking.uri``); more in
``docs/modules.md``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
from omegaconf import DictConfig, OmegaConf

from privrepro.config.validation import ConfigError
from privrepro.metrics import MetricLogger

BACKENDS = ("none", "mlflow")
_INSTALL = "install it: pip install 'privrepro[mlflow]' (or uv sync --extra mlflow)"
#: MLflow's limits: values per param, params and metrics per batch call
_PARAM_CHARS, _PARAMS_PER_CALL, _METRICS_PER_CALL = 6000, 100, 1000
#: a table's summary: what names a number, beside the columns that label it
_SUMMARY_KEYS = ("metric", "value", "profile", "seed", "paper", "figure", "unit_id", "data")
#: a unit's table columns that are outcomes whatever the figure: (column, metric, reduction)
_OUTCOME_COLUMNS = (
    ("dp_epsilon_spent", "epsilon_spent", "max"),
    ("best_val_acc", "best_val_acc", "max"),
)
_log = logging.getLogger(__name__)

Summarize = Callable[[pd.DataFrame], "pd.DataFrame | None"]
#: the check before compute tries a tracking server once and waits this long for its answer
#: (MLflow's own default retries an unreachable server for minutes: 7 tries, 120 s each)
CHECK_TIMEOUT_S = 5


class Tracker:
    """No tracking: the interface a backend implements (every call does nothing)."""

    @contextmanager
    def unit(self, unit_id: str, unit: Mapping[str, Any]) -> Iterator[MetricLogger | None]:
        """While a unit computes: the ``log_metric`` its loops get (``None``: not tracked)."""
        yield None

    def unit_result(self, rows: pd.DataFrame, summarize: Summarize) -> None:
        """Inside :meth:`unit`, once it computed ``rows``: its outcome (``summarize(rows)``, the
        recipe's named numbers, and :data:`_OUTCOME_COLUMNS`) as the unit run's metrics."""

    def figure_done(
        self,
        record: Mapping[str, Any],
        artifacts: Sequence[Path],
        unit_ids: Sequence[str],
        summary: Callable[[], pd.DataFrame | None] | None = None,
    ) -> None:
        """After the table and plot: the figure's run, its artifacts, its units nested in it,
        and ``summary()`` (the figure's named numbers over this run's units) as its metrics."""


def _settings(cfg: DictConfig) -> dict[str, Any]:
    node = cfg.get("tracking")
    if node is None:
        return {"backend": "none"}
    settings = OmegaConf.to_container(node, resolve=True)
    return {str(k): v for k, v in settings.items()} if isinstance(settings, dict) else {}


def check_tracking(cfg: DictConfig) -> None:
    """The tracking store of ``cfg`` opens (created when missing); a one-line ``ConfigError``
    naming ``tracking.*`` otherwise. Nothing happens without tracking."""
    settings = _settings(cfg)
    backend = settings.get("backend", "none")
    if backend not in BACKENDS:
        raise ConfigError("tracking.backend", backend, f"must be one of {list(BACKENDS)}")
    if backend == "mlflow":
        uri = str(settings.get("uri") or "")
        _check_sqlite_writable(uri)
        with _one_short_try():
            client = _mlflow_client(uri)
            _check_artifacts(client, settings)


@contextmanager
def _one_short_try() -> Iterator[None]:
    """MLflow's HTTP requests tried once, with a :data:`CHECK_TIMEOUT_S` timeout, while the
    store is checked (``MLFLOW_HTTP_REQUEST_MAX_RETRIES`` and ``MLFLOW_HTTP_REQUEST_TIMEOUT``,
    read by MLflow at each request); given back as they were afterwards."""
    short = {
        "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
        "MLFLOW_HTTP_REQUEST_TIMEOUT": str(CHECK_TIMEOUT_S),
    }
    saved = {k: os.environ.get(k) for k in short}
    os.environ.update(short)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _check_sqlite_writable(uri: str) -> None:
    """An existing local SQLite tracking store can be written: a table is created in a
    transaction that is rolled back (nothing is left). MLflow itself finds a read-only
    store only at its first write, after minutes of retries and warnings."""
    if not uri.startswith("sqlite:///"):
        return
    path = Path(uri.removeprefix("sqlite:///").split("?", 1)[0]).expanduser()
    if not path.is_file():
        return  # a new store: MLflow makes it at once, or says in one line why it cannot
    try:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=CHECK_TIMEOUT_S
        )
        conn.isolation_level = None  # the transaction below is ours
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("CREATE TABLE privrepro_write_probe (x)")  # a real write ...
            conn.execute("ROLLBACK")  # ... undone: the store is as it was
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise ConfigError("tracking.uri", uri, f"cannot be written: {exc}") from exc


def _check_artifacts(client: Any, settings: Mapping[str, Any]) -> None:
    """Where the figure's experiment keeps its artifacts (its own location when it exists, else
    ``tracking.artifacts``) is a folder this process can write, when it is local: found before
    compute, not after the unit, the table and the plot were made."""
    name = str(settings.get("experiment") or "")
    found = client.get_experiment_by_name(name) if name else None
    location = str(found.artifact_location) if found is not None else ""
    key = "tracking.experiment" if location else "tracking.artifacts"
    location = location or str(settings.get("artifacts") or "")
    if location.startswith("file://"):
        from urllib.parse import unquote, urlparse

        location = unquote(urlparse(location).path)
    elif "://" in location or not location:
        return  # a remote artifact store, or MLflow's default: MLflow reports it
    from privrepro.runner.preflight import check_writable

    check_writable(key, location)


def _quiet_mlflow_logs() -> None:
    """MLflow and alembic report the store's schema creation at INFO on the console."""
    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _mlflow_client(uri: str) -> Any:
    if not uri:
        raise ConfigError("tracking.uri", uri, "must name an MLflow tracking URI")
    try:
        from mlflow.tracking import MlflowClient
    except ImportError as exc:
        raise ConfigError("tracking", "mlflow", f"needs MLflow: {_INSTALL}") from exc
    _quiet_mlflow_logs()
    try:
        if uri.startswith("sqlite:///"):  # a new local store: its folder is made
            Path(uri.removeprefix("sqlite:///")).expanduser().parent.mkdir(
                parents=True, exist_ok=True
            )
        client = MlflowClient(tracking_uri=uri)
        client.search_experiments(max_results=1)
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        if "filesystem tracking backend" in first:  # MLflow >= 3.13 refuses its file store
            first = (
                "this MLflow keeps its file store only with MLFLOW_ALLOW_FILE_STORE=true "
                "(the default tracking.uri, a local SQLite store, needs nothing)"
            )
        raise ConfigError("tracking.uri", uri, f"cannot be opened: {first[:240]}") from exc
    return client


def open_tracker(
    cfg: DictConfig,
    paper: str,
    figure: str,
    profile: str,
    seed: int,
    units: Sequence[Mapping[str, Any]] = (),
) -> Tracker:
    """The tracker ``cfg.tracking`` asks for (:class:`Tracker`, doing nothing, by default);
    ``units`` (the figure's) name each unit run by what sets it apart from the others."""
    settings = _settings(cfg)
    if settings.get("backend", "none") != "mlflow":
        return Tracker()
    uri = str(settings["uri"])
    return MlflowTracker(
        _mlflow_client(uri),
        experiment=str(settings.get("experiment") or f"{paper}/{figure}"),
        artifacts=str(settings.get("artifacts") or ""),
        name=f"{paper}/{figure}",
        tags={"privrepro.profile": profile, "privrepro.seed": str(seed)},
        uri=uri,
        seed=seed,
        units=units,
    )


def run_label(unit: Mapping[str, Any], units: Sequence[Mapping[str, Any]]) -> str:
    """What sets ``unit`` apart from the other ``units``: ``key=value`` for each scalar
    (flattened) entry whose value differs between them, in the unit's order."""
    flat = [flatten(dict(u)) for u in units]
    mine = flatten(dict(unit))
    varying = [k for k in mine if len({f.get(k) for f in flat}) > 1]
    return " ".join(f"{k.rsplit('.', 1)[-1]}={mine[k]}" for k in varying)


def _metric_name(text: str) -> str:
    """``text`` as an MLflow metric name (letters, digits, ``_ - . / :`` and spaces)."""
    text = text.replace("'", "prime").replace("=", ":")
    return re.sub(r"[^\w./\- :]", "_", text)[:250]


def outcome_metrics(summary: pd.DataFrame | None) -> dict[str, float]:
    """A recipe's summary (rows ``metric``, ``value`` and the columns that label them) as
    metrics ``<metric>/<label>:<value>/...``: only the labels that vary within ``summary`` name a
    number, and only finite numeric values are kept (MLflow stores no ±inf)."""
    if summary is None or summary.empty or not {"metric", "value"} <= set(summary.columns):
        return {}
    labels = [
        c
        for c in summary.columns
        if c not in _SUMMARY_KEYS and summary[c].astype(str).nunique(dropna=False) > 1
    ]
    out: dict[str, float] = {}
    for row in summary.to_dict("records"):
        value = pd.to_numeric(pd.Series([row["value"]]), errors="coerce").iloc[0]
        if not math.isfinite(float(value)):
            continue
        parts = [str(row["metric"])] + [f"{c}={row[c]}" for c in labels if pd.notna(row[c])]
        name = _metric_name("/".join(parts))
        while name in out:  # two rows the labels do not tell apart: both kept
            name += "_"
        out[name] = float(value)
    return out


def unit_outcome(rows: pd.DataFrame, summarize: Summarize) -> dict[str, float]:
    """A unit's outcome metrics: the recipe's summary of the unit alone, and the columns that
    are outcomes in any figure (ε spent, the tuning's best validation accuracy)."""
    out: dict[str, float] = {}
    try:
        out.update(outcome_metrics(summarize(rows)))
    except Exception as exc:  # a summary that needs the figure's other units: none per unit
        _log.debug("no per-unit summary: %s", exc)
    for column, name, how in _OUTCOME_COLUMNS:
        if column in rows.columns:
            values = pd.to_numeric(rows[column], errors="coerce")
            values = values[values.map(math.isfinite)]
            if len(values):
                out[name] = float(values.agg(how))
    return out


def flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """A nested mapping as MLflow params: ``{"a.b": "1"}``; lists as JSON, values cut to
    MLflow's 6000 characters."""
    out: dict[str, str] = {}
    if isinstance(value, Mapping):
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}{k}."))
        return out
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    out[prefix.rstrip(".")] = text[:_PARAM_CHARS]
    return out


class MlflowTracker(Tracker):
    """Tracking to MLflow through ``MlflowClient`` (no global active run): metrics are kept in
    memory while a unit computes and written in batches when it ends."""

    def __init__(
        self,
        client: Any,
        *,
        experiment: str,
        artifacts: str,
        name: str,
        tags: Mapping[str, str],
        uri: str = "",
        seed: int | None = None,
        units: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        self.client, self.name, self.tags = client, name, dict(tags)
        self.uri, self.seed, self.units = uri, seed, list(units)
        self.experiment_name = experiment
        self.experiment_id = self._experiment(experiment, artifacts)
        self.unit_runs: dict[str, str] = {}
        self._buffer: list[Any] | None = None  # the computing unit's metrics

    def _seeded(self, text: str) -> str:
        return f"{text} seed={self.seed}" if self.seed is not None else text

    def _experiment(self, name: str, artifacts: str) -> str:
        from mlflow.exceptions import MlflowException

        found = self.client.get_experiment_by_name(name)
        if found is not None:
            return str(found.experiment_id)
        location = Path(artifacts).expanduser().resolve().as_uri() if artifacts else None
        try:
            return str(self.client.create_experiment(name, artifact_location=location))
        except MlflowException:  # another job created it first
            found = self.client.get_experiment_by_name(name)
            if found is None:
                raise
            return str(found.experiment_id)

    def _log_params(self, run_id: str, params: Mapping[str, str]) -> None:
        from mlflow.entities import Param

        items = [Param(k, v) for k, v in params.items()]
        for i in range(0, len(items), _PARAMS_PER_CALL):
            self.client.log_batch(run_id, params=items[i : i + _PARAMS_PER_CALL])

    @contextmanager
    def unit(self, unit_id: str, unit: Mapping[str, Any]) -> Iterator[MetricLogger | None]:
        from mlflow.entities import Metric

        label = run_label(unit, self.units) if len(self.units) > 1 else ""
        run = self.client.create_run(
            self.experiment_id,
            run_name=self._seeded(f"{self.name} {label}".strip())[:250],
            tags={**self.tags, "privrepro.unit_id": unit_id, "privrepro.figure": self.name},
        )
        run_id = run.info.run_id
        self._log_params(run_id, flatten(dict(unit)))
        buffer: list[Any] = []
        self._buffer = buffer
        t0 = time.perf_counter()

        def log_metric(name: str, value: float, step: int) -> None:
            value = float(value)
            if math.isfinite(value):  # MLflow stores no ±inf (a non-private run's ε)
                buffer.append(Metric(name, value, int(time.time() * 1000), int(step)))

        status = "FAILED"
        try:
            yield log_metric
            status = "FINISHED"
        finally:
            buffer.append(
                Metric("wall_time_s", time.perf_counter() - t0, int(time.time() * 1000), 0)
            )
            for i in range(0, len(buffer), _METRICS_PER_CALL):
                self.client.log_batch(run_id, metrics=buffer[i : i + _METRICS_PER_CALL])
            self.client.set_terminated(run_id, status=status)
            self.unit_runs[unit_id] = run_id
            self._buffer = None

    def unit_result(self, rows: pd.DataFrame, summarize: Summarize) -> None:
        if self._buffer is None:
            return
        self._buffer.extend(_metrics(unit_outcome(rows, summarize)))

    def figure_done(
        self,
        record: Mapping[str, Any],
        artifacts: Sequence[Path],
        unit_ids: Sequence[str],
        summary: Callable[[], pd.DataFrame | None] | None = None,
    ) -> None:
        tags = {
            **self.tags,
            "privrepro.figure": self.name,
            "privrepro.command": str(record.get("command", ""))[:5000],
            "privrepro.overrides": json.dumps(record.get("overrides", []))[:5000],
            "privrepro.git_sha": str(record.get("git_sha") or ""),
        }
        run = self.client.create_run(
            self.experiment_id, run_name=self._seeded(self.name), tags=tags
        )
        run_id = run.info.run_id
        params = flatten(record.get("params") or {}, "params.")
        params.update(profile=str(record.get("profile")), seed=str(record.get("seed")))
        self._log_params(run_id, params)
        metrics = _metrics(outcome_metrics(summary() if summary is not None else None))
        for i in range(0, len(metrics), _METRICS_PER_CALL):
            self.client.log_batch(run_id, metrics=metrics[i : i + _METRICS_PER_CALL])
        for path in artifacts:
            if Path(path).is_file():
                sub = "plots" if Path(path).suffix in (".png", ".pdf", ".svg") else "results"
                self.client.log_artifact(run_id, str(path), artifact_path=sub)
        for uid in unit_ids:
            if uid in self.unit_runs:
                self.client.set_tag(self.unit_runs[uid], "mlflow.parentRunId", run_id)
        self.client.set_terminated(run_id, status="FINISHED")
        nested = sum(uid in self.unit_runs for uid in unit_ids)
        print(
            f"{self.name}: MLflow run {run_id} ({len(metrics)} metrics, {nested} unit runs) in "
            f"experiment {self.experiment_name} at {self.uri} "
            f"(mlflow ui --backend-store-uri {self.uri})",
            flush=True,
        )


def _metrics(values: Mapping[str, float]) -> list[Any]:
    from mlflow.entities import Metric

    now = int(time.time() * 1000)
    return [Metric(k, float(v), now, 0) for k, v in values.items() if math.isfinite(float(v))]
