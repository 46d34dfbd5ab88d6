"""Sweep folders, the command that made a run, and what a multirun does before and after its jobs.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

#: the command as typed, handed to the processes a launcher starts (joblib, submitit, SLURM)
COMMAND_ENV = "PRIVREPRO_COMMAND"
_TYPED: list[str] = []  # the command as typed in this process (set by the CLI before Hydra)


def record_command(argv: Sequence[str]) -> str:
    """Remember ``argv`` as the command typed in this process and pass it to its children."""
    text = shlex.join(["privrepro", *argv])
    _TYPED[:] = [text]
    os.environ[COMMAND_ENV] = text
    return text


def typed_command() -> str:
    """The command as typed: this process's, else the launching process's (environment)."""
    if _TYPED:
        return _TYPED[0]
    return os.environ.get(COMMAND_ENV) or shlex.join([Path(sys.argv[0]).name, *sys.argv[1:]])


def sweep_label(argv: Sequence[str]) -> str:
    """The experiment(s) a command names, for a folder name: ``cl/fig2`` → ``cl-fig2``,
    ``cl/fig2,cl/fig3_peft`` → ``cl-fig2+cl-fig3_peft``; ``sweep`` when none is named."""
    names: list[str] = []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key.lstrip("+~") == "experiment":
            names += [v.strip().strip("'\"") for v in value.split(",") if v.strip()]
    label = "+".join(n.replace("/", "-") for n in names) or "sweep"
    safe = "".join(c if c.isalnum() or c in "-_+." else "_" for c in label)
    return safe[:80]


def sweep_name(experiments_dir: str) -> str:
    """A new folder ``<experiments_dir>/_sweeps/<time>_<label>``, made now; its name.

    Registered as the resolver ``${privrepro.sweep:<experiments_dir>}`` with Hydra's cache, so it
    runs once, in the launching process; the jobs get the cached name.
    """
    base = Path(experiments_dir) / "_sweeps"
    stem = f"{datetime.now().strftime('%Y-%m-%d_%H-%M-%S')}_{sweep_label(sys.argv[1:])}"
    base.mkdir(parents=True, exist_ok=True)
    for i in range(1, 1000):
        name = stem if i == 1 else f"{stem}-{i}"
        try:
            (base / name).mkdir()
        except FileExistsError:
            continue
        return name
    raise RuntimeError(f"{base}: no free sweep folder name for {stem}")


if not OmegaConf.has_resolver("privrepro.sweep"):
    OmegaConf.register_new_resolver("privrepro.sweep", sweep_name, use_cache=True)


def default_invocation() -> dict[str, Any]:
    """What a run outside the Hydra command line records: this process's command line
    (``python -m privrepro.runner.all --profile smoke --target cl-2``)."""
    if _TYPED:
        return {"command": _TYPED[0], "overrides": []}
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    module = str(getattr(spec, "name", "") or "")
    head = ["python", "-m", module.removesuffix(".__main__")] if module else [sys.argv[0]]
    return {"command": shlex.join([*head, *sys.argv[1:]]), "overrides": []}


def invocation(hydra_cfg: Any, multirun: bool) -> dict[str, Any]:
    """The command that made this run: as typed, the overrides this job ran with and, for a job
    of a multirun, its sweep folder and job number."""
    record: dict[str, Any] = {
        "command": typed_command(),
        "overrides": [str(o) for o in hydra_cfg.overrides.task],
    }
    if multirun:
        record["sweep"] = {"dir": str(hydra_cfg.sweep.dir), "job": int(hydra_cfg.job.num)}
    return record


def _write(path: Path, text: str) -> None:
    """Write a sweep record, any credential in it redacted (a storage URL's password)."""
    from privrepro.config.secrets import redact

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(redact(text), encoding="utf-8")


def _redact_file(path: Path) -> None:
    """Rewrite the record ``path`` (Hydra's ``multirun.yaml``: the command line as typed) with
    any credential redacted; nothing when it holds none or cannot be read."""
    from privrepro.config.secrets import redact
    from privrepro.store.atomic import atomic_write_text

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    if redact(text) != text:
        atomic_write_text(path, redact(text))


def _overrides_yaml(overrides: Sequence[str]) -> str:
    return OmegaConf.to_yaml(OmegaConf.create(list(overrides)))


def _representative_jobs(overrides: Sequence[str]) -> list[list[str]]:
    """One job per distinct experiment, profile, tracking choice and storage of the sweep
    (what decides which stores its jobs open)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(list(overrides))
    jobs = [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]
    keep: dict[tuple[str, ...], list[str]] = {}
    for job in jobs:
        deciding = tuple(
            o
            for o in job
            if o.split("=", 1)[0].lstrip("+~").split(".")[0]
            in ("experiment", "profile", "tracking")
            or o.split("=", 1)[0].endswith("storage")
        )
        keep.setdefault(deciding, list(job))
    return list(keep.values())


def check_sweep_stores(config: DictConfig, config_name: str) -> None:
    """Open every study storage and tracking store the sweep's jobs will use (raises the first
    :class:`~privrepro.config.ConfigError`)."""
    from hydra import compose

    from privrepro.runner.plan import plan_config
    from privrepro.runner.storages import check_storages

    task = [str(o) for o in config.hydra.overrides.task]
    hydra_overrides = [str(o) for o in config.hydra.overrides.hydra]
    seen: set[str] = set()
    for job in _representative_jobs(task):
        cfg = compose(config_name=config_name, overrides=[*hydra_overrides, *job])
        params = plan_config(cfg, check=False).params  # the run's own plan, without the machine
        key = repr((sorted(_storages(params)), OmegaConf.to_container(cfg.get("tracking") or {})))
        if key in seen:
            continue
        seen.add(key)
        check_storages(params, cfg)


def _storages(params: Any) -> list[tuple[str, str]]:
    from privrepro.runner.storages import study_storages

    return list(study_storages(params))


def _launcher_captures_output(config: DictConfig) -> bool:
    """The launcher runs jobs where their output does not reach this terminal (submitit)."""
    target = str(OmegaConf.select(config, "hydra.launcher._target_", default="") or "")
    return "submitit" in target.lower()


class SweepCallback(Callback):
    """Hydra callback: the sweep folder's records, stores checked before any job, each job's
    overrides and result line, and the result lines printed where the sweep was launched."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        sweep = Path(str(config.hydra.sweep.dir))
        task = [str(o) for o in config.hydra.overrides.task]
        from privrepro.config.validation import ConfigError
        from privrepro.data.registry import MissingDataError

        try:
            from privrepro.runner.preflight import check_launcher

            check_launcher(OmegaConf.select(config, "hydra.launcher"))
            check_sweep_stores(config, str(kwargs.get("config_name") or "config"))
        except (ConfigError, MissingDataError) as exc:
            from privrepro.runner.preflight import error_line

            if sweep.is_dir() and not any(sweep.iterdir()):
                sweep.rmdir()  # no job ran: no sweep folder left behind
            print(f"privrepro: {error_line(exc)} (before any job started)", file=sys.stderr)
            sys.exit(2)
        _write(sweep / "command.txt", typed_command() + "\n")
        _write(sweep / "overrides.yaml", _overrides_yaml(task))

    def on_job_start(self, config: DictConfig, **kwargs: Any) -> None:
        if not _is_multirun(config):
            return
        _redact_file(Path(str(config.hydra.sweep.dir)) / "multirun.yaml")  # Hydra's record
        out = Path(str(config.hydra.runtime.output_dir))
        _write(
            out / "overrides.yaml", _overrides_yaml([str(o) for o in config.hydra.overrides.task])
        )

    def on_job_end(self, config: DictConfig, job_return: Any, **kwargs: Any) -> None:
        if not _is_multirun(config):
            return
        out = Path(str(config.hydra.runtime.output_dir))
        from hydra.core.utils import JobStatus

        value = job_return._return_value  # not .return_value: that re-raises a failure
        if job_return.status == JobStatus.COMPLETED:
            line = str(value) if value is not None else "done"
        else:
            line = f"FAILED: {type(value).__name__}: {value}"
        _write(out / "result.txt", line + "\n")

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        sweep = Path(str(config.hydra.sweep.dir))
        _redact_file(sweep / "multirun.yaml")
        jobs = sorted(
            (p for p in sweep.iterdir() if p.is_dir() and p.name.isdigit()),
            key=lambda p: int(p.name),
        )
        lines = []
        for job in jobs:
            text = _result_line(job / "result.txt")
            lines.append(f"  job {job.name}: {text}")
        print(f"sweep {sweep}: {len(jobs)} jobs (command, overrides and job folders there)")
        if _launcher_captures_output(config):
            print("\n".join(lines))
        from privrepro.runner.run_views import draw_sweep

        try:
            for png in draw_sweep(sweep):
                print(f"sweep plot: {png}")
        except Exception as exc:  # the jobs' results stand; only the sweep's plot is missing
            from privrepro.runner.figure_tables import failure_line

            print(f"sweep plot not drawn: {failure_line(exc)}", file=sys.stderr)


def _result_line(path: Path) -> str:
    """A job's result line, read bounded (a pipe or a device there is never waited on)."""
    from privrepro.bounded_read import read_bytes

    try:
        data = read_bytes(path, 1 << 16, tree=path.parent)
    except FileNotFoundError:
        return "(no result recorded)"
    except OSError as exc:
        return f"(result unreadable: {exc})"
    return data.decode("utf-8", "replace").strip()


def _is_multirun(config: DictConfig) -> bool:
    from hydra.types import RunMode

    return OmegaConf.select(config, "hydra.mode") == RunMode.MULTIRUN
