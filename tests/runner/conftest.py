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
figure:
  paper: test
  name: noise
  recipe: recipes_for_tests:NoiseFigure
params:
  n_units: 4
  draws: 1000
  sleep_s: 0.0
  tag: a
  stand_in_from: -1
profiles:
  tiny: {draws: 100}
"""


@pytest.fixture
def conf_root(tmp_path: Path) -> Path:
    """A copy of conf/ with ``experiment=test/noise`` added."""
    root = tmp_path / "conf"
    shutil.copytree(REPO / "conf", root)
    (root / "experiment" / "test").mkdir()
    (root / "experiment" / "test" / "noise.yaml").write_text(NOISE_EXPERIMENT)
    return root
