"""A config root for the runner tests: the project's conf/ plus a test experiment."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # recipes_for_tests

NOISE_EXPERIMENT = """# @package _global_
# test — seeded noise per unit
defaults:
  - /recipe: recipes_for_tests:NoiseFigure
  - _self_
figure:
  paper: test
  name: noise
"""
NOISE_TINY = "draws: 100\n"  # conf/params/test/noise/tiny.yaml


@pytest.fixture
def conf_root(tmp_path: Path) -> Path:
    """A copy of conf/ with ``experiment=test/noise`` added (and its tiny profile file)."""
    root = tmp_path / "conf"
    shutil.copytree(REPO / "conf", root)
    (root / "experiment" / "test").mkdir()
    (root / "experiment" / "test" / "noise.yaml").write_text(NOISE_EXPERIMENT)
    (root / "params" / "test" / "noise").mkdir(parents=True)
    (root / "params" / "test" / "noise" / "tiny.yaml").write_text(NOISE_TINY)
    return root
