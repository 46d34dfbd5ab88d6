"""Shared fixtures: every test writes into its own temporary run store, results and plots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
REPO = Path(__file__).resolve().parents[1]


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
