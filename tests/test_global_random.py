"""Practice 2 (randomness injected, never global): the library leaves Python's global ``random``
stream as it found it, also where a library it imports draws from that stream when first
imported (rich, which scikit-learn imports when installed). Each case in a fresh interpreter, so
the import happens inside the call; the benchmark harness reports such a change as a leak."""

from __future__ import annotations

import subprocess
import sys

import pytest

_SCENARIO = (
    "import numpy as np\n"
    "from privrepro.continual.scenarios import ContinualData, split_cifar100\n"
    "y = np.repeat(np.arange(100), 2)\n"
    "d = ContinualData('labels', np.zeros((200, 1)), y, np.zeros((200, 1)), y, 100)\n"
    "call = lambda: split_cifar100(d, np.random.default_rng(0))\n"
)
_DIGITS = "from privrepro.data.digits import load_digits\ncall = load_digits\n"


@pytest.mark.parametrize(
    ("setup", "imported"),
    [(_SCENARIO, "continuum.datasets"), (_DIGITS, "sklearn.datasets")],
    ids=["continuum scenario", "digits"],
)
def test_the_global_random_state_is_left_as_it_was(setup: str, imported: str) -> None:
    code = (
        "import random, sys\n"
        f"{setup}"
        f"assert {imported!r} not in sys.modules\n"
        "random.seed(0); before = random.getstate()\n"
        "call()\n"
        f"assert {imported!r} in sys.modules\n"
        "assert random.getstate() == before, 'the global random state changed'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
