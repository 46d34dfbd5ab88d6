"""pac Example 4 (Sec. 6): PAC noise for deep learning on MNIST, and the accuracy it costs.

The mechanism ``M`` trains an MLP 784-30-30-10 (ReLU, cross-entropy) by full-batch gradient
descent, 1,500 steps at step size 0.05, on ``X`` = a random 35,000 of MNIST's 70,000 images, and
outputs the final weights (d = 24,790). It is deterministic (a fixed initialisation, assumed).
Algorithm 1 runs ``m`` such trainings — batched (:func:`privrepro.pac.training.train_batched`) —
and calibrates ``B``; the released model is ``M(X*) + B`` for one more draw ``X*``, scored on the
pool images not in ``X*`` (assumed). The paper prints ``E||B|| = 3.7`` for ``MI <= 1`` and
accuracies 94.8% (no noise) / 93.5% (with noise). Rows: :func:`privrepro.pac.private.make_private`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from privrepro.data.provenance import DataSource, registry_source
from privrepro.figures.api import Figure, MemoryEstimate, UnitContext, param
from privrepro.figures.pac._memory import POOL_LOADING, algorithm1_bytes, largest, pool_shape
from privrepro.figures.pac.common import DATA_LABELS, pool_param
from privrepro.pac import plots
from privrepro.pac.pools import load_pool
from privrepro.pac.private import make_private, mlp_mechanism
from privrepro.pac.training import MLPSpec, init_mlp

__all__ = ["Example4", "Example4Params"]

PAPER = {"noise_norm": 3.7, "accuracy_clean": 0.948, "accuracy_noisy": 0.935}


@dataclass
class Example4Params:
    """The data, the network, the GD schedule and Algorithm 1's parameters."""

    dataset: str = pool_param("mnist", "the pool (smoke: scikit-learn digits)")
    splits: str = param(
        "all", choices=["all", "train", "test"], doc="all = train + test (MNIST's 70,000)"
    )
    subset_fraction: float = param(0.5, gt=0, le=1, doc="|X| / pool size (35,000 of 70,000)")
    hidden: list[int] = param(
        [30, 30], ge=1, min_len=0, doc="hidden widths (paper 30, 30; [] = a linear model)"
    )
    steps: int = param(1500, ge=1, doc="full-batch GD iterations (paper 1,500)")
    lr: float = param(0.05, gt=0, doc="GD step size (paper 0.05)")
    m: int = param(1000, ge=2, doc="Algorithm 1's trainings", assumed="m is not stated")
    vs: list[float] = param([1.0], gt=0, doc="MI budgets (nats); the paper's is 1", unique=True)
    c: float = param(
        1e-12,
        gt=0,
        doc="Algorithm 1's safety floor c",
        assumed="not stated; small so that the floor 24cv/β stays below λ̂",
    )
    beta: float = param(0.1, gt=0, doc="Theorem 4's slack β", assumed="not stated")
    noise_draws: int = param(
        20,
        ge=1,
        doc="noise draws the noisy accuracy is averaged over",
        assumed="the paper does not say how the 93.5% was averaged",
    )
    chunk: int = param(32, ge=1, doc="models trained at once (memory)")
    data_mode: str = param(
        "wide",
        choices=["wide", "gather", "mask"],
        doc="batched layout: wide = one wide model over the shared pool (train_batched)",
    )


