"""Where the time of DP-SGD on the benchmark's small convnet goes, phase by phase.

    python benchmarks/profile_dpsgd.py [--threads N] [--repeats R]

The setting of ``bench_dpsgd``'s convnet rows (4,096 random 28×28 images, expected batch 512,
8 Poisson steps, physical batch 512, ε = 1). The loop of
:func:`privrepro.training.dpsgd.train_dpsgd` is written out with a clock around each phase, for
opacus' ``GradSampleModule`` and for the project's ``PerSampleClipper``, beside non-private Adam
on the same batches; then the one-time setup, the backward pass taken apart on one 512 batch
(ordinary parameter gradients that opacus computes and discards, the per-sample hooks), and the
cost of splitting Poisson batches above the physical batch. Every figure is CPU seconds of the
process (``resource.getrusage``, user + sys) summed over ``R`` runs, with the 1-minute load
printed beside it: on a shared machine compare the shares, not the seconds.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dpsgd import small_convnet
from privrepro.benchmark_harness import torch_threads
from privrepro.training.dpsgd import (
    DPSGDHyper,
    clip_factors,
    noisy_mean_gradient,
    poisson_batch,
    privacy_record,
    train_dpsgd,
)
from privrepro.training.per_sample import PerSampleClipper


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Clock:
    def __init__(self) -> None:
        self.acc: dict[str, float] = defaultdict(float)

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        c = _cpu()
        yield
        self.acc[name] += _cpu() - c


def _run(
    engine: str, model: nn.Module, x: Any, y: Any, hp: DPSGDHyper, rec: Any, clock: Clock
) -> None:
    """train_dpsgd's loop (physical chunks of 512) with a clock on each phase."""
    from opacus import GradSampleModule

    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=hp.lr)
    gen = torch.Generator().manual_seed(1)
    n, q = x.shape[0], rec.sample_rate
    noise_std = rec.noise_multiplier * hp.clip
    with clock("setup (wrap / hooks, and their removal)"):
        if engine == "opacus":
            wrapped: Any = GradSampleModule(model, batch_first=True, loss_reduction="sum")
        elif engine == "privrepro":
            wrapped = PerSampleClipper(model, params)
    for _ in range(rec.steps):
        with clock("Poisson batch"):
            idx = poisson_batch(n, q, gen)
        sums = [torch.zeros_like(p) for p in params]
        for s in range(0, idx.numel(), 512):
            chunk = idx[s : s + 512]
            with clock("forward"):
                net = wrapped if engine == "opacus" else model
                loss = nn.functional.cross_entropy(net(x[chunk]), y[chunk], reduction="sum")
            if engine == "plain":
                with clock("backward (batch gradients)"):
                    (loss / (q * n)).backward()
                continue
            if engine == "opacus":
                with clock("backward: batch gradients (discarded) + per-sample hooks"):
                    loss.backward()
                with clock("norms, clip factors, clipped sum"):
                    gs = [p.grad_sample for p in params]  # type: ignore[attr-defined]
                    norms = torch.stack([g.reshape(g.shape[0], -1).norm(dim=1) for g in gs]).norm(
                        dim=0
                    )
                    c = clip_factors(norms, hp.clip)
                    parts = [torch.einsum("i,i...->...", c, g) for g in gs]
                    for p in params:
                        p.grad_sample = None  # type: ignore[attr-defined]
                        p.grad = None
            else:
                with clock("backward to layer outputs + per-sample gradients and norms"):
                    norms = wrapped.norms(loss, chunk.numel())
                with clock("norms, clip factors, clipped sum"):
                    parts = wrapped.weighted_sums(clip_factors(norms, hp.clip))
            with clock("norms, clip factors, clipped sum"):
                for a, b in zip(sums, parts, strict=True):
                    a.add_(b)
        with clock("noise + Adam step"):
            if engine != "plain":
                for p, s_ in zip(params, sums, strict=True):
                    p.grad = noisy_mean_gradient(s_, noise_std, q * n, gen)
            opt.step()
            opt.zero_grad(set_to_none=True)
    with clock("setup (wrap / hooks, and their removal)"):
        if engine == "opacus":
            wrapped._close()
        elif engine == "privrepro":
            wrapped.close()


