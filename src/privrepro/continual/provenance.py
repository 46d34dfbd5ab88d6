"""What a cl unit runs on: a benchmark's real data, or a named stand-in for it.

The paper (Tobaben et al., arXiv 2411.04680, Sec. 7) runs every experiment on ViT-B/16
ImageNet-21k features (Cosine Classifier, head-only PEFT) or images (FiLM) of Split-CIFAR-100,
Split-ImageNet-R and 5-Datasets. ``smoke`` runs the same code on stand-ins (more in
``docs/modules.md``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from privrepro.continual.benchmarks import BENCHMARK_NAMES
from privrepro.data.provenance import DataSource, read_from

__all__ = ["benchmark_source"]

#: The non-private accuracy the synthetic features were shaped to give (the paper's, Tables A5–A7).
_SHAPED_ACCURACY = {"cifar100": "79 %", "imagenet-r": "56 %", "5-datasets": "60 %"}


def _shaped(benchmark: str) -> str:
    return (
        f"shaped so that its non-private accuracy sits near the paper's "
        f"≈{_SHAPED_ACCURACY.get(benchmark, '?')}: numbers close to the paper's are there by "
        "construction, not reproduced"
    )


def benchmark_source(
    benchmark: str,
    source: str,
    data_dir: str | Path | None,
    images: bool = False,
    verified: bool = True,
) -> DataSource:
    """The data of a cl unit on ``benchmark`` with ``features.source = source``.

    Args:
        benchmark: ``cifar100``, ``imagenet-r`` or ``5-datasets``.
        source: ``backbone`` (the real benchmark), ``synthetic`` or ``tiny-vit``.
        data_dir: the data root the real benchmark is read from (a rehearsal root makes it a
            stand-in, :func:`~privrepro.data.provenance.read_from`).
        images: FiLM runs, which read images rather than features (``synthetic`` then means
            generated images through a small random ViT).
        verified: whether the files' checksums are checked (``features.verify_checksums``);
            unverified files are a stand-in for the benchmark, never the benchmark.
    """
    name = BENCHMARK_NAMES.get(benchmark, benchmark)
    if source == "backbone":
        real = read_from(benchmark, data_dir)
        if real.is_stand_in:
            return replace(real, stand_in_for=name)
        if not verified:
            from privrepro.data.provenance import data_fingerprint

            return replace(
                real,
                name=f"unverified files in the {real.name} format",
                stand_in_for=name,
                fingerprint=data_fingerprint(data_dir or "data", benchmark, verified=False),
            )
        return replace(real, name=name)
    if source == "tiny-vit" or (source == "synthetic" and images):
        what = "images" if images else "features"
        return DataSource(
            f"seeded synthetic images through a small random-weight ViT ({what})",
            stand_in_for=f"{name} through ViT-B/16 (ImageNet-21k)",
        )
    return DataSource(
        "synthetic clustered features",
        stand_in_for=f"{name} ViT-B/16 features",
        shaped=_shaped(benchmark),
    )
