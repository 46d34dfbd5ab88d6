"""Backbone-ready images kept on the host and sent to the device one batch at a time (FiLM).

More in ``docs/modules.md``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from privrepro.bounded_read import regular_file
from privrepro.config import ConfigError
from privrepro.loops import PLAIN, Loops
from privrepro.store.atomic import fsync_dir

__all__ = [
    "HostImages",
    "PixelTransform",
    "cached_pixels",
    "pixel_cache_path",
    "pixels_of",
    "split_transform",
]


@dataclass(frozen=True)
class PixelTransform:
    """An evaluation transform split at ``ToTensor``.

    Attributes:
        geometric: PIL → PIL steps (resize, crop); applied once, when the cache is written.
        mean, std: the per-channel normalisation applied to every gathered batch.
        key: a short hash of the geometric steps' description: cache files made by another
            resize or crop are never read back.
    """

    geometric: Callable[[Any], Any]
    mean: tuple[float, ...]
    std: tuple[float, ...]
    key: str


def split_transform(transform: Any) -> PixelTransform:
    """Split a ``Compose([*geometric, ToTensor, Normalize])`` (timm's evaluation transform).

    Raises:
        ConfigError: the transform is not of that form (the error lists its steps).
    """
    from torchvision import transforms as tv

    steps = list(getattr(transform, "transforms", []))
    names = [type(s).__name__ for s in steps]
    to_tensor = [i for i, n in enumerate(names) if n in ("ToTensor", "MaybeToTensor")]
    if (
        len(to_tensor) != 1
        or to_tensor[0] != len(steps) - 2
        or not isinstance(steps[-1], tv.Normalize)
    ):
        raise ConfigError(
            "transform steps", names, "must be [..., ToTensor or MaybeToTensor, Normalize]"
        )
    geometric = tv.Compose(steps[: to_tensor[0]])
    norm = steps[-1]
    key = hashlib.sha256(repr(geometric).encode()).hexdigest()[:10]
    return PixelTransform(
        geometric,
        tuple(float(v) for v in torch.as_tensor(norm.mean).flatten()),
        tuple(float(v) for v in torch.as_tensor(norm.std).flatten()),
        key,
    )


def pixels_of(images: Iterable[Any], pt: PixelTransform) -> np.ndarray:
    """``uint8 [N, 3, H, W]``: each image (uint8 array or path) to RGB, then ``pt.geometric``."""
    from privrepro.continual.features import _to_pil

    arrays = [np.asarray(pt.geometric(_to_pil(im)), dtype=np.uint8) for im in images]
    if not arrays:
        return np.zeros((0, 3, 1, 1), np.uint8)
    return np.stack(arrays).transpose(0, 3, 1, 2)


def pixel_cache_path(
    cache_dir: str | Path, backbone: str, key: str, dataset: str, split: str
) -> Path:
    """``<cache_dir>/cl/images/<backbone>-<key>-<dataset>-<split>.npy``."""
    from privrepro.continual.features import _safe

    name = f"{_safe(backbone)}-{key}-{_safe(dataset)}-{_safe(split)}.npy"
    return Path(cache_dir) / "cl" / "images" / name


def cached_pixels(
    path: str | Path,
    images: Callable[[], Sequence[Any]],
    pt: PixelTransform,
    chunk: int = 512,
    loops: Loops = PLAIN,
) -> np.ndarray:
    """The memory-mapped pixel array at ``path``; written first from ``images()`` if absent.

    The array is streamed chunk by chunk into ``<path>.tmp-<pid>.npy`` and renamed into place,
    so a killed run leaves no partial cache and two workers writing the same file are safe
    (both write identical bytes; the last rename wins).
    """
    path = Path(path)
    if not path.is_file():
        ims = images()
        n = len(ims)
        first = pixels_of(ims[:1], pt)
        shape = (n, *first.shape[1:]) if n else first.shape
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.tmp-{os.getpid()}.npy")
        try:
            out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.uint8, shape=shape)
            for a in loops(range(0, n, chunk), f"{path.stem} pixels", -(-n // chunk)):
                out[a : a + chunk] = pixels_of(ims[a : a + chunk], pt)
            out.flush()
            del out
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            os.replace(tmp, path)
            fsync_dir(path.parent)
        finally:
            tmp.unlink(missing_ok=True)
    regular_file(path)  # never a pipe or a device handed to numpy
    return np.load(path, mmap_mode="r")


class HostImages:
    """Images held on the host as uint8 pixels, normalised on the device batch by batch.

    Args:
        parts: ``uint8 [N_k, 3, H, W]`` arrays (memory maps or in memory), read as one array
            of ``Σ N_k`` rows in order.
        mean, std: the backbone's per-channel normalisation.
        device: where :meth:`gather` puts batches; dtype: their floating type.
        rows: the selected rows of the concatenation (``None``: all), in order.
    """

    def __init__(
        self,
        parts: Sequence[np.ndarray],
        mean: Sequence[float],
        std: Sequence[float],
        device: str | torch.device = "cpu",
        dtype: torch.dtype = torch.float32,
        rows: np.ndarray | None = None,
    ) -> None:
        if not parts:
            raise ValueError("parts: at least one pixel array is needed")
        shapes = {tuple(p.shape[1:]) for p in parts}
        if len(shapes) != 1 or any(p.dtype != np.uint8 or p.ndim != 4 for p in parts):
            raise ValueError(
                f"parts: need uint8 arrays [N, C, H, W] of one image shape, got "
                f"{[(str(p.dtype), tuple(p.shape)) for p in parts]}"
            )
        self.parts = list(parts)
        self.offsets = np.cumsum([0] + [len(p) for p in parts])
        self.mean = tuple(float(m) for m in mean)
        self.std = tuple(float(s) for s in std)
        self.device = torch.device(device)
        self.dtype = dtype
        total = int(self.offsets[-1])
        self.rows = np.arange(total) if rows is None else np.asarray(rows, dtype=np.int64)
        if self.rows.size and (self.rows.min() < 0 or self.rows.max() >= total):
            raise IndexError(
                f"rows: must lie in [0, {total}), got [{self.rows.min()}, {self.rows.max()}]"
            )
        self._scale = (
            torch.tensor(self.mean, dtype=torch.float32, device=self.device)[:, None, None],
            torch.tensor(self.std, dtype=torch.float32, device=self.device)[:, None, None],
        )

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self.rows), *self.parts[0].shape[1:])

    def __len__(self) -> int:
        return len(self.rows)

    def _positions(self, index: Any) -> np.ndarray:
        if isinstance(index, Tensor):
            index = index.detach().cpu().numpy()
        return np.asarray(self.rows[index], dtype=np.int64).reshape(-1)

    def subset(self, index: Any) -> HostImages:
        """The selected rows (an index array, boolean mask or slice); no pixel is copied."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.rows = self._positions(index)
        return new

    def pixels(self, index: Any = slice(None)) -> np.ndarray:
        """The selected rows' ``uint8`` pixels, in the order of ``index``."""
        pos = self._positions(index)
        out = np.empty((len(pos), *self.parts[0].shape[1:]), dtype=np.uint8)
        part = np.searchsorted(self.offsets, pos, side="right") - 1
        for k in np.unique(part):
            sel = part == k
            out[sel] = self.parts[k][pos[sel] - self.offsets[k]]
        return out

    def gather(self, index: Any = slice(None)) -> Tensor:
        """One batch on the device: ``(pixels / 255 − mean) / std`` as ``ToTensor`` and
        ``Normalize`` compute it (float32), then cast to ``dtype``."""
        t = torch.from_numpy(self.pixels(index))
        if self.device.type == "cuda":
            t = t.pin_memory().to(self.device, non_blocking=True)
        else:
            t = t.to(self.device)
        x = t.to(torch.float32).div(255)
        mean, std = self._scale
        return x.sub_(mean).div_(std).to(self.dtype)
