"""bf16 autocast against FP32 for FiLM DP-SGD on real images: the MNIST test set.

    PRIVREPRO_DATA=<root holding MNIST/raw/t10k-*.gz> python benchmarks/validate_bf16_mnist.py

The 10,000 MNIST test images (LeCun's idx files, read by ``privrepro.data.vision.load_mnist``)
are split in two halves by a seeded permutation: training and held-out test. A FiLM model on a
small random timm ViT (28 × 28, patches of 7, width 64, 2 blocks; LayerNorm scale and shift and
a zero head trainable, cl paper Sec. 6) is trained with DP-SGD (ε = 8, δ = 1e-5, Poisson
batches, the project's per-sample clipper) in ``fp32`` and in ``bf16`` autocast, paired: each
seed's two runs draw the same batches and noise. Printed: held-out accuracy per seed and
precision, the paired differences, and the seed-to-seed spread. Not a test: it needs the data.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-root", default=os.environ.get("PRIVREPRO_DATA", "data"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--epochs", type=float, default=4.0)
    ap.add_argument("--epsilon", type=float, default=8.0)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    from privrepro.continual.peft import make_film, member_logits, small_vit
    from privrepro.continual.peft.members import Member
    from privrepro.data.vision import load_mnist
    from privrepro.training.dpsgd import DPSGDHyper, privacy_record, train_dpsgd

    ds = load_mnist(Path(args.data_root), "test")
    x = torch.as_tensor(np.asarray(ds.x), dtype=torch.float32)[:, None] / 255.0
    x = (x - 0.1307) / 0.3081  # MNIST's usual normalisation
    y = torch.as_tensor(np.asarray(ds.y))
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(0))
    tr, te = perm[: len(y) // 2], perm[len(y) // 2 :]
    hp = DPSGDHyper(
        epochs=args.epochs, batch_size=256, lr=args.lr, clip=1.0, epsilon=args.epsilon, delta=1e-5
    )
    rec = privacy_record(len(tr), hp)
    rows = []
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    for seed in seeds:
        vit = small_vit(
            torch.Generator().manual_seed(100 + seed),
            img_size=28,
            patch_size=7,
            embed_dim=64,
            depth=2,
            num_heads=2,
            in_chans=1,
        )
        for precision in ("fp32", "bf16"):
            model = make_film(vit, 10)
            t0 = time.perf_counter()
            train_dpsgd(
                model,
                x[tr],
                y[tr],
                hp,
                generator=torch.Generator().manual_seed(seed),
                privacy=rec,
                precision=precision,
            )
            member = Member("film", np.arange(10), model)
            pred = member_logits(member, x[te], precision=precision).argmax(1)
            acc = 100.0 * float((pred == y[te]).float().mean())
            rows.append(
                {
                    "seed": seed,
                    "precision": precision,
                    "accuracy": acc,
                    "seconds": time.perf_counter() - t0,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    acc = {(r["seed"], r["precision"]): r["accuracy"] for r in rows}
    diffs = [acc[(s, "bf16")] - acc[(s, "fp32")] for s in seeds]
    fp32 = [acc[(s, "fp32")] for s in seeds]
    print(
        json.dumps(
            {
                "train": len(tr),
                "test": len(te),
                "noise_multiplier": rec.noise_multiplier,
                "steps": rec.steps,
                "bf16_minus_fp32": diffs,
                "max_abs_diff": max(abs(d) for d in diffs),
                "fp32_seed_spread": max(fp32) - min(fp32),
            }
        )
    )


if __name__ == "__main__":
    main()
