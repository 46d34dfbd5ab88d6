"""What the cl recipes share: the cosine figures' feature parameters and privacy levels, the
PEFT figures' unit settings and run, summary rows, and the paper's plotting rule (median over
repeats with min/max error bars)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.continual.benchmarks import FEATURE_SOURCES, FeatureSpec, load_benchmark
from privrepro.continual.features import DEFAULT_BACKBONE
from privrepro.continual.peft import (
    FeatureSettings,
    FilmSettings,
    PeftOutput,
    PeftRun,
    TrainSettings,
    TuningSettings,
    eps_label,
    run_peft,
)
from privrepro.continual.scenarios import ContinualData
from privrepro.continual.tables import final_metrics, median_min_max
from privrepro.figures.api import UnitContext, param
from privrepro.plotting.style import new_figure

__all__ = [
    "NON_DP",
    "FeatureParams",
    "cosine_inputs",
    "feature_columns",
    "in_order",
    "load_features",
    "mean_std_rows",
    "median_errorbar",
    "peft_settings",
    "plot_final",
    "plot_task_curves",
    "privacy_label",
    "privacy_levels",
    "run_peft_unit",
    "summarize_final",
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
        return FeatureSpec(**vars(self))


# --------------------------------------------------------------------------- cosine figures


def cosine_inputs(unit: dict[str, Any], ctx: UnitContext) -> dict[str, Any]:
    """The keyword arguments of :func:`~privrepro.continual.run_cosine_benchmark` that come from
    a unit's ``features`` and its context (data, cache, device, progress)."""
    return {
        "features": FeatureParams(**unit["features"]).spec(),
        "data_dir": ctx.data_dir,
        "cache_dir": ctx.cache_dir,
        "device": ctx.device,
        "progress": ctx.progress,
    }


def load_features(
    benchmark: str, unit: dict[str, Any], ctx: UnitContext
) -> tuple[ContinualData, dict[str, Any]]:
    """The benchmark's features for one unit (cached on disk or memoised in the process)."""
    kw = cosine_inputs(unit, ctx)
    return load_benchmark(
        benchmark, kw["features"], ctx.data_dir, ctx.cache_dir, ctx.device, kw["progress"]
    )


def feature_columns(meta: dict[str, Any]) -> dict[str, Any]:
    """The provenance columns of a row: feature source and backbone."""
    return {"feature_source": meta["feature_source"], "backbone": meta["backbone"]}


def privacy_levels(epsilons: list[float], non_dp: bool) -> list[float | None]:
    """The ε grid, with ``None`` for the non-private run when ``non_dp``."""
    levels: list[float | None] = [float(e) for e in epsilons]
    return [*levels, None] if non_dp else levels


def privacy_label(epsilon: float | None) -> str:
    """``"non-DP"`` or ``"ε=1"``-style text without the Greek letter (``"1"``, ``"8"``)."""
    if epsilon is None or (isinstance(epsilon, float) and math.isnan(epsilon)):
        return NON_DP
    return f"{epsilon:g}"


def mean_std_rows(table: pd.DataFrame, by: list[str], value: str, name: str) -> list[dict]:
    """Summary rows ``<name>_mean`` and ``<name>_std`` of ``value`` over repeats, per group."""
    rows = []
    for _, r in median_min_max(table, by, value).iterrows():
        base = {k: r[k] for k in by}
        rows.append({"metric": f"{name}_mean", **base, "value": r["mean"]})
        rows.append({"metric": f"{name}_std", **base, "value": r["std"]})
    return rows


# --------------------------------------------------------------------------- plots


def in_order(stats: pd.DataFrame, key: str, order: list[Any]) -> pd.DataFrame:
    """The rows of ``stats`` in ``order`` of ``key`` (absent ones left out)."""
    s = stats.set_index(key).reindex([o for o in order if o in set(stats[key])])
    return s.reset_index()


