"""Shared fixtures: every test writes into its own temporary run store, results and plots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")
REPO = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``gpu`` skip, with one reason, where no CUDA device is present."""
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
