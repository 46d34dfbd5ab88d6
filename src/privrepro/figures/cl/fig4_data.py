"""cl Fig. 4 (left): the data per task of Split-CIFAR-100 in each blurry setting.

The split depends only on the labels, and CIFAR-100's training labels are 500 per class; the
figure therefore uses that label layout directly (no images or features needed). Each task's
samples are counted by kind: disjoint classes, blurry classes at home, and blurred samples
(blurry-class samples dealt to the task from the pool, cl Sec. 7.2 / Koh et al. 2022).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from privrepro.continual.blurry import BLURRY_KINDS, BLURRY_NAMES, blurry_split, task_composition
from privrepro.data.provenance import DataSource
from privrepro.figures.api import Figure, MemoryEstimate, UnitContext, grid_units, param
from privrepro.plotting.style import new_figure

__all__ = ["BlurryData", "BlurryDataParams"]

#: the summary's metrics: (name, column, aggregate, type)
_SUMMARY = (
    ("task_size_min", "samples", "min", int),
    ("task_size_max", "samples", "max", int),
    ("blurred_outside_home", "blurred_in_samples", "sum", int),
    ("classes_per_task_mean", "classes", "mean", float),
)


@dataclass
class BlurryDataParams:
    """The blurry settings drawn and their parameters (as in Fig. 4's right panel)."""

    settings: list[str] = param(list(BLURRY_KINDS), choices=BLURRY_KINDS, unique=True)
    nb_tasks: int = param(5, ge=2, le=100, assumed="T not stated; Table A4 vs A5 suggests 5")
    disjoint_pct: float = param(50.0, ge=0, le=100, assumed="N not stated; blurry papers' 50")
    blurry_pct: float = param(10.0, ge=0, le=100, assumed="M not stated; blurry papers' 10")
    num_classes: int = param(100, ge=2, doc="classes of the label layout (CIFAR-100: 100)")
    per_class: int = param(500, ge=1, doc="training samples per class (CIFAR-100: 500)")

    def check(self, prefix: str) -> None:
        """Every task gets at least one class of its own."""
        from privrepro.config.validation import ConfigError

        if self.num_classes < self.nb_tasks:
            raise ConfigError(
                f"{prefix}.num_classes",
                self.num_classes,
                f"must be at least {prefix}.nb_tasks = {self.nb_tasks}",
            )


class BlurryData(Figure[BlurryDataParams]):
    """Samples and classes per task under Not/i/Si-Blurry splits of CIFAR-100's labels."""

    title = "cl Fig. 4 (left) — data per task of Split-CIFAR-100 in each blurry setting"

    def data_source(self, unit: Mapping[str, Any], data_dir: Path) -> DataSource:
        layout = f"{unit['num_classes']} classes × {unit['per_class']} labels"
        if (unit["num_classes"], unit["per_class"]) == (100, 500):
            return DataSource(f"CIFAR-100's training-label layout ({layout})")
        return DataSource(f"a label layout of {layout}", stand_in_for="CIFAR-100's 100 × 500")

    def units(self, params: BlurryDataParams) -> list[dict[str, Any]]:
        keys = ("nb_tasks", "disjoint_pct", "blurry_pct", "num_classes", "per_class")
        return grid_units({k: getattr(params, k) for k in keys}, setting=params.settings)

    def estimate_memory(self, params: BlurryDataParams) -> MemoryEstimate:
        """About eight int64 or boolean arrays over the num_classes × per_class samples."""
        n = params.num_classes * params.per_class
        return MemoryEstimate(64 * n, "params.per_class", params.per_class, f"{n} samples × 64 B")

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        c, T = unit["num_classes"], unit["nb_tasks"]
        y = ctx.rng("order").permutation(np.repeat(np.arange(c), unit["per_class"]))
        n, m = unit["disjoint_pct"], unit["blurry_pct"]
        split = blurry_split(unit["setting"], y, c, T, ctx.rng("split"), n, m)
        tail = {"nb_tasks": T, "disjoint_pct": n, "blurry_pct": m}
        return pd.DataFrame(
            [{"setting": unit["setting"], **row, **tail} for row in task_composition(split, y)]
        )

    def summarize(self, table: pd.DataFrame, params: BlurryDataParams) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {"metric": name, "setting": s, "value": kind(g[col].agg(how))}
                for s, g in table.groupby("setting")
                for name, col, how, kind in _SUMMARY
            ]
        )

    def plot(self, table: pd.DataFrame, params: BlurryDataParams) -> Any:
        settings = [s for s in BLURRY_KINDS if s in set(table["setting"])]
        fig, axes = new_figure(1, len(settings), width=3.4, height=3.2, squeeze=False, sharey=True)
        parts = [
            ("disjoint_samples", "disjoint classes"),
            ("blurry_home_samples", "blurry classes (home)"),
            ("blurred_in_samples", "blurred samples from other tasks"),
        ]
        for ax, s in zip(axes[0], settings, strict=True):
            g = table[table["setting"] == s].sort_values("task")
            bottom = np.zeros(len(g))
            for j, (col, label) in enumerate(parts):
                ax.bar(g["task"], g[col], bottom=bottom, color=f"C{j}", label=label)
                bottom += g[col].to_numpy()
            for x, n, k in zip(g["task"], g["samples"], g["classes"], strict=True):
                ax.text(x, n, f"{k} cl.", ha="center", va="bottom", fontsize=7)
            ax.set_title(BLURRY_NAMES[s])
            ax.set_xlabel("task")
            ax.set_xticks(g["task"])
        axes[0][0].set_ylabel("training samples")
        handles, labels = axes[0][0].get_legend_handles_labels()  # below the panels, off the bars
        fig.legend(handles, labels, loc="outside lower center", ncol=3, frameon=False, fontsize=8)
        fig.suptitle(
            f"Split-CIFAR-100 data per task (T={params.nb_tasks}, "
            f"N={params.disjoint_pct:g}, M={params.blurry_pct:g}); "
            "label above a bar: distinct classes",
            fontsize=9,
        )
        return fig