class Example4(Figure[Example4Params]):
    """Accuracy of the trained MLP without and with the calibrated noise; E||B||."""

    title = "pac Example 4 — MLP by full-batch GD: Algorithm 1 noise and accuracy"
    kind = "table"
    version = 2
    """2: the batched trainer takes closed-form steps (no autograd); in float32 over hundreds of
    steps its rounding differs from version 1's, so stored units of version 1 are recomputed."""

    def data_source(self, unit: Mapping[str, Any], data_dir: Path) -> DataSource:
        return registry_source(unit["dataset"], data_dir, "MNIST")

    def units(self, params: Example4Params) -> list[dict[str, Any]]:
        return [asdict(params)]

    def estimate_memory(self, params: Example4Params) -> MemoryEstimate:
        """The float32 pool; one chunk of models' data and activations (float32); the m
        subsets (int64), the m trained parameter vectors and Algorithm 1 on them."""
        n_pool, d = pool_shape(params.dataset, params.splits)
        n = max(1, round(params.subset_fraction * n_pool))
        sizes = [d, *params.hidden, 10]
        n_params = sum((a + 1) * b for a, b in itertools.pairwise(sizes))
        width = 2 * sum(params.hidden) + 3 * 10
        if params.data_mode == "gather":
            batch = 4 * params.chunk * n * (d + width)
        elif params.data_mode == "wide":  # layer 1's output and gradient over the pool
            batch = 4 * params.chunk * (2 * n_pool * params.hidden[0] + n * width)
        else:
            batch = 4 * params.chunk * n_pool * (width + 1)
        m = params.m + 1
        return largest(
            {
                "params.dataset": (POOL_LOADING + 4 * n_pool * d, params.dataset),
                "params.chunk": (batch, params.chunk),
                "params.m": (
                    8 * m * n + 4 * m * n_params + algorithm1_bytes(m, n_params),
                    params.m,
                ),
            },
            f"a chunk of {params.chunk} models on {n} of {n_pool} × {d} inputs "
            f"({params.data_mode}); m × {n_params} parameters",
        )

    def compute(self, unit: dict[str, Any], ctx: UnitContext) -> pd.DataFrame:
        pool = load_pool(unit["dataset"], ctx.data_dir, unit["splits"], seed=ctx.seed)
        dev = torch.device(ctx.device)
        x, y = torch.as_tensor(pool.x, device=dev), torch.as_tensor(pool.y, device=dev)
        spec = MLPSpec((pool.dim, *unit["hidden"], int(pool.y.max()) + 1))
        init = init_mlp(spec, ctx.torch_generator("init", device="cpu"), device=dev)
        schedule = {k: unit[k] for k in ("steps", "lr", "chunk")}
        train, accuracy = mlp_mechanism(
            spec, init, x, y, mode=unit["data_mode"], loops=ctx.loops, **schedule
        )
        n_sub = max(1, round(unit["subset_fraction"] * pool.size))
        rngs = ctx.rng("data"), ctx.rng("noise")
        calibration = {"beta": unit["beta"], "c": unit["c"], "noise_draws": unit["noise_draws"]}
        private = make_private(
            train, accuracy, pool.size, n_sub, unit["m"], unit["vs"], *rngs, **calibration
        )
        setting = {
            "pool": f"{DATA_LABELS[unit['dataset']]}: {pool.size} × {pool.dim}",
            "architecture": "-".join(map(str, spec.sizes)),
            "n_params": spec.n_params,
            "subset_size": n_sub,
            "steps": unit["steps"],
            "lr": unit["lr"],
        }
        out = pd.DataFrame([{**setting, **row} for row in private.rows])
        for k, val in PAPER.items():
            out[f"paper_{k}"] = val if unit["dataset"] == "mnist" else np.nan
        return out

    def summarize(self, table: pd.DataFrame, params: Example4Params) -> pd.DataFrame:
        rows = [
            {"metric": col, "method": r["method"], "v": r["v"], "value": r[col]}
            for _, r in table.iterrows()
            for col in ("noise_norm", "accuracy_noisy_mean")
        ]
        clean = float(table["accuracy_clean"].iloc[0])
        rows.append({"metric": "accuracy_clean", "method": "none", "v": np.nan, "value": clean})
        return pd.DataFrame(rows)

    def plot(self, table: pd.DataFrame, params: Example4Params) -> Any:
        on_mnist = table["paper_accuracy_noisy"].notna().any()
        return plots.private_accuracy(table, PAPER["accuracy_noisy"] if on_mnist else None)
