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

from recipes_for_tests import NOISE_EXPERIMENT, NOISE_TINY  # noqa: E402


def make_conf_root(root: Path) -> Path:
    """A copy of conf/ at ``root`` with ``experiment=test/noise`` added (and its tiny profile)."""
    shutil.copytree(REPO / "conf", root)
    (root / "experiment" / "test").mkdir()
    (root / "experiment" / "test" / "noise.yaml").write_text(NOISE_EXPERIMENT)
    (root / "params" / "test" / "noise").mkdir(parents=True)
    (root / "params" / "test" / "noise" / "tiny.yaml").write_text(NOISE_TINY)
    return root


@pytest.fixture
def conf_root(tmp_path: Path) -> Path:
    """A copy of conf/ with ``experiment=test/noise`` added."""
    return make_conf_root(tmp_path / "conf")


@pytest.fixture(scope="module")
def module_conf_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same config root, shared by the tests of one module."""
    return make_conf_root(tmp_path_factory.mktemp("conf") / "conf")