def median_errorbar(ax: Any, x: Any, stats: pd.DataFrame, **kw: Any) -> None:
    """The paper's markers: the median with min/max error bars."""
    yerr = np.vstack([stats["median"] - stats["min"], stats["max"] - stats["median"]])
    ax.errorbar(x, stats["median"], yerr=yerr, **{"fmt": "o", "capsize": 3, **kw})


def plot_task_curves(ax: Any, table: pd.DataFrame, order: list[str], value: str) -> None:
    """Median of ``value`` per task with min/max error bars, one series per privacy label."""
    for j, p in enumerate(order):
        s = median_min_max(table[table["privacy"] == p], ["task"], value).dropna(subset=["median"])
        if s.empty:
            continue
        label = p if p == NON_DP else f"ε={p}"
        x = s["task"] + 0.08 * (j - 1)
        median_errorbar(ax, x, s, fmt="-o", ms=3, capsize=2, color=f"C{j}", label=label)
    ax.set_xlabel("task t")


# --------------------------------------------------------------------------- PEFT figures


def peft_settings(p: Any) -> dict[str, Any]:
    """The four settings groups every PEFT run unit carries, as plain dicts (hashable config)."""
    return {
        "features": vars(p.features),
        "film": vars(p.film),
        "train": vars(p.train),
        "tuning": vars(p.tuning),
    }


def run_peft_unit(unit: dict[str, Any], ctx: UnitContext) -> PeftOutput:
    """:func:`~privrepro.continual.peft.run_peft` on a unit built with :func:`peft_settings`,
    with the unit's seeded DP-SGD stream, device, paths and progress."""
    return run_peft(
        PeftRun.from_unit(unit),
        FeatureSettings(**unit["features"]),
        FilmSettings(**unit["film"]),
        TrainSettings(**unit["train"]),
        TuningSettings(**unit["tuning"]),
        seed=ctx.seed,
        device=ctx.device,
        data_dir=ctx.data_dir,
        cache_dir=ctx.cache_dir,
        study_tag=ctx.profile,
        generator=ctx.torch_generator("dpsgd"),
        progress=ctx.progress,
    )


def summarize_final(table: pd.DataFrame, keys: list[str], rule: str = "argmax") -> pd.DataFrame:
    """``final_<AA|AF>_<stat>`` rows over repeats per ``keys`` group (:func:`final_metrics`)."""
    out = []
    for metric in ("AA", "AF"):
        f = final_metrics(table, keys, metric, rule)
        for _, r in f.iterrows():
            for stat in ("mean", "std", "median", "min", "max"):
                out.append(
                    {
                        "metric": f"final_{metric}_{stat}",
                        **{k: r[k] for k in keys},
                        "value": r[stat],
                        "repeats": int(r["count"]),
                    }
                )
    return pd.DataFrame(out)


def plot_final(
    table: pd.DataFrame, panels: list[str], series: str, panel_key: str = "benchmark"
) -> Any:
    """Median final AA over repeats with min/max error bars per privacy level, one panel per
    ``panel_key`` value and one series per ``series`` value (the paper's plotting rule)."""
    fig, axes = new_figure(1, len(panels), width=4.6, height=3.4, squeeze=False)
    order = [eps_label(e) for e in (1.0, 8.0, None)]
    for ax, panel in zip(axes[0], panels, strict=False):
        f = final_metrics(table[table[panel_key] == panel], [series, "eps_label"])
        names = list(dict.fromkeys(f[series])) if len(f) else []
        for k, name in enumerate(names):
            g = in_order(f[f[series] == name], "eps_label", order)
            x = np.arange(len(g)) + (k - (len(names) - 1) / 2) * 0.08
            median_errorbar(ax, x, g, label=str(name))
            ax.set_xticks(np.arange(len(g)), list(g["eps_label"]))
        ax.set_title(str(panel))
        ax.set_ylabel("final average accuracy (%)")
        ax.legend(fontsize=7)
    return fig
