"""Shared pieces of the cl cosine-classifier figures: feature parameters, privacy levels, the
per-unit load, and the median-with-min/max markers of the paper's plots."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.continual.benchmarks import FEATURE_SOURCES, FeatureSpec, load_benchmark
from privrepro.continual.features import DEFAULT_BACKBONE
from privrepro.continual.scenarios import ContinualData
from privrepro.figures.api import UnitContext, param

__all__ = [
    "NON_DP",
    "FeatureParams",
    "load_features",
    "median_min_max",
    "privacy_label",
    "privacy_levels",
]

NON_DP = "non-DP"


@dataclass
class FeatureParams:
    """Where the features come from (``paper``: the real images through the backbone)."""

    source: str = param(
        "synthetic",
        choices=FEATURE_SOURCES,
        doc="backbone (real images, cached ViT features), synthetic (clustered "
        "stand-in features) or tiny-vit (random small ViT on generated images)",
    )
    backbone: str = param(
        DEFAULT_BACKBONE,
        doc="timm id of the frozen backbone",
        assumed="the paper names the google-research ViT-B/16 in21k weights, "
        "not a timm id; augreg_in21k (orig_in21k is the alternative)",
    )
    weights: str | None = param(None, doc="local weights file of the backbone (None: timm hub)")
    download: bool = param(False, doc="let torchvision download missing datasets")
    verify_checksums: bool = param(True, doc="check torchvision's MD5 of dataset files")
    batch_size: int = param(64, ge=1, doc="feature-extraction batch size")
    imagenet_r_split_seed: int = param(
        0,
        ge=0,
        doc="seed of ImageNet-R's 80/20 split",
        assumed="one global random 80/20 split; the paper does "
        "not say whether it is redrawn per seed",
    )
    synthetic_seed: int = param(0, ge=0, doc="seed of the synthetic feature space")
    synthetic_dim: int = param(768, ge=2, doc="dimension of synthetic features (ViT-B: 768)")
    tiny_per_class: int = param(4, ge=1, doc="images per class for the tiny-vit source")

    def spec(self) -> FeatureSpec:
        return FeatureSpec(
            source=self.source,
            backbone=self.backbone,
            weights=self.weights,
            download=self.download,
            verify_checksums=self.verify_checksums,
            batch_size=self.batch_size,
            imagenet_r_split_seed=self.imagenet_r_split_seed,
            synthetic_dim=self.synthetic_dim,
            synthetic_seed=self.synthetic_seed,
            tiny_per_class=self.tiny_per_class,
        )


def features_from_unit(unit: dict[str, Any]) -> FeatureParams:
    return FeatureParams(**unit["features"])


def load_features(
    benchmark: str, features: dict[str, Any], ctx: UnitContext
) -> tuple[ContinualData, dict[str, Any]]:
    """The benchmark's features for one unit (cached on disk or memoised in the process)."""
    fp = FeatureParams(**features)
    return load_benchmark(
        benchmark,
        fp.spec(),
        ctx.data_dir,
        ctx.cache_dir,
        ctx.device,
        progress=lambda it, desc, total: ctx.progress(it, desc, total),
    )


def privacy_levels(epsilons: list[float], non_dp: bool) -> list[float | None]:
    """The ε grid, with ``None`` for the non-private run when ``non_dp``."""
    levels: list[float | None] = [float(e) for e in epsilons]
    return [*levels, None] if non_dp else levels


def privacy_label(epsilon: float | None) -> str:
    """``"non-DP"`` or ``"ε=1"``-style text without the Greek letter (``"1"``, ``"8"``)."""
    if epsilon is None or (isinstance(epsilon, float) and math.isnan(epsilon)):
        return NON_DP
    return f"{epsilon:g}"


def median_min_max(table: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Median, min and max of ``value`` over repeats for each group (the paper's markers)."""
    g = table.groupby(by, sort=False)[value]
    out = pd.DataFrame(
        {
            "median": g.median(),
            "min": g.min(),
            "max": g.max(),
            "mean": g.mean(),
            "std": g.std(ddof=1),
            "n": g.count(),
        }
    )
    return out.reset_index()


def error_bars(stats: pd.DataFrame) -> np.ndarray:
    """``[[median − min], [max − median]]`` for matplotlib's ``yerr``."""
    return np.vstack([stats["median"] - stats["min"], stats["max"] - stats["median"]])


def plot_task_curves(ax: Any, table: pd.DataFrame, order: list[str], value: str) -> None:
    """Median of ``value`` per task with min/max error bars, one series per privacy label."""
    for j, p in enumerate(order):
        s = median_min_max(table[table["privacy"] == p], ["task"], value).dropna(subset=["median"])
        if s.empty:
            continue
        ax.errorbar(
            s["task"] + 0.08 * (j - 1),
            s["median"],
            yerr=error_bars(s),
            marker="o",
            ms=3,
            capsize=2,
            color=f"C{j}",
            label=p if p == "non-DP" else f"ε={p}",
        )
    ax.set_xlabel("task t")