def _backward_parts(repeats: int) -> dict[str, float]:
    """One 512 batch: the backward with all parameter gradients, to the layer outputs only, and
    opacus' (parameter gradients + per-sample hooks); CPU seconds per batch."""
    from opacus import GradSampleModule

    g = torch.Generator().manual_seed(2)
    x, y = torch.rand(512, 1, 28, 28, generator=g), torch.randint(0, 10, (512,), generator=g)
    model = small_convnet()
    layers = [m for m in model if isinstance(m, nn.Conv2d | nn.Linear)]
    outs: list[torch.Tensor] = []
    hooks = [m.register_forward_hook(lambda m, i, o: outs.append(o)) for m in layers]
    out: dict[str, float] = defaultdict(float)
    gsm = None
    for _ in range(repeats):
        outs.clear()
        loss = nn.functional.cross_entropy(model(x), y, reduction="sum")
        c = _cpu()
        loss.backward()
        out["all parameter gradients (non-private backward)"] += (_cpu() - c) / repeats
        model.zero_grad(set_to_none=True)
        outs.clear()
        loss = nn.functional.cross_entropy(model(x), y, reduction="sum")
        c = _cpu()
        torch.autograd.grad(loss, outs)
        out["gradients to the layer outputs only"] += (_cpu() - c) / repeats
    for h in hooks:
        h.remove()
    gsm = GradSampleModule(model, batch_first=True, loss_reduction="sum")
    for _ in range(repeats):
        loss = nn.functional.cross_entropy(gsm(x), y, reduction="sum")
        c = _cpu()
        loss.backward()
        out["opacus backward (parameter gradients + per-sample hooks)"] += (_cpu() - c) / repeats
        for p in model.parameters():
            p.grad_sample = None  # type: ignore[attr-defined]
            p.grad = None
    gsm._close()
    return dict(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    with torch_threads(args.threads), torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        g = torch.Generator().manual_seed(0)
        n = 4096
        x = torch.rand(n, 1, 28, 28, generator=g)
        y = torch.randint(0, 10, (n,), generator=g)
        hp = DPSGDHyper(
            epochs=1, batch_size=n / 8, lr=1e-3, clip=1.0, epsilon=1.0, accountant="rdp"
        )
        c = _cpu()
        rec = privacy_record(n, hp)
        calib = _cpu() - c
        print(
            f"load {os.getloadavg()[0]:.1f}, torch threads {args.threads}, {args.repeats} runs each"
        )
        print(
            f"noise calibration (privacy_record, RDP; once per run, outside the benchmark): {calib:.3f} s"
        )
        totals: dict[str, float] = {}
        for engine in ("plain", "opacus", "privrepro", "plain", "opacus", "privrepro"):
            model = small_convnet()
            _run(engine, model, x, y, hp, rec, Clock())  # warm-up
            clock = Clock()
            for _ in range(args.repeats):
                _run(engine, model, x, y, hp, rec, clock)
            total = sum(clock.acc.values())
            totals[engine] = totals.get(engine, 0.0) + total
            print(
                f"\n{engine}: {total:.2f} s CPU over {args.repeats} runs "
                f"(load {os.getloadavg()[0]:.1f})"
            )
            for k, v in clock.acc.items():
                print(f"  {k:62s} {v:7.3f} s  {100 * v / total:5.1f} %")
        for engine in ("opacus", "privrepro"):
            print(
                f"ratio non-private / {engine} (both passes): {totals['plain'] / totals[engine]:.3f}"
            )
        gen = torch.Generator().manual_seed(1)
        sizes = [poisson_batch(n, rec.sample_rate, gen).numel() for _ in range(rec.steps)]
        print(
            f"\nPoisson batch sizes of the run: {sizes}; physical chunks: "
            f"{sum(math.ceil(s / 512) for s in sizes)} for {rec.steps} steps"
        )
        for engine in ("opacus", "privrepro"):
            per: dict[int, float] = {}
            model = small_convnet()
            for pb in (512, n, 512, n):

                def run(pb: int = pb, engine: str = engine, model: nn.Module = model) -> None:
                    train_dpsgd(
                        model,
                        x,
                        y,
                        hp,
                        generator=torch.Generator().manual_seed(1),
                        privacy=rec,
                        physical_batch=pb,
                        engine=engine,
                    )

                run()
                c = _cpu()
                for _ in range(args.repeats):
                    run()
                per[pb] = min(per.get(pb, math.inf), _cpu() - c)
            print(
                f"{engine}: physical batch 512 {per[512]:.2f} s, unsplit {per[n]:.2f} s "
                f"(split costs {100 * (per[512] / per[n] - 1):+.1f} %)"
            )
        print(f"\none 512 batch, backward taken apart (load {os.getloadavg()[0]:.1f}):")
        for k, v in _backward_parts(args.repeats).items():
            print(f"  {k:62s} {1000 * v:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
