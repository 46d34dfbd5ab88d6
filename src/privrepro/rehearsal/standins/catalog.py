"""Every stand-in the paper profile needs, and the calls that write them into a data root.

:data:`STANDINS` lists, per dataset or checkpoint the paper profile reads, where it goes under
the data root, its real full-size counts and its writer. :func:`write_standin` writes one (at full
size, or at the ``counts`` given — tests write a few images in the exact format) and
:func:`write_standins` a set of them; both return :class:`Written` records with the wall time and
the bytes written, which the rehearsal reports.

Which figures read what (paper profile): CIFAR-10 — ip Figs. 3–6, pac Examples 2 and 3, cl
5-Datasets; CIFAR-100 — ip Fig. 6, cl Split-CIFAR-100 (Figs. 3–5, A1); MNIST — pac Example 4,
cl 5-Datasets; SVHN, notMNIST, FashionMNIST — cl 5-Datasets (Table A7); ImageNet-R — cl
Split-ImageNet-R (Figs. 3, 5); UCI Adult — pb Fig. 7 with ``params.data=uci``; ViT-B/16 — every
cl figure with ``features.source=backbone``; the ip checkpoints — ip figures with
``params.sll.checkpoints`` / ``params.resnet.checkpoints`` set (the paper profile trains them
otherwise).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from privrepro.data.provenance import REHEARSAL_MARKER
from privrepro.rehearsal.standins import adult, arrays, checkpoints, folders
from privrepro.rehearsal.standins.marker import MarkedFolder, Progress, WriteRequest, update_marker

__all__ = ["STANDINS", "StandIn", "Written", "check_root", "write_standin", "write_standins"]

Writer = Callable[[WriteRequest], dict[str, Any]]


@dataclass(frozen=True)
class StandIn:
    """One stand-in: a dataset or a checkpoint of the paper profile.

    Attributes:
        key: its name (``cifar10``, ``vit-b16``, ...).
        stand_in_for: what it stands in for, in the papers' words.
        folder: where it goes under the data root (``""``: the root itself).
        counts: the real full-size counts (images or rows per split, files).
        kind: ``"dataset"`` or ``"checkpoint"``.
        writer: ``writer(WriteRequest(out, counts, seed, jobs, progress)) -> summary``.
    """

    key: str
    stand_in_for: str
    folder: str
    counts: Mapping[str, int]
    kind: str
    writer: Writer = field(repr=False)


STANDINS: dict[str, StandIn] = {
    s.key: s
    for s in (
        StandIn(
            "cifar10",
            "CIFAR-10",
            "cifar-10-batches-py",
            {"train": 50_000, "test": 10_000},
            "dataset",
            arrays.write_cifar10,
        ),
        StandIn(
            "cifar100",
            "CIFAR-100",
            "cifar-100-python",
            {"train": 50_000, "test": 10_000},
            "dataset",
            arrays.write_cifar100,
        ),
        StandIn(
            "mnist",
            "MNIST",
            "MNIST",
            {"train": 60_000, "test": 10_000},
            "dataset",
            arrays.write_mnist,
        ),
        StandIn(
            "fashionmnist",
            "Fashion-MNIST",
            "FashionMNIST",
            {"train": 60_000, "test": 10_000},
            "dataset",
            arrays.write_fashionmnist,
        ),
        StandIn(
            "svhn", "SVHN", "", {"train": 73_257, "test": 26_032}, "dataset", arrays.write_svhn
        ),
        StandIn(
            "notmnist",
            "notMNIST (small)",
            "notMNIST_small",
            {"images": 18_726, "unreadable": 2},
            "dataset",
            folders.write_notmnist,
        ),
        StandIn(
            "imagenet-r",
            "ImageNet-R",
            "imagenet-r",
            {"images": 30_000},
            "dataset",
            folders.write_imagenet_r,
        ),
        StandIn(
            "adult",
            "UCI Adult",
            "adult",
            {"train": 32_561, "test": 16_281},
            "dataset",
            adult.write_adult,
        ),
        StandIn(
            "vit-b16",
            f"ViT-B/16 weights ({checkpoints.VIT_B16})",
            checkpoints.vit_b16_folder(),
            {},
            "checkpoint",
            checkpoints.write_vit_b16,
        ),
        StandIn(
            "ip-sll",
            "ip SLL small base models (CIFAR-10, CIFAR-100)",
            "weights/ip",
            {},
            "checkpoint",
            checkpoints.write_ip_sll,
        ),
        StandIn(
            "ip-resnet18",
            "ip ResNet-18 base models (CIFAR-10, CIFAR-100)",
            "weights/ip",
            {},
            "checkpoint",
            checkpoints.write_ip_resnet18,
        ),
    )
}


@dataclass(frozen=True)
class Written:
    """What :func:`write_standin` wrote: where, how many files, their bytes, the disk space they
    take (allocated blocks: many small files take more than their bytes), in how long (wall
    time, and CPU time of the writer and its worker processes)."""

    key: str
    stand_in_for: str
    folder: Path
    counts: Mapping[str, int]
    files: int
    nbytes: int
    disk_bytes: int
    seconds: float
    cpu_seconds: float
    summary: Mapping[str, Any]


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the encoding workers): what the
    writing costs whatever else the machine runs."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _disk_bytes(folder: Path, rels: Iterable[str]) -> int:
    """Space allocated to the files ``rels`` under ``folder`` (``st_blocks`` × 512)."""
    total = 0
    for rel in rels:
        try:
            st = (folder / rel).stat()
        except OSError:
            continue
        total += getattr(st, "st_blocks", 0) * 512 or st.st_size
    return total


def check_root(root: str | Path) -> Path:
    """``root`` as a path, refused (``ConfigError``) when it holds files but no rehearsal marker:
    stand-ins never go into a folder that may hold real data."""
    from privrepro.config.validation import ConfigError

    path = Path(root).expanduser()
    if path.exists() and not path.is_dir():
        raise ConfigError("root", str(path), "must be a folder (the stand-ins' data root)")
    if path.is_dir() and any(path.iterdir()) and not (path / REHEARSAL_MARKER).is_file():
        raise ConfigError(
            "root",
            str(path),
            f"holds files but no {REHEARSAL_MARKER}: stand-ins are written only into an empty "
            "folder or one the stand-in writers made (real data must never sit beside them)",
        )
    return path


def write_standin(
    key: str,
    root: str | Path,
    counts: Mapping[str, int] | None = None,
    seed: int = 0,
    jobs: int = 1,
    progress: Progress | None = None,
) -> Written:
    """Write the stand-in ``key`` into ``root`` (marked first) and return what was written.

    ``counts`` overrides the full-size counts (same keys as ``STANDINS[key].counts``).
    """
    from privrepro.config.validation import ConfigError

    if key not in STANDINS:
        raise ConfigError("standins", key, f"must be one of {sorted(STANDINS)}")
    spec = STANDINS[key]
    counts = {**spec.counts, **(counts or {})}
    for name, value in counts.items():
        if int(value) < 0 or (name in ("train", "test", "images") and int(value) < 1):
            raise ConfigError(f"counts.{name}", value, "must be >= 1 (unreadable: >= 0)")
    if key == "imagenet-r" and int(counts["images"]) < len(folders.IMAGENET_R_WNIDS):
        raise ConfigError("counts.images", counts["images"], "must be >= 200 (one per class)")
    root = check_root(root)
    root.mkdir(parents=True, exist_ok=True)
    update_marker(root, seed=seed, written_by="privrepro.rehearsal.standins")
    out = MarkedFolder(root, spec.folder, key, spec.stand_in_for)
    out.path.mkdir(parents=True, exist_ok=True)
    start, cpu = time.perf_counter(), _cpu_seconds()
    summary = spec.writer(WriteRequest(out, counts, seed, jobs, progress))
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu
    disk = _disk_bytes(out.path, (r.rel for r in out.records))
    record = {
        "folder": spec.folder,
        "kind": spec.kind,
        "counts": dict(counts),
        "files": len(out.records),
        "bytes": out.nbytes,
        "disk_bytes": disk,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "seed": seed,
        **summary,
    }
    out.finish(record)
    return Written(
        key,
        spec.stand_in_for,
        out.path,
        counts,
        len(out.records),
        out.nbytes,
        disk,
        seconds,
        cpu,
        summary,
    )


def write_standins(
    root: str | Path,
    keys: Sequence[str] | None = None,
    seed: int = 0,
    jobs: int = 1,
    progress: Progress | None = None,
    report: Callable[[Written], None] | None = None,
) -> list[Written]:
    """Write the stand-ins ``keys`` (default: all of :data:`STANDINS`) into ``root``.

    ``report`` is called after each one (the command line prints a line per stand-in).
    """
    from privrepro.config.validation import ConfigError

    keys = list(STANDINS) if keys is None else list(keys)
    for key in keys:
        if key not in STANDINS:
            raise ConfigError("standins", key, f"must be one of {sorted(STANDINS)}")
    check_root(root)
    done = []
    for key in keys:
        written = write_standin(key, root, seed=seed, jobs=jobs, progress=progress)
        done.append(written)
        if report is not None:
            report(written)
    return done
