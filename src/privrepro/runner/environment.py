"""What a result was made with: git sha, package versions, device, host, profile, wall time."""

from __future__ import annotations

import functools
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

_PACKAGES = (
    "privrepro",
    "numpy",
    "scipy",
    "pandas",
    "torch",
    "torchvision",
    "timm",
    "opacus",
    "continuum",
    "optuna",
    "dp-accounting",
    "hydra-core",
    "matplotlib",
    "scikit-learn",
)


@functools.lru_cache(maxsize=1)
def git_state(cwd: str | None = None) -> dict[str, Any]:
    """The checkout's commit and whether it has uncommitted changes (``None`` outside git)."""

    def run(*args: str) -> str | None:
        try:
            out = subprocess.run(
                ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    sha = run("rev-parse", "HEAD")
    status = run("status", "--porcelain", "--untracked-files=no")
    return {"git_sha": sha, "git_dirty": bool(status) if status is not None else None}


@functools.lru_cache(maxsize=1)
def package_versions() -> dict[str, str]:
    """Installed versions of the packages a result depends on."""
    versions = {"python": sys.version.split()[0]}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def resolve_device(requested: str) -> str:
    """``auto`` → ``cuda`` when a CUDA device is usable, else ``cpu``; ``cuda`` must be usable.

    Raises:
        ConfigError: for an unknown value, or ``cuda`` on a machine without CUDA.
    """
    from privrepro.config.validation import ConfigError

    if requested not in ("auto", "cpu", "cuda"):
        raise ConfigError("device", requested, "must be one of ['auto', 'cpu', 'cuda']")
    if requested == "cpu":
        return "cpu"
    import torch

    available = torch.cuda.is_available()
    if requested == "cuda" and not available:
        raise ConfigError(
            "device", requested, "CUDA is not available on this machine; use auto or cpu"
        )
    return "cuda" if available else "cpu"


def device_name(device: str) -> str:
    """A human-readable name of the device (GPU model, or the CPU)."""
    if device.startswith("cuda"):
        import torch

        return str(torch.cuda.get_device_name(0))
    return platform.processor() or platform.machine()


def run_environment(device: str, profile: str, repo: Path | None = None) -> dict[str, Any]:
    """Everything recorded beside a unit's rows and a figure's table."""
    return {
        **git_state(str(repo) if repo else None),
        "versions": package_versions(),
        "device": device,
        "device_name": device_name(device),
        "host": platform.node(),
        "platform": platform.platform(),
        "profile": profile,
    }


def launcher_workers() -> int:
    """How many jobs of this Hydra multirun run at once on this machine: the joblib launcher's
    ``n_jobs`` (negative: counted back from the CPUs this process may use, as joblib does); 1
    outside a Hydra job or under a launcher that gives each job its own allocation (SLURM)."""
    try:
        from hydra.core.hydra_config import HydraConfig

        n_jobs = HydraConfig.get().launcher.get("n_jobs")
    except Exception:  # not inside a Hydra job, or a launcher without n_jobs
        return 1
    if n_jobs is None:
        return 1
    n = int(n_jobs)
    if n < 0:
        from privrepro.threads import available_cpus

        n = available_cpus().cpus + 1 + n
    return max(1, n)
