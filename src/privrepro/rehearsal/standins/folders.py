"""Stand-ins of the image-folder datasets: one sub-folder per class, one file per image.

* **ImageNet-R** — ``imagenet-r/<wnid>/<rendition>_<k>.jpg``: the 200 real class folders (the
  WordNet ids of ``imagenet_r_wnids`` in the dataset's ``eval.py``), 30,000 RGB JPEGs. The real
  per-class counts and image sizes are not published per file; assumed here: counts drawn
  imbalanced around the mean of 150 (log-normal weights, each class ≥ 50, total exact), shorter
  side 200–600 px with an aspect ratio up to 1.6 either way, and JPEG quality 90 on patterns
  whose noise puts the average file near the archive's 73 KB (2.19 GB / 30,000).
* **notMNIST** (small) — ``notMNIST_small/<A..J>/<base64 name>.png``: 28×28 grey PNGs, 18,726
  files (1,873 for A–F, 1,872 for G–J), of which two are unreadable as in the archive (the
  loader skips and counts them).

Images are encoded by worker processes (``jobs``); each image has its own random stream, so the
files are the same whatever the number of workers.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from privrepro.rehearsal.standins.marker import MarkedFolder, Progress, WriteRequest
from privrepro.rehearsal.standins.pixels import PatternSpec, class_templates, pattern_image
from privrepro.seeding import numpy_stream

__all__ = [
    "IMAGENET_R_WNIDS",
    "NOTMNIST_CLASSES",
    "RENDITIONS",
    "class_counts",
    "write_imagenet_r",
    "write_notmnist",
]


#: ImageNet-R's 200 classes (hendrycks/imagenet-r, ``eval.py``: ``imagenet_r_wnids``), sorted.
IMAGENET_R_WNIDS = (
    "n01443537 n01484850 n01494475 n01498041 n01514859 n01518878 n01531178 n01534433 n01614925 "
    "n01616318 n01630670 n01632777 n01644373 n01677366 n01694178 n01748264 n01770393 n01774750 "
    "n01784675 n01806143 n01820546 n01833805 n01843383 n01847000 n01855672 n01860187 n01882714 "
    "n01910747 n01944390 n01983481 n01986214 n02007558 n02009912 n02051845 n02056570 n02066245 "
    "n02071294 n02077923 n02085620 n02086240 n02088094 n02088238 n02088364 n02088466 n02091032 "
    "n02091134 n02092339 n02094433 n02096585 n02097298 n02098286 n02099601 n02099712 n02102318 "
    "n02106030 n02106166 n02106550 n02106662 n02108089 n02108915 n02109525 n02110185 n02110341 "
    "n02110958 n02112018 n02112137 n02113023 n02113624 n02113799 n02114367 n02117135 n02119022 "
    "n02123045 n02128385 n02128757 n02129165 n02129604 n02130308 n02134084 n02138441 n02165456 "
    "n02190166 n02206856 n02219486 n02226429 n02233338 n02236044 n02268443 n02279972 n02317335 "
    "n02325366 n02346627 n02356798 n02363005 n02364673 n02391049 n02395406 n02398521 n02410509 "
    "n02423022 n02437616 n02445715 n02447366 n02480495 n02480855 n02481823 n02483362 n02486410 "
    "n02510455 n02526121 n02607072 n02655020 n02672831 n02701002 n02749479 n02769748 n02793495 "
    "n02797295 n02802426 n02808440 n02814860 n02823750 n02841315 n02843684 n02883205 n02906734 "
    "n02909870 n02939185 n02948072 n02950826 n02951358 n02966193 n02980441 n02992529 n03124170 "
    "n03272010 n03345487 n03372029 n03424325 n03452741 n03467068 n03481172 n03494278 n03495258 "
    "n03498962 n03594945 n03602883 n03630383 n03649909 n03676483 n03710193 n03773504 n03775071 "
    "n03888257 n03930630 n03947888 n04086273 n04118538 n04133789 n04141076 n04146614 n04147183 "
    "n04192698 n04254680 n04266014 n04275548 n04310018 n04325704 n04347754 n04389033 n04409515 "
    "n04465501 n04487394 n04522168 n04536866 n04552348 n04591713 n07614500 n07693725 n07695742 "
    "n07697313 n07697537 n07714571 n07714990 n07718472 n07720875 n07734744 n07742313 n07745940 "
    "n07749582 n07753275 n07753592 n07768694 n07873807 n07880968 n07920052 n09472597 n09835506 "
    "n10565667 n12267677"
).split()

#: The renditions ImageNet-R's README lists; the stand-in's files are named ``<rendition>_<k>.jpg``
#: (the loader reads any ``.jpg`` in a class folder, whatever its name).
RENDITIONS = (
    "art",
    "cartoon",
    "deviantart",
    "embroidery",
    "graffiti",
    "graphic",
    "origami",
    "painting",
    "pattern",
    "plastic",
    "plush",
    "sculpture",
    "sketch",
    "tattoo",
    "toy",
    "videogame",
)

NOTMNIST_CLASSES = list("ABCDEFGHIJ")
_NOTMNIST_FULL = {c: 1873 if c <= "F" else 1872 for c in NOTMNIST_CLASSES}  # 18,726 in all

_IMAGENET_R_SPEC = PatternSpec(channels=3, coarse=6, noise=0.036)
_IMAGENET_R_QUALITY = 90
_NOTMNIST_SPEC = PatternSpec(channels=1, coarse=4, noise=0.1)
_BLOCK = 200  # images per worker task


def class_counts(rng: np.random.Generator, total: int, classes: int, minimum: int) -> np.ndarray:
    """``int64 [classes]`` summing to ``total``: imbalanced (log-normal weights), each at least
    ``minimum`` (or ``total // classes`` when that is smaller)."""
    minimum = min(minimum, total // classes)
    weights = rng.lognormal(0.0, 0.5, classes)
    spare = total - minimum * classes
    counts = minimum + np.floor(spare * weights / weights.sum()).astype(np.int64)
    counts[np.argsort(-weights)[: total - int(counts.sum())]] += 1
    return counts


@dataclass(frozen=True)
class _Task:
    """A block of images for one worker: everything needed to make and write them."""

    folder: str
    seed: int
    stream: str
    items: Sequence[tuple[str, int, int, int, int]]  # (relative path, label, image index, h, w)
    templates: np.ndarray
    spec: PatternSpec
    fmt: str  # "JPEG" or "PNG"
    quality: int


def _write_block(task: _Task) -> list[tuple[str, str, int]]:
    """Make, encode and write one block of images; ``(relative path, MD5, bytes)`` of each."""
    from PIL import Image

    done = []
    for rel, label, index, h, w in task.items:
        rng = numpy_stream(task.seed, "standin-pixels", task.stream, str(index))
        pixels = pattern_image(rng, task.templates[label], h, w, task.spec)
        image = Image.fromarray(pixels[..., 0] if task.spec.channels == 1 else pixels)
        buf = io.BytesIO()
        if task.fmt == "JPEG":
            image.save(buf, "JPEG", quality=task.quality)
        else:
            image.save(buf, task.fmt)
        data = buf.getvalue()
        path = Path(task.folder) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".tmp-{path.name}")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        done.append((rel, hashlib.md5(data, usedforsecurity=False).hexdigest(), len(data)))
    return done


def _run_tasks(
    out: MarkedFolder, tasks: list[_Task], jobs: int, desc: str, progress: Progress | None
) -> None:
    """Run the blocks on ``jobs`` worker processes (in this process when ``jobs`` is 1)."""
    results: Iterable[list[tuple[str, str, int]]]
    if jobs <= 1:
        results = map(_write_block, tasks)
        if progress is not None:
            results = progress(results, desc, len(tasks))
        for block in results:
            for rel, md5, nbytes in block:
                out.record(rel, md5, nbytes)
        return
    import multiprocessing

    # fork: workers run numpy and PIL only (no BLAS, no torch) and need no main-module guard;
    # spawn where fork does not exist
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        results = pool.map(_write_block, tasks)
        if progress is not None:
            results = progress(results, desc, len(tasks))
        for block in results:
            for rel, md5, nbytes in block:
                out.record(rel, md5, nbytes)


def _blocks(items: list[tuple[str, int, int, int, int]]) -> list[list[Any]]:
    return [items[a : a + _BLOCK] for a in range(0, len(items), _BLOCK)]


def write_imagenet_r(
    req: WriteRequest,
    sides: tuple[int, int] = (200, 600),
) -> dict[str, Any]:
    """ImageNet-R's ``imagenet-r/<wnid>/*.jpg`` (``counts["images"]`` JPEGs over 200 classes).

    ``sides`` bounds the shorter side of each image (tests write small images).
    """
    rng = numpy_stream(req.seed, "imagenet-r", "layout")
    total = int(req.counts["images"])
    per_class = class_counts(rng, total, len(IMAGENET_R_WNIDS), 50)
    templates = class_templates(
        numpy_stream(req.seed, "imagenet-r", "templates"), len(IMAGENET_R_WNIDS), _IMAGENET_R_SPEC
    )
    items: list[tuple[str, int, int, int, int]] = []
    for label, (wnid, n) in enumerate(zip(IMAGENET_R_WNIDS, per_class, strict=True)):
        kinds = rng.choice(len(RENDITIONS), size=int(n))
        seen: dict[int, int] = {}
        for k in kinds:
            short = int(rng.integers(sides[0], sides[1] + 1))
            long = round(short * float(rng.uniform(1.0, 1.6)))
            h, w = (short, long) if rng.random() < 0.5 else (long, short)
            name = f"{RENDITIONS[k]}_{seen.get(int(k), 0)}.jpg"
            seen[int(k)] = seen.get(int(k), 0) + 1
            items.append((f"{wnid}/{name}", label, len(items), h, w))
    req.out.clear(keep=[it[0] for it in items])  # images of an earlier run with other counts
    tasks = [
        _Task(
            str(req.out.path),
            req.seed,
            "imagenet-r",
            block,
            templates,
            _IMAGENET_R_SPEC,
            "JPEG",
            _IMAGENET_R_QUALITY,
        )
        for block in _blocks(items)
    ]
    _run_tasks(req.out, tasks, req.jobs, "imagenet-r jpeg", req.progress)
    pixels = np.array([h * w for *_, h, w in items], dtype=np.int64)
    return {
        "classes": len(IMAGENET_R_WNIDS),
        "per_class_min": int(per_class.min()),
        "per_class_max": int(per_class.max()),
        "pixels_per_image_mean": float(pixels.mean()) if len(pixels) else 0.0,
        "jpeg_quality": _IMAGENET_R_QUALITY,
    }


def _font_name(rng: np.random.Generator) -> str:
    """A file name like the archive's: the base64 of a font file's name, then ``.png``."""
    stem = "standin-" + "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=10))
    return base64.b64encode(f"{stem}.ttf".encode()).decode() + ".png"


def write_notmnist(req: WriteRequest) -> dict[str, Any]:
    """notMNIST_small's ``<letter>/<name>.png`` (``counts["images"]`` files, ``counts["unreadable"]``
    of them truncated PNGs as in the archive)."""
    rng = numpy_stream(req.seed, "notmnist", "layout")
    total = int(req.counts["images"])
    full = sum(_NOTMNIST_FULL.values())
    per_class = [
        _NOTMNIST_FULL[c] if total == full else total // 10 + (i < total % 10)
        for i, c in enumerate(NOTMNIST_CLASSES)
    ]
    templates = class_templates(numpy_stream(req.seed, "notmnist", "templates"), 10, _NOTMNIST_SPEC)
    items: list[tuple[str, int, int, int, int]] = []
    for label, (letter, n) in enumerate(zip(NOTMNIST_CLASSES, per_class, strict=True)):
        for _ in range(n):
            items.append((f"{letter}/{_font_name(rng)}", label, len(items), 28, 28))
    req.out.clear(keep=[it[0] for it in items])  # images of an earlier run with other counts
    broken = int(req.counts.get("unreadable", 0))
    bad = set(rng.choice(len(items), size=min(broken, len(items)), replace=False).tolist())
    tasks = [
        _Task(str(req.out.path), req.seed, "notmnist", block, templates, _NOTMNIST_SPEC, "PNG", 0)
        for block in _blocks([it for i, it in enumerate(items) if i not in bad])
    ]
    _run_tasks(req.out, tasks, req.jobs, "notmnist png", req.progress)
    for i in sorted(bad):  # a PNG signature and nothing else: PIL cannot open it
        req.out.write_bytes(items[i][0], b"\x89PNG\r\n\x1a\n")
    return {"classes": 10, "unreadable": len(bad)}
