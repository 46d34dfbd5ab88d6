"""Stand-ins of the fixed-size image datasets, in their distributed formats.

* **CIFAR-10** — ``cifar-10-batches-py/``: ``data_batch_1`` … ``data_batch_5`` and ``test_batch``,
  pickled dicts (``batch_label``, ``labels``, ``data`` as ``uint8 [N, 3072]`` — the 1,024 red,
  then green, then blue values of each 32×32 image, rows first —, ``filenames``) and
  ``batches.meta`` (``num_cases_per_batch``, ``label_names``, ``num_vis``); 50,000 + 10,000.
* **CIFAR-100** — ``cifar-100-python/``: ``train`` and ``test`` (``fine_labels`` and
  ``coarse_labels`` instead of ``labels``) and ``meta`` (``fine_label_names``,
  ``coarse_label_names``); 50,000 + 10,000.
* **MNIST** and **FashionMNIST** — ``MNIST/raw/`` and ``FashionMNIST/raw/``: the four gzipped idx
  files as distributed (magic ``0x00000803`` for images, ``0x00000801`` for labels, big-endian
  sizes, then ``uint8`` data); 60,000 + 10,000 each.
* **SVHN** (format 2, cropped digits) — ``train_32x32.mat`` and ``test_32x32.mat`` at the data
  root: MATLAB 5 files with ``X`` ``uint8 [32, 32, 3, N]`` and ``y`` ``[N, 1]`` in 1…10 (10 is
  the digit 0); 73,257 + 26,032.

Labels are balanced and shuffled (the real CIFAR sets are balanced; MNIST's and SVHN's are not,
which the loaders do not depend on). Pixels come from :mod:`.pixels`. Class names are the real
ones, so a loader's class list is the real dataset's.
"""

from __future__ import annotations

import gzip
import io
import pickle
import struct
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from privrepro.rehearsal.standins.marker import MarkedFolder, Progress, WriteRequest
from privrepro.rehearsal.standins.pixels import PatternSpec, class_templates, pattern_images
from privrepro.seeding import numpy_stream

__all__ = [
    "CIFAR10_CLASSES",
    "CIFAR100_COARSE",
    "CIFAR100_FINE",
    "balanced_labels",
    "idx_bytes",
    "write_cifar10",
    "write_cifar100",
    "write_fashionmnist",
    "write_mnist",
    "write_svhn",
]


CIFAR10_CLASSES = [
    "airplane",
    "automobile",
    "bird",
    "cat",
    "deer",
    "dog",
    "frog",
    "horse",
    "ship",
    "truck",
]

#: CIFAR-100's 20 superclasses (``coarse_label_names``) and their 5 classes each.
_CIFAR100_GROUPS: dict[str, list[str]] = {
    "aquatic_mammals": ["beaver", "dolphin", "otter", "seal", "whale"],
    "fish": ["aquarium_fish", "flatfish", "ray", "shark", "trout"],
    "flowers": ["orchid", "poppy", "rose", "sunflower", "tulip"],
    "food_containers": ["bottle", "bowl", "can", "cup", "plate"],
    "fruit_and_vegetables": ["apple", "mushroom", "orange", "pear", "sweet_pepper"],
    "household_electrical_devices": ["clock", "keyboard", "lamp", "telephone", "television"],
    "household_furniture": ["bed", "chair", "couch", "table", "wardrobe"],
    "insects": ["bee", "beetle", "butterfly", "caterpillar", "cockroach"],
    "large_carnivores": ["bear", "leopard", "lion", "tiger", "wolf"],
    "large_man-made_outdoor_things": ["bridge", "castle", "house", "road", "skyscraper"],
    "large_natural_outdoor_scenes": ["cloud", "forest", "mountain", "plain", "sea"],
    "large_omnivores_and_herbivores": ["camel", "cattle", "chimpanzee", "elephant", "kangaroo"],
    "medium_mammals": ["fox", "porcupine", "possum", "raccoon", "skunk"],
    "non-insect_invertebrates": ["crab", "lobster", "snail", "spider", "worm"],
    "people": ["baby", "boy", "girl", "man", "woman"],
    "reptiles": ["crocodile", "dinosaur", "lizard", "snake", "turtle"],
    "small_mammals": ["hamster", "mouse", "rabbit", "shrew", "squirrel"],
    "trees": ["maple_tree", "oak_tree", "palm_tree", "pine_tree", "willow_tree"],
    "vehicles_1": ["bicycle", "bus", "motorcycle", "pickup_truck", "train"],
    "vehicles_2": ["lawn_mower", "rocket", "streetcar", "tank", "tractor"],
}
CIFAR100_COARSE = list(_CIFAR100_GROUPS)
#: the 100 fine classes, alphabetical (their label order in the release)
CIFAR100_FINE = sorted(c for members in _CIFAR100_GROUPS.values() for c in members)
_COARSE_OF = np.array(
    [
        next(i for i, (_, m) in enumerate(_CIFAR100_GROUPS.items()) if fine in m)
        for fine in CIFAR100_FINE
    ]
)

