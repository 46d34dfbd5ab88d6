"""Shared fixtures: every test writes into its own temporary run store, results and plots.

The real components (a throw-away PostgreSQL server, Debian's Chromium) come from
``tests/components.py``; the session ends with one line counting the tests that could not run
because a component is missing, and how to install it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
REPO = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # components (pytest runs with --import-mode=importlib)

from components import MISSING, postgres_server, postgres_url  # noqa: E402

__all__ = ["postgres_server", "postgres_url"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``slow``-marked tests first (the README's commands before all): on ``-n 2`` the longest
    start at once and overlap the rest of the suite instead of ending it alone (with ``--dist
    worksteal``, as ``make test`` runs it: the tests queued behind a long one on its worker are
    taken by the idle one; the default ``load`` leaves them waiting there). Tests marked
    ``gpu`` skip, with one reason, where no CUDA device is present."""
    items.sort(
        key=lambda item: (
            "test_readme_commands" not in item.nodeid,
            item.get_closest_marker("slow") is None,
        )
    )
    gpu = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu:
        return
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(
        reason="gpu: no CUDA device here, the CUDA paths were NOT exercised "
        "(run `pytest -m gpu` on a machine with a GPU)"
    )
    for item in gpu:
        item.add_marker(skip)


@pytest.fixture(autouse=True)
def _seed_global_generators(request: pytest.FixtureRequest) -> None:
    """Seed torch's, NumPy's and Python's global generators from the test's id before it runs.

    The library takes its randomness injected; a test that builds a module (``nn.Conv2d`` draws
    its weights from torch's global generator) would otherwise see weights that depend on which
    tests ran before it on its xdist worker, and pass or fail with the order."""
    import random
    import zlib

    import numpy as np
    import torch

    seed = zlib.crc32(request.node.nodeid.encode())
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 (the legacy global generator, which this seeds)
    torch.manual_seed(seed)


@pytest.fixture
def store_overrides(tmp_path: Path) -> list[str]:
    """Hydra overrides that point the run store, results and plots into ``tmp_path``."""
    return [
        f"paths.experiments_dir={tmp_path / 'experiments'}",
        f"paths.results_dir={tmp_path / 'results'}",
        f"paths.plots_dir={tmp_path / 'plots'}",
        f"paths.data_dir={tmp_path / 'data'}",
        "progress=false",
    ]


def _skip_reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """``N tests could not run (missing: ...)``: the count ``make test`` ends with."""
    if hasattr(terminalreporter.config, "workerinput"):  # an xdist worker: the controller counts
        return
    skipped = terminalreporter.stats.get("skipped", [])
    reasons = [_skip_reason(r) for r in skipped]
    missing = [r for r in reasons if MISSING in r]
    hows = sorted({r[r.index(MISSING) + len(MISSING) :].strip() for r in missing})
    other = len(reasons) - len(missing)
    line = f"{len(missing)} tests could not run for a missing component"
    if hows:
        line += ": " + " | ".join(hows)
    if other:
        line += f"; {other} skipped for other reasons"
    terminalreporter.write_line(line)
