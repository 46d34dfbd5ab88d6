"""Read every stand-in of a rehearsal data root through the project's loaders, at full size.

    uv run --frozen python benchmarks/read_standins.py --root data/rehearsal

For each dataset and checkpoint written by ``make rehearsal-data``: the loader the paper profile
uses, the wall time of the read (checksums, decompression, decoding where the loader decodes),
the rows read, the data label the loader reports, and the process's peak resident memory after
the read (``ru_maxrss``, monotone: the largest dataset sets it). Not part of ``make bench`` (it
needs a written root); the rehearsal runner measures the same per figure.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kB


def _reads(root: Path) -> dict[str, Callable[[], tuple[int, str]]]:
    import numpy as np

    from privrepro.continual.sources import (
        imagenet_r_split,
        load_fashionmnist,
        load_notmnist,
        load_svhn,
    )
    from privrepro.data import load_dataset
    from privrepro.data.adult import load_adult

    def splits(load: Callable[[str], Any]) -> tuple[int, str]:
        parts = [load(s) for s in ("train", "test")]
        return sum(len(p) for p in parts), parts[0].meta["data_source"].label

    def imagenet_r() -> tuple[int, str]:
        from PIL import Image

        tr, te = imagenet_r_split(root, np.random.default_rng(0))
        for path in tr.x[:200]:  # decode a sample: the loader itself only lists the files
            with Image.open(path) as im:
                im.convert("RGB").load()
        return len(tr) + len(te), tr.meta["data_source"].label

    def adult() -> tuple[int, str]:
        frame = load_adult(root, "all")
        return len(frame), frame.attrs["data_source"].label

    def vit() -> tuple[int, str]:
        from privrepro.continual.features import create_backbone

        path = root / "weights/timm/vit_base_patch16_224.augreg_in21k/model.safetensors"
        model = create_backbone(weights=str(path))
        return sum(p.numel() for p in model.parameters()), "random weights (stand-in)"

    def ip(arch: str) -> Callable[[], tuple[int, str]]:
        def read() -> tuple[int, str]:
            from privrepro.inference.basemodels import load_state
            from privrepro.inference.data import CIFAR_STATS
            from privrepro.inference.networks import ArchSpec, build_network
            from privrepro.rehearsal.standins.checkpoints import ip_checkpoint_name

            n = 0
            for dataset, classes in (("cifar10", 10), ("cifar100", 100)):
                model = build_network(ArchSpec(arch), classes, 3, 32, *CIFAR_STATS[dataset])
                load_state(model, root / "weights" / "ip" / ip_checkpoint_name(arch, dataset))
                n += sum(p.numel() for p in model.parameters())
            return n, "random weights (stand-in)"

        return read

    return {
        "cifar10": lambda: splits(lambda s: load_dataset("cifar10", root, split=s)),
        "cifar100": lambda: splits(lambda s: load_dataset("cifar100", root, split=s)),
        "mnist": lambda: splits(lambda s: load_dataset("mnist", root, split=s)),
        "fashionmnist": lambda: splits(lambda s: load_fashionmnist(root, s)),
        "svhn": lambda: splits(lambda s: load_svhn(root, s)),
        "notmnist": lambda: splits(lambda s: load_notmnist(root, s)),
        "imagenet-r": imagenet_r,
        "adult": adult,
        "vit-b16": vit,
        "ip-sll": ip("sll"),
        "ip-resnet18": ip("resnet18"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default="data/rehearsal", help="a root written by the writers")
    parser.add_argument("--only", default="", help="comma-separated subset")
    args = parser.parse_args(argv)
    root = Path(args.root)
    reads = _reads(root)
    keys = [k for k in args.only.split(",") if k] or list(reads)
    print(f"{'stand-in':<13} {'seconds':>8} {'rows':>11} {'peak RSS MB':>12}  data label")
    for key in keys:
        start = time.perf_counter()
        n, label = reads[key]()
        print(
            f"{key:<13} {time.perf_counter() - start:>8.1f} {n:>11,} {_rss_mb():>12,.0f}  {label}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
