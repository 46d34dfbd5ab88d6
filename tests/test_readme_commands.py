"""Every command of the README and ``docs/`` that can run without real data or a cluster, run
verbatim on a fresh copy of the working tree, as a researcher meets them on a fresh machine.

The copy holds the files git tracks or would track (no ``.venv``, no ``.tools``), and ``uv`` is
taken off ``PATH``: the README's first command installs it (``make`` → ``.tools/``) and the
locked environment (uv's download cache is reused). Commands run in document order, each in
its own ``bash``, in the activated environment once the README has said to activate it.

Each command runs as written; the environment sets only what a command leaves to the site or the
profile: ``PROFILE=tiny`` and ``PRIVREPRO_PROFILE=tiny`` (the tests' grids, seconds a figure;
a command that names its profile keeps it), ``STORE`` (a scratch folder) and ``STUDIES`` (a
database on the throw-away PostgreSQL server) for the "Several machines" section, and
``ARGS=--only adult`` for ``make rehearsal-data`` (the smallest stand-in; :func:`slice_env`).
Commands that cannot run here are listed with the reason (:func:`why_not_run`); a test fails
when a command has no reason and does not exit 0.

To keep the suite short, a command is run once however often the documents repeat it, and after
``make figures`` and one ``make fig-<paper>-<id>`` (the same runner, with ``--target``) the other
``make fig-…`` targets are resolved to the experiments they name instead of rerun
(:func:`fig_target`): a target naming no experiment still fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCUMENTS = ["README.md", *sorted(p.relative_to(REPO).as_posix() for p in REPO.glob("docs/*.md"))]
_STARTS = ("make", "privrepro", "uv", "python", "source", "export", "pytest", "mkdir")
_ENV_PREFIX = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)*")
_FENCE = re.compile(r"^```(\w*)\s*$")
_INLINE = re.compile(r"`([^`\n]+)`")
_ACTIVATE = "source .venv/bin/activate"


@dataclass(frozen=True)
class Command:
    document: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.document}:{self.line}: {self.text}"


def _is_command(text: str) -> bool:
    words = _ENV_PREFIX.sub("", text).split()
    return len(words) >= 2 and words[0] in _STARTS


def commands_of(document: str) -> list[Command]:
    """Shell lines of ``bash``/``sh``/unlabelled fenced blocks (continuations joined) and inline
    code spans that are commands, in document order."""
    lines = (REPO / document).read_text().splitlines()
    found: list[Command] = []
    fence: str | None = None
    pending = ""
    start = 0
    for no, line in enumerate(lines, 1):
        m = _FENCE.match(line.strip())
        if m:
            fence = None if fence is not None else m.group(1)
            pending = ""
            continue
        if fence is not None:
            if fence not in ("", "bash", "sh", "shell", "console"):
                continue
            if not pending:
                start = no
            pending += line.rstrip()
            if pending.endswith("\\"):
                pending = pending[:-1] + " "
                continue
            text = re.sub(r"\s+", " ", pending).strip()
            pending = ""
            if _is_command(text):
                found.append(Command(document, start, text))
            continue
        for span in _INLINE.findall(line):
            if _is_command(span.strip()):
                found.append(Command(document, no, span.strip()))
    return found


def why_not_run(cmd: Command) -> str | None:
    """Why a command cannot run in the tests, or None (it runs)."""
    text = re.sub(r"\s#\s.*$", "", cmd.text)  # the comment (bash ignores it too)
    if re.search(r"<[^>]*>|\.\.\.|…", text):
        return "a pattern with placeholders"
    if "hydra/launcher=slurm" in text:
        return "needs a SLURM cluster (rehearsed verbatim with hydra/launcher=submitit_local)"
    if re.search(r"\b(profile|PROFILE)=paper\b", text):
        return "the paper profile: the papers' datasets and grids"
    if "params.data=uci" in text:
        return "real data: the UCI Adult files"
    if re.match(r"export (STORE|STUDIES)=", text):
        return "a site's value: the test sets STORE to a scratch folder, STUDIES to its PostgreSQL"
    words = _ENV_PREFIX.sub("", text).split()
    if words[:2] == ["make", "rehearsal-data"] and any(
        w.startswith(("DATA=/", "ARGS=")) for w in words
    ):
        return (
            "full-size stand-ins (gigabytes) or a site's folder: the target runs as "
            "`make rehearsal-data` with ARGS=--only adult"
        )
    rehearse = words[:3] == ["python", "-m", "privrepro.rehearsal"] and "--help" not in words
    if words[:2] == ["make", "rehearsal"] or rehearse:
        return (
            "every paper-profile figure on the full-size stand-ins (3.8 GB, about 22 min on "
            "2 cores); tests/rehearsal runs its module (privrepro.rehearsal.rehearse) on tiny stand-ins"
        )
    tests = (["make", "test"], ["make", "test-fast"], ["make", "test-lowest"], ["make", "check"])
    if words[:2] in tests or "pytest" in words:
        return "the test suite itself (CI runs it)"
    if words[:2] == ["make", "bench"] or "benchmarks/" in text:
        return "benchmarks: minutes of timed runs (make bench)"
    return None


def slice_env(cmd: Command) -> dict[str, str]:
    """What the environment adds for one command that leaves its size to the caller:
    ``make rehearsal-data`` writes only the smallest stand-in (``ARGS=--only adult``; the full set
    is 3.8 GB), which proves the target, its writer, the marker and the manifest in a second."""
    words = _ENV_PREFIX.sub("", re.sub(r"\s#\s.*$", "", cmd.text)).split()
    if words[:2] == ["make", "rehearsal-data"]:
        return {"ARGS": "--only adult"}
    return {}


def fig_target(cmd: Command) -> str | None:
    """The target id of a bare ``make fig-<paper>-<id>`` (``cl-2``), else None."""
    words = _ENV_PREFIX.sub("", re.sub(r"\s#\s.*$", "", cmd.text)).split()
    if len(words) == 2 and words[0] == "make" and words[1].startswith("fig-"):
        return words[1].removeprefix("fig-")
    return None


def _fresh_copy(dest: Path) -> None:
    """The files git tracks or would track, copied to ``dest`` (no .venv, no .tools)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        rel = Path(raw.decode())
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def _fresh_env(extra: dict[str, str]) -> dict[str, str]:
    """This process's environment as a fresh shell would have it: no virtual environment, no uv
    on PATH, no pytest or Python path variables."""
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "CONDA_PREFIX", "PRIVREPRO_CONF")
    # a suite started by `make test ARGS=…` passes make's variables down (MAKEFLAGS): a fresh
    # shell has none of them
    drop += ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "ARGS", "DATA", "TEST_WORKERS")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in drop and not k.startswith(("UV_", "PYTEST", "PRIVREPRO_"))
    }
    venv_bin = str(REPO / ".venv" / "bin")
    path = [
        d
        for d in env.get("PATH", "").split(os.pathsep)
        if d and d != venv_bin and not (Path(d) / "uv").exists()
    ]
    env["PATH"] = os.pathsep.join(path)
    env.update(extra)
    return env