_CHUNK = 10_000  # images generated per vectorised call


def balanced_labels(rng: np.random.Generator, n: int, num_classes: int) -> np.ndarray:
    """``int64 [n]``: ``n`` labels, as equal per class as ``n`` allows, shuffled."""
    return rng.permutation(np.arange(n) % num_classes).astype(np.int64)


def _images(
    seed: int,
    stream: str,
    labels: np.ndarray,
    templates: np.ndarray,
    side: int,
    spec: PatternSpec,
    progress: Progress | None,
) -> np.ndarray:
    """``uint8 [N, side, side, channels]`` generated in chunks (each chunk its own stream, so the
    pixels do not depend on anything but the seed, the stream name and the labels)."""
    out = np.empty((len(labels), side, side, spec.channels), np.uint8)
    starts: Iterable[int] = range(0, len(labels), _CHUNK)
    if progress is not None:
        starts = progress(starts, stream, -(-len(labels) // _CHUNK))
    for a in starts:
        rng = numpy_stream(seed, "standin-pixels", stream, str(a))
        out[a : a + _CHUNK] = pattern_images(
            rng, labels[a : a + _CHUNK], templates, side, side, spec
        )
    return out


def _pickle(obj: Any) -> bytes:
    """Pickled as torchvision reads it (``pickle.load(f, encoding="latin1")``). The release's
    files are Python 2 pickles; protocol 4 gives the same dicts and, like them, stores the
    ``uint8`` data as raw bytes (Python 3's protocol 2 would re-encode them, ~1.5× larger)."""
    return pickle.dumps(obj, protocol=4)


def _cifar_rows(images: np.ndarray) -> np.ndarray:
    """``[N, 32, 32, 3]`` → the release's ``[N, 3072]`` rows (channel planes, rows first)."""
    return np.ascontiguousarray(images.transpose(0, 3, 1, 2).reshape(len(images), -1))


def _filenames(prefix: str, names: list[str], labels: np.ndarray, offset: int) -> list[str]:
    return [f"{prefix}_{names[y]}_s_{offset + i:06d}.png" for i, y in enumerate(labels)]


def write_cifar10(req: WriteRequest) -> dict[str, Any]:
    """CIFAR-10's ``cifar-10-batches-py`` (five training batches, one test batch, meta)."""
    spec = PatternSpec(channels=3)
    templates = class_templates(numpy_stream(req.seed, "cifar10", "templates"), 10, spec)
    n_train, n_test = int(req.counts["train"]), int(req.counts["test"])
    for split, n in (("train", n_train), ("test", n_test)):
        labels = balanced_labels(numpy_stream(req.seed, "cifar10", split, "labels"), n, 10)
        images = _images(req.seed, f"cifar10-{split}", labels, templates, 32, spec, req.progress)
        if split == "train":
            batches = np.array_split(np.arange(n), 5)
            names = [f"data_batch_{i + 1}" for i in range(5)]
            titles = [f"training batch {i + 1} of 5" for i in range(5)]
        else:
            batches, names, titles = [np.arange(n)], ["test_batch"], ["testing batch 1 of 1"]
        for idx, name, title in zip(batches, names, titles, strict=True):
            batch = {
                "batch_label": title,
                "labels": labels[idx].tolist(),
                "data": _cifar_rows(images[idx]),
                "filenames": _filenames("standin", CIFAR10_CLASSES, labels[idx], int(idx[0])),
            }
            req.out.write_bytes(name, _pickle(batch))
    meta = {
        "num_cases_per_batch": int(np.ceil(n_train / 5)),
        "label_names": CIFAR10_CLASSES,
        "num_vis": 3072,
    }
    req.out.write_bytes("batches.meta", _pickle(meta))
    return {"classes": 10}


def write_cifar100(req: WriteRequest) -> dict[str, Any]:
    """CIFAR-100's ``cifar-100-python`` (``train``, ``test``, ``meta``; fine and coarse labels)."""
    spec = PatternSpec(channels=3)
    templates = class_templates(numpy_stream(req.seed, "cifar100", "templates"), 100, spec)
    for split, title in (("train", "training batch 1 of 1"), ("test", "testing batch 1 of 1")):
        n = int(req.counts[split])
        fine = balanced_labels(numpy_stream(req.seed, "cifar100", split, "labels"), n, 100)
        images = _images(req.seed, f"cifar100-{split}", fine, templates, 32, spec, req.progress)
        batch = {
            "filenames": _filenames("standin", CIFAR100_FINE, fine, 0),
            "batch_label": title,
            "fine_labels": fine.tolist(),
            "coarse_labels": _COARSE_OF[fine].tolist(),
            "data": _cifar_rows(images),
        }
        req.out.write_bytes(split, _pickle(batch))
    meta = {"fine_label_names": CIFAR100_FINE, "coarse_label_names": CIFAR100_COARSE}
    req.out.write_bytes("meta", _pickle(meta))
    return {"classes": 100}


def idx_bytes(array: np.ndarray) -> bytes:
    """The idx format (LeCun et al.): ``0x0000``, type ``0x08`` (uint8), the number of
    dimensions, each dimension as a big-endian 32-bit integer, then the data row-major."""
    header = struct.pack(">HBB", 0, 0x08, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + np.ascontiguousarray(array, dtype=np.uint8).tobytes()


def _gzip(data: bytes) -> bytes:
    """gzip with no file name and a zero timestamp: the same bytes on every run."""
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
        gz.write(data)
    return buf.getvalue()


def _write_idx_dataset(
    key: str,
    out: MarkedFolder,
    counts: Mapping[str, int],
    seed: int,
    progress: Progress | None,
) -> dict[str, Any]:
    spec = PatternSpec(channels=1, noise=0.1)
    templates = class_templates(numpy_stream(seed, key, "templates"), 10, spec)
    for split, prefix in (("train", "train"), ("test", "t10k")):
        n = int(counts[split])
        labels = balanced_labels(numpy_stream(seed, key, split, "labels"), n, 10)
        images = _images(seed, f"{key}-{split}", labels, templates, 28, spec, progress)[..., 0]
        out.write_bytes(f"raw/{prefix}-images-idx3-ubyte.gz", _gzip(idx_bytes(images)))
        out.write_bytes(f"raw/{prefix}-labels-idx1-ubyte.gz", _gzip(idx_bytes(labels)))
    return {"classes": 10}


def write_mnist(req: WriteRequest) -> dict[str, Any]:
    """MNIST's ``MNIST/raw/*.gz`` (torchvision's layout, the archives as distributed)."""
    return _write_idx_dataset("mnist", req.out, req.counts, req.seed, req.progress)


def write_fashionmnist(req: WriteRequest) -> dict[str, Any]:
    """FashionMNIST's ``FashionMNIST/raw/*.gz`` (torchvision's layout)."""
    return _write_idx_dataset("fashionmnist", req.out, req.counts, req.seed, req.progress)


def write_svhn(req: WriteRequest) -> dict[str, Any]:
    """SVHN format 2: ``{train,test}_32x32.mat`` (MATLAB 5, compressed like the release)."""
    from scipy.io import savemat

    spec = PatternSpec(channels=3)
    templates = class_templates(numpy_stream(req.seed, "svhn", "templates"), 10, spec)
    for split in ("train", "test"):
        n = int(req.counts[split])
        digits = balanced_labels(numpy_stream(req.seed, "svhn", split, "labels"), n, 10)
        images = _images(req.seed, f"svhn-{split}", digits, templates, 32, spec, req.progress)
        y = np.where(digits == 0, 10, digits).astype(np.float64)[:, None]  # MATLAB: 10 is '0'
        buf = io.BytesIO()
        # [N, 32, 32, 3] → [32, 32, 3, N] (a Fortran-ordered view: written without a copy)
        savemat(buf, {"X": images.transpose(1, 2, 3, 0), "y": y}, do_compression=True)
        req.out.write_bytes(f"{split}_32x32.mat", buf.getvalue())
    return {"classes": 10}
