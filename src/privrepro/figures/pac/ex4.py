"""pac Example 4 (Sec. 6): PAC noise for deep learning on MNIST, and the accuracy it costs.

The mechanism ``M`` trains an MLP 784-30-30-10 (ReLU, cross-entropy) by full-batch gradient
descent, 1,500 steps at step size 0.05, on ``X`` = a random 35,000 of MNIST's 70,000 images, and
outputs the final weights (d = 24,790). It is deterministic (a fixed initialisation, assumed).
Algorithm 1 runs ``m`` such trainings — batched (:func:`privrepro.pac.training.train_batched`) —
and calibrates ``B``; the released model is ``M(X*) + B`` for one more draw ``X*``, scored on the
pool images not in ``X*`` (assumed). The paper prints ``E||B|| = 3.7`` for ``MI <= 1`` and
accuracies 94.8% (no noise) / 93.5% (with noise).

Rows: one per (budget ``v``, noise method): Algorithm 1 as stated (its branch, usually the
isotropic fallback when ``m < d``) and Theorem 3's anisotropic noise on Algorithm 1's estimated
spectrum (``(sum sqrt(lambda_hat))^2 / (2v)``, no floor).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from privrepro.figures.api import Figure, MemoryEstimate, UnitContext, param
from privrepro.figures.pac._memory import POOL_LOADING, algorithm1_bytes, largest, pool_shape
from privrepro.figures.pac._rows import DATA_LABELS, clean_log_axis
from privrepro.pac.algorithms import algorithm1_from_samples
from privrepro.pac.noise import GaussianNoise
from privrepro.pac.pools import load_pool
from privrepro.pac.training import MLPSpec, init_mlp, mlp_accuracy, train_batched
from privrepro.plotting.style import new_figure

__all__ = ["Example4", "Example4Params"]

PAPER = {"noise_norm": 3.7, "accuracy_clean": 0.948, "accuracy_noisy": 0.935}


@dataclass
class Example4Params:
    """The data, the network, the GD schedule and Algorithm 1's parameters."""

    dataset: str = param(
        "mnist",
        choices=["mnist", "digits", "synthetic_images"],
        doc="the pool (smoke: scikit-learn digits)",
    )
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
    data_mode: str = param("gather", choices=["gather", "mask"], doc="batched data layout")


