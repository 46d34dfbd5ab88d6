"""Small recipes used by the runner tests (importable once tests/runner is on sys.path)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privrepro.data.provenance import DataSource
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


def scratch_paths(tmp: Path, *extra: str) -> list[str]:
    """Overrides that keep a run's store, results and plots under ``tmp``, bars off, plus ``extra``."""
    return [
        f"paths.experiments_dir={tmp / 'exp'}",
        f"paths.results_dir={tmp / 'res'}",
        f"paths.plots_dir={tmp / 'plots'}",
        "progress=false",
        *extra,
    ]


@dataclass
class NoiseParams:
    n_units: int = param(4, ge=1)
    draws: int = param(1000, ge=1)
    sleep_s: float = param(0.0, ge=0)
    tag: str = param("a")
    stand_in_from: int = param(-1, doc="units i >= this run on stand-in data (-1: none)")


class NoiseFigure(Figure[NoiseParams]):
    """Each unit draws Gaussian noise from its own stream (and may sleep, to be killed)."""

    params_type = NoiseParams
    title = "test: seeded noise per unit"

    def units(self, params: NoiseParams) -> list[dict[str, Any]]:
        return [
            {
                "i": i,
                "draws": params.draws,
                "sleep_s": params.sleep_s,
                "tag": params.tag,
                # only present when asked for, so the other tests' unit hashes stay as they were
                **({"stand_in": True} if 0 <= params.stand_in_from <= i else {}),
            }
            for i in range(params.n_units)
        ]

    def data_source(self, unit: Mapping[str, Any], data_dir: Path) -> DataSource:
        if unit.get("stand_in"):
            return DataSource("seeded normal draws", stand_in_for="the test's dataset")
        return DataSource("seeded normal draws")

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


SUMMARY_EXPERIMENT = """# @package _global_
# test — seeded noise per unit, summarised
defaults:
  - /recipe: recipes_for_tests:SummaryNoiseFigure
  - _self_
figure:
  paper: test
  name: summary
"""


class SummaryNoiseFigure(NoiseFigure):
    """:class:`NoiseFigure` with a summary the report scores: each unit's mean draw."""

    title = "test: seeded noise per unit, summarised"

    def summarize(self, table: pd.DataFrame, params: NoiseParams) -> pd.DataFrame | None:
        means = table.groupby("i", as_index=False)["x"].mean()
        return pd.DataFrame({"metric": "mean_x", "i": means["i"], "value": means["x"]})