@pytest.mark.slow
def test_every_runnable_command_of_the_readme_and_docs_works_verbatim(
    tmp_path: Path, postgres_url: str
) -> None:
    all_commands = [c for d in DOCUMENTS for c in commands_of(d)]
    assert any(c.text == "make env" for c in all_commands)  # the extraction found the README's
    clone = tmp_path / "privrepro"
    clone.mkdir()
    _fresh_copy(clone)
    store = tmp_path / "shared-store"
    env = _fresh_env(
        {
            "PROFILE": "tiny",
            "PRIVREPRO_PROFILE": "tiny",
            "CI": "true",
            "MPLBACKEND": "Agg",
            "STORE": str(store),
            "STUDIES": postgres_url,
            "OMP_NUM_THREADS": "1",
        }
    )
    assert shutil.which("uv", path=env["PATH"]) is None  # as on a fresh machine

    from privrepro.runner.catalog import resolve_target

    ran: list[str] = []
    outputs: dict[str, str] = {}
    not_run: list[str] = []
    resolved: list[str] = []
    seen: set[str] = set()
    fig_rule_ran = False
    activated = False
    for cmd in all_commands:
        reason = why_not_run(cmd)
        if reason:
            not_run.append(f"{cmd}  [{reason}]")
            continue
        bare = re.sub(r"\s#\s.*$", "", cmd.text)
        if bare in seen:  # the same command twice in the documents: run once
            continue
        seen.add(bare)
        target = fig_target(cmd)
        if target is not None and fig_rule_ran:
            # `make figures` computed every experiment and one `make fig-…` ran the pattern rule
            # (the same runner with --target): the others must name experiments of the copy
            names = [e.name for e in resolve_target(target, clone / "conf")]
            assert names, f"{cmd}: make target fig-{target} names no experiment"
            resolved.append(f"{cmd} -> {', '.join(names)}")
            continue
        prelude = f"{_ACTIVATE} && " if activated or cmd.document != "README.md" else ""
        t0 = time.perf_counter()
        out = subprocess.run(
            ["bash", "-c", prelude + cmd.text],
            cwd=clone,
            env={**env, **slice_env(cmd)},
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert out.returncode == 0, (
            f"{cmd}\nexit {out.returncode}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
        )
        outputs[cmd.text] = out.stdout
        ran.append(f"{time.perf_counter() - t0:6.1f} s  {cmd}")
        print(ran[-1], flush=True)
        activated = activated or cmd.text.startswith(_ACTIVATE)
        fig_rule_ran = fig_rule_ran or target is not None

    print(f"\nran {len(ran)} commands verbatim:", *ran, sep="\n  ")
    print(f"make fig-… targets resolved, not rerun ({len(resolved)}):", *resolved, sep="\n  ")
    print(f"not run ({len(not_run)}):", *not_run, sep="\n  ")
    assert (clone / ".tools" / "bin" / "uv").is_file()  # make installed uv where it said
    assert (clone / "results" / "cl" / "fig2.csv").is_file()
    from privrepro.data.provenance import REHEARSAL_MARKER

    assert (clone / "data" / "rehearsal" / REHEARSAL_MARKER).is_file()  # make rehearsal-data
    assert (clone / "data" / "rehearsal" / "adult" / "adult.data").is_file()
    # the several-machines rehearsal ran through submitit into the shared store, its tuning
    # studies on PostgreSQL (the README's own postgresql:// form), two workers on each study
    import optuna
    from optuna.trial import TrialState

    assert (store / "results" / "cl" / "fig3_peft.csv").is_file()
    assert list((store / "experiments" / "_sweeps").rglob("*_submitted.pkl"))
    rehearsal = next(c for c in outputs if "hydra/launcher=submitit_local" in c)
    n_trials = int(re.search(r"params\.tuning\.n_trials=(\d+)", rehearsal).group(1))  # type: ignore[union-attr]
    assert re.search(r"\bworker=0,1\b", rehearsal) and postgres_url.startswith("postgresql://")
    studies = optuna.get_all_study_summaries(postgres_url)
    workers: set[str] = set()
    assert studies
    for summary in studies:
        study = optuna.load_study(study_name=summary.study_name, storage=postgres_url)
        complete = study.get_trials(states=(TrialState.COMPLETE,))
        assert len(complete) == n_trials, (summary.study_name, len(complete))  # exactly n_trials
        workers |= {str(t.system_attrs.get("privrepro_worker")) for t in complete}
    assert len(workers) >= 2, workers  # both workers ran trials of the shared studies
    # each job's result line printed where the sweep was launched (not only in .submitit/)
    assert re.search(r"job 0: cl/fig3_peft: \d+ rows", outputs[rehearsal]), outputs[rehearsal]
    assert re.search(r"job 1: cl/fig3_peft: \d+ rows", outputs[rehearsal])
