"""pac Example 2 (Sec. 5): local publishing of one image, PAC noise against local DP.

``M(x) = x`` for ``x`` uniform over the pool (CIFAR-10's 60,000 images in [0, 1]^3072 in the
paper). PAC: Algorithm 1 (with ``M`` = identity) or Theorem 3 on the covariance, ``E||B|| <=
sum_j sqrt(lambda_j) / sqrt(2v)`` — the paper prints ``1.6 × 10^2``. Local DP (footnote 5, zCDP,
l_inf bound 1 per pixel): ``E||B|| ~ d / sqrt(2v)`` = 2,172.2 (printed ``2.2 × 10^3``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privrepro.figures.api import Figure, MemoryEstimate, UnitContext, param
from privrepro.figures.pac._memory import POOL_LOADING, algorithm1_bytes, largest, pool_shape
from privrepro.figures.pac._rows import DATA_LABELS, algorithm1_rows, clean_log_axis, exact_rows
from privrepro.pac.algorithms import algorithm1_from_samples
from privrepro.pac.gaussian import dp_local_noise_norm
from privrepro.pac.mechanisms import local_publishing_samples, local_publishing_spectrum
from privrepro.pac.pools import load_pool
from privrepro.plotting.style import new_figure

__all__ = ["Example2", "Example2Params", "NoiseTableMixin"]

PAPER = {"pac_theorem3_exact": 160.0, "dp_local": 2200.0}


@dataclass
class Example2Params:
    """Data, MI target and Algorithm 1's parameters."""

    dataset: str = param(
        "cifar10",
        choices=["cifar10", "digits", "synthetic_images"],
        doc="the pool U (smoke: digits stands in for CIFAR-10)",
    )
    splits: str = param(
        "all", choices=["all", "train", "test"], doc="all = train + test (CIFAR-10's 60,000 images)"
    )
    v: float = param(1.0, gt=0, doc="MI target (nats)")
    m: int = param(
        20_000,
        ge=2,
        doc="Algorithm 1's Monte-Carlo samples",
        assumed="m is not stated in the paper",
    )
    c: float = param(1e-6, gt=0, doc="Algorithm 1's safety floor c", assumed="not stated")
    beta: float = param(0.1, gt=0, doc="Theorem 4's slack β", assumed="not stated")
    linf: float = param(1.0, gt=0, doc="per-coordinate bound of the DP baseline (pixels in [0,1])")


class NoiseTableMixin:
    """Plot and summary shared by the noise tables of Examples 2 and 3."""

    def summarize(self, table: pd.DataFrame, params: Any) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {"metric": f"noise_norm_{r['method']}", "value": r["noise_norm"]}
                for _, r in table.iterrows()
            ]
            + [
                {
                    "metric": "dp_over_pac_theorem3_exact",
                    "value": float(
                        table.loc[table["method"] == "pac_theorem3_exact", "dp_over_pac"].iloc[0]
                    ),
                }
            ]
        )

    def plot(self, table: pd.DataFrame, params: Any) -> Any:
        fig, ax = new_figure(width=6.0, height=3.4)
        t = table.reset_index(drop=True)
        # a dot per method (bars would mislead on a log axis), its value printed beside it
        y = np.arange(len(t))
        ax.scatter(t["noise_norm"], y, color=[f"C{i}" for i in range(len(t))], s=40, zorder=4)
        for yi, val in zip(y, t["noise_norm"], strict=True):
            ax.annotate(
                f"{val:.3g}",
                (val, yi),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
        ax.set_yticks(y, t["method"])
        has = t["paper_value"].notna() if "paper_value" in t else pd.Series(False, index=t.index)
        if has.any():
            ax.scatter(
                t.loc[has, "paper_value"],
                y[has.to_numpy()],
                marker="x",
                color="k",
                zorder=5,
                label="paper",
            )
            ax.legend(frameon=False)
        ax.margins(x=0.25)
        clean_log_axis(ax, "x")
        ax.set_xlabel("E‖B‖₂ (upper bound √Tr Σ_B) for MI ≤ v")
        ax.set_title(f"{getattr(self, 'title', '')}\n{t['data'].iloc[0]}", fontsize=9)
        return fig


class Example2(NoiseTableMixin, Figure[Example2Params]):
    """Local publishing: Algorithm 1 / Theorem 3 noise vs the local-DP Gaussian mechanism."""

    params_type = Example2Params
    title = "pac Example 2 — local publishing: PAC noise vs local DP"
    kind = "table"

    def units(self, params: Example2Params) -> list[dict[str, Any]]:
        return [
            {
                "dataset": params.dataset,
                "splits": params.splits,
                "v": params.v,
                "m": params.m,
                "c": params.c,
                "beta": params.beta,
                "linf": params.linf,
            }
        ]

    def estimate_memory(self, params: Example2Params) -> MemoryEstimate:
        """The float32 pool and its d × d Gram matrix, and Algorithm 1 on m samples."""
        n, d = pool_shape(params.dataset, params.splits)
        return largest(
            {
                "params.dataset": (POOL_LOADING + 4 * n * d + 8 * 3 * d * d, params.dataset),
                "params.m": (algorithm1_bytes(params.m, d), params.m),
            },
            f"pool {n} × {d} × 4 B + d² × 24 B + Algorithm 1 on m × d",
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        pool = load_pool(unit["dataset"], ctx.data_dir, unit["splits"], seed=ctx.seed)
        d, v = pool.dim, unit["v"]
        dp = dp_local_noise_norm(d, v, unit["linf"])
        samples = local_publishing_samples(pool.x, unit["m"], ctx.rng("data"))
        res = algorithm1_from_samples(
            samples, v, unit["beta"], unit["c"], r=unit["linf"] * np.sqrt(d)
        )
        rows = algorithm1_rows(res, dp) + exact_rows(local_publishing_spectrum(pool.x), v, dp)
        rows.append({"method": "dp_local", "noise_norm": dp, "dp_over_pac": 1.0})
        out = pd.DataFrame(rows)
        # the paper's numbers are for CIFAR-10; a stand-in pool gets none
        out["paper_value"] = out["method"].map(PAPER) if unit["dataset"] == "cifar10" else np.nan
        out.insert(0, "data", f"{DATA_LABELS[unit['dataset']]}: {pool.size} × {d}")
        out["v"] = v
        return out