class Example4(Figure[Example4Params]):
    """Accuracy of the trained MLP without and with the calibrated noise; E||B||."""

    params_type = Example4Params
    title = "pac Example 4 — MLP by full-batch GD: Algorithm 1 noise and accuracy"
    kind = "table"

    def units(self, params: Example4Params) -> list[dict[str, Any]]:
        return [
            {
                k: getattr(params, k)
                for k in (
                    "dataset",
                    "splits",
                    "subset_fraction",
                    "hidden",
                    "steps",
                    "lr",
                    "m",
                    "vs",
                    "c",
                    "beta",
                    "noise_draws",
                    "chunk",
                    "data_mode",
                )
            }
        ]

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
        x = torch.as_tensor(pool.x, device=dev)
        y = torch.as_tensor(pool.y, device=dev)
        spec = MLPSpec((pool.dim, *unit["hidden"], int(pool.y.max()) + 1))
        init = init_mlp(spec, ctx.torch_generator("init", device="cpu"), device=dev)
        n_sub = max(1, round(unit["subset_fraction"] * pool.size))
        rng = ctx.rng("data")
        subsets = np.stack(
            [rng.choice(pool.size, n_sub, replace=False) for _ in range(unit["m"] + 1)]
        )
        released, mc = subsets[0], subsets[1:]
        t0 = time.perf_counter()
        outputs = train_batched(
            spec,
            init,
            x,
            y,
            torch.as_tensor(mc, device=dev),
            unit["steps"],
            unit["lr"],
            chunk=unit["chunk"],
            mode=unit["data_mode"],
            progress=lambda it: ctx.progress(it, desc="pac ex4 trainings"),
        )
        train_s = time.perf_counter() - t0
        w_star = train_batched(
            spec,
            init,
            x,
            y,
            torch.as_tensor(released[None], device=dev),
            unit["steps"],
            unit["lr"],
            mode=unit["data_mode"],
        )[0]
        held = np.setdiff1d(np.arange(pool.size), released)
        if held.size == 0:
            held = np.arange(pool.size)  # subset_fraction = 1: score on the pool itself
        xh, yh = x[torch.as_tensor(held, device=dev)], y[torch.as_tensor(held, device=dev)]
        acc_clean = float(mlp_accuracy(spec, w_star, xh, yh))
        # diagnostic: the m Monte-Carlo models on the whole pool (their own X^(k) included)
        acc_mc = mlp_accuracy(spec, outputs, x, y).cpu().numpy()
        samples = outputs.double().cpu().numpy()
        noise_rng = ctx.rng("noise")
        rows = []
        for v in unit["vs"]:
            res = algorithm1_from_samples(samples, v, unit["beta"], unit["c"])
            noises: list[tuple[str, GaussianNoise]] = [
                (f"pac_algorithm1_{res.branch}", res.noise),
                ("pac_theorem3_estimated", res.theorem3_plugin()),
            ]
            for method, noise in noises:
                draws = torch.as_tensor(
                    noise.sample(noise_rng, unit["noise_draws"]), dtype=w_star.dtype, device=dev
                )
                accs = mlp_accuracy(spec, w_star.unsqueeze(0) + draws, xh, yh).cpu().numpy()
                norm_mc, norm_se = noise.expected_norm(noise_rng, 200)
                rows.append(
                    {
                        "data": f"{DATA_LABELS[unit['dataset']]}: {pool.size} × {pool.dim}",
                        "architecture": "-".join(map(str, spec.sizes)),
                        "n_params": spec.n_params,
                        "subset_size": n_sub,
                        "steps": unit["steps"],
                        "lr": unit["lr"],
                        "v": v,
                        "method": method,
                        "noise_norm": noise.expected_norm_upper,
                        "noise_norm_mc": norm_mc,
                        "noise_norm_mc_se": norm_se,
                        "accuracy_clean": acc_clean,
                        "mc_models_pool_accuracy_mean": float(acc_mc.mean()),
                        "mc_models_pool_accuracy_min": float(acc_mc.min()),
                        "accuracy_noisy_mean": float(accs.mean()),
                        "accuracy_noisy_std": float(accs.std(ddof=1)) if accs.size > 1 else 0.0,
                        "eval_size": int(held.size),
                        "train_seconds_per_model": train_s / unit["m"],
                        "device": ctx.device,
                        **{k: val for k, val in res.summary().items() if k not in ("v",)},
                    }
                )
        out = pd.DataFrame(rows)
        for k, val in PAPER.items():
            out[f"paper_{k}"] = val if unit["dataset"] == "mnist" else np.nan
        return out

    def summarize(self, table: pd.DataFrame, params: Example4Params) -> pd.DataFrame:
        rows = []
        for _, r in table.iterrows():
            for col in ("noise_norm", "accuracy_noisy_mean"):
                rows.append({"metric": col, "method": r["method"], "v": r["v"], "value": r[col]})
        rows.append(
            {
                "metric": "accuracy_clean",
                "method": "none",
                "v": np.nan,
                "value": float(table["accuracy_clean"].iloc[0]),
            }
        )
        return pd.DataFrame(rows)

    def plot(self, table: pd.DataFrame, params: Example4Params) -> Any:
        fig, ax = new_figure(width=6.0, height=3.6)
        clean = float(table["accuracy_clean"].iloc[0])
        ax.axhline(clean, color="0.3", lw=1, label=f"no noise ({clean:.1%})")
        for i, (method, sub) in enumerate(table.groupby("method")):
            sub = sub.sort_values("v")
            ax.errorbar(
                sub["v"],
                sub["accuracy_noisy_mean"],
                yerr=sub["accuracy_noisy_std"],
                marker="o",
                ms=4,
                capsize=3,
                color=f"C{i}",
                label=method,
            )
        if table["paper_accuracy_noisy"].notna().any():
            ax.scatter(
                [1.0],
                [PAPER["accuracy_noisy"]],
                marker="x",
                color="k",
                zorder=5,
                label="paper (v = 1)",
            )
        clean_log_axis(ax, "x")
        ax.set_xlabel("MI budget v (nats)")
        ax.set_ylabel("held-out accuracy of M(X*) + B")
        ax.set_title(
            f"pac Ex. 4 — {table['architecture'].iloc[0]}, {table['data'].iloc[0]}", fontsize=9
        )
        ax.legend(frameon=False, fontsize=8)
        return fig
