"""Small recipes used by the runner tests (importable once tests/runner is on sys.path)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.figures.api import Figure, UnitContext, param
from privrepro.plotting.style import new_figure

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


@dataclass
class NoiseParams:
    n_units: int = param(4, ge=1)
    draws: int = param(1000, ge=1)
    sleep_s: float = param(0.0, ge=0)
    tag: str = param("a")


class NoiseFigure(Figure[NoiseParams]):
    """Each unit draws Gaussian noise from its own stream (and may sleep, to be killed)."""

    params_type = NoiseParams
    title = "test: seeded noise per unit"

    def units(self, params: NoiseParams) -> list[dict[str, Any]]:
        return [
            {"i": i, "draws": params.draws, "sleep_s": params.sleep_s, "tag": params.tag}
            for i in range(params.n_units)
        ]

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        marker = os.environ.get("PRIVREPRO_TEST_MARKER")
        if marker:  # record each computation, to count recomputations
            with open(marker, "a") as fh:
                fh.write(f"{unit['tag']}-{unit['i']}\n")
        time.sleep(unit["sleep_s"])
        x = ctx.rng("noise").normal(size=unit["draws"])
        return pd.DataFrame({"i": unit["i"], "tag": unit["tag"], "j": np.arange(len(x)), "x": x})

    def plot(self, table: pd.DataFrame, params: NoiseParams) -> Any:
        fig, ax = new_figure()
        ax.hist(table["x"], bins=30)
        ax.set_xlabel("x")
        return fig
