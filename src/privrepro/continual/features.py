"""Frozen-backbone features and their on-disk cache (cl paper, Sec. 6: a ViT-B/16 pre-trained on
ImageNet-21k; the cosine classifier runs on cached features, "no forward passes are repeated").

More in ``docs/modules.md``.
"""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from privrepro.bounded_read import parse_json, regular_file
from privrepro.data.provenance import is_rehearsal_root
from privrepro.loops import PLAIN, Loops
from privrepro.store.atomic import atomic_write_bytes

__all__ = [
    "DEFAULT_BACKBONE",
    "FeatureSet",
    "backbone_transform",
    "cached_features",
    "create_backbone",
    "extract_features",
    "feature_cache_path",
    "has_cached_features",
    "load_feature_file",
    "save_feature_file",
]

DEFAULT_BACKBONE = "vit_base_patch16_224.augreg_in21k"

log = logging.getLogger("privrepro.continual")

FeatureSet = tuple[np.ndarray, np.ndarray, dict[str, Any]]

#: what a cache file written before an entry was recorded was extracted with
_RECORD_DEFAULTS: dict[str, Any] = {"precision": "fp32", "model_kwargs": {}}


def create_backbone(
    name: str = DEFAULT_BACKBONE,
    weights: str | Path | None = None,
    pretrained: bool = True,
    **model_kwargs: Any,
) -> Any:
    """The timm model ``name`` with no classification head, frozen and in eval mode.

    Args:
        name: a timm model id.
        weights: a local checkpoint (``.safetensors``, ``.bin``/``.pth`` or google ``.npz``);
            when given, no download is attempted. A missing file (or, for ``None``, weights
            neither in the Hugging Face cache nor downloadable) raises
            :class:`~privrepro.models.weights.MissingWeightsError`, one line, before timm runs.
        pretrained: load pre-trained weights (from ``weights`` or timm's hub); ``False`` gives
            random weights (smoke runs and tests).
        model_kwargs: passed to ``timm.create_model`` (e.g. ``img_size=32, patch_size=8`` for a
            small random ViT).
    """
    import timm

    from privrepro.models.weights import require_backbone_weights

    kwargs: dict[str, Any] = dict(model_kwargs)
    if pretrained:  # a missing file, or no file and no hub: one line, before timm retries
        require_backbone_weights(name, weights, "weights")
    if weights is not None:
        path = Path(weights)
        if is_rehearsal_root(path.parent):
            log.warning(
                "backbone %s: %s is a rehearsal stand-in (random weights, not pretrained)",
                name,
                path,
            )
        # google .npz checkpoints need timm's custom loader (numpy, no pickles); safetensors
        # files timm's standard one; a pickled state dict (.bin, .pth) is read here with
        # torch's weights-only unpickler, which rebuilds tensors and nothing else (timm's
        # file loader would unpickle it whole)
        if path.suffix in (".npz", ".safetensors"):
            kwargs["pretrained_cfg_overlay"] = {
                "file": str(path),
                "custom_load": path.suffix == ".npz",
            }
        else:
            kwargs["pretrained_cfg_overlay"] = {"state_dict": _weights_only_state(path)}
    model = timm.create_model(name, pretrained=pretrained, num_classes=0, **kwargs)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def _weights_only_state(path: Path) -> dict[str, Any]:
    """The state dict of a pickled checkpoint, loaded with ``weights_only=True`` (tensors and
    plain containers only: nothing in the file runs), unwrapped as timm unwraps it."""
    from timm.models import load_state_dict

    try:
        state = load_state_dict(str(path), weights_only=True)
    except Exception as exc:
        from privrepro.data.registry import DamagedDataError

        raise DamagedDataError(
            "weights",
            path,
            f"it does not load as a weights-only state dict ({type(exc).__name__})",
            "Replace it with the checkpoint as published (a .safetensors file is preferred)",
        ) from exc
    return dict(state)


def backbone_transform(model: Any) -> Callable[[Any], Any]:
    """The backbone's evaluation transform (PIL image → normalised tensor)."""
    from timm.data import create_transform, resolve_data_config

    cfg = resolve_data_config({}, model=model)
    size = getattr(getattr(model, "patch_embed", None), "img_size", None)
    if size is not None:  # a model built with another img_size than its pretrained config
        cfg["input_size"] = (3, *tuple(size))
    return create_transform(**cfg, is_training=False)


def _to_pil(item: Any) -> Any:
    from PIL import Image

    if isinstance(item, (str, Path)):
        try:
            with Image.open(item) as im:
                return im.convert("RGB")
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            from privrepro.data.registry import DamagedDataError

            raise DamagedDataError(
                "image folder",
                Path(item),
                f"it cannot be decoded as an image ({type(exc).__name__})",
                "Replace it with the file from the dataset's archive, or delete it",
            ) from exc
    arr = np.asarray(item)
    if arr.dtype != np.uint8:
        arr = np.clip(arr * 255.0 if arr.max() <= 1.0 else arr, 0, 255).astype(np.uint8)
    if arr.ndim == 3 and arr.shape[0] in (1, 3) and arr.shape[-1] not in (1, 3):
        arr = arr.transpose(1, 2, 0)
    if arr.ndim == 3 and arr.shape[-1] == 1:
        arr = arr[..., 0]
    return Image.fromarray(arr).convert("RGB")


def _batches(n: int, size: int) -> Iterator[slice]:
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


def extract_features(
    model: Any,
    images: np.ndarray,
    batch_size: int = 64,
    device: str = "cpu",
    transform: Callable[[Any], Any] | None = None,
    loops: Loops = PLAIN,
    precision: str = "fp32",
) -> np.ndarray:
    """The backbone's features of every image, ``float32 [N, K]``.

    ``images``: uint8 arrays (``[N, H, W]`` grey, ``[N, H, W, 3]`` colour) or file paths; each is
    converted to RGB and passed through ``transform`` (default: :func:`backbone_transform`).
    ``precision``: the backbone's arithmetic (``"fp32"``, ``"tf32"``, ``"bf16"`` autocast;
    :mod:`privrepro.training.precision`); the features are returned in float32. ``loops`` runs
    the batches (``"features"``; :mod:`privrepro.loops`), each whole unless it sizes them.
    """
    import torch

    from privrepro.training.precision import compute_precision

    tf = transform or backbone_transform(model)
    model = model.to(device)
    out: list[np.ndarray] = []
    batches = loops(
        _batches(len(images), batch_size), "features", (len(images) + batch_size - 1) // batch_size
    )
    with torch.no_grad(), compute_precision(precision, device):
        for sl in batches:
            sl = slice(sl.start, sl.start + loops.item_size(sl.stop - sl.start, True))
            xb = torch.stack([tf(_to_pil(im)) for im in images[sl]]).to(device)
            out.append(model(xb).float().cpu().numpy())
    dim = int(getattr(model, "num_features", 0))
    feats = np.concatenate(out).astype(np.float32) if out else np.zeros((0, dim), np.float32)
    return loops.full_rows(feats, len(images))  # unchanged, unless ``loops`` cut the loop


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", text)


def feature_cache_path(cache_dir: str | Path, backbone: str, dataset: str, split: str) -> Path:
    """``<cache_dir>/cl/features/<backbone>-<dataset>-<split>.npz``."""
    return (
        Path(cache_dir)
        / "cl"
        / "features"
        / f"{_safe(backbone)}-{_safe(dataset)}-{_safe(split)}.npz"
    )


def has_cached_features(cache_dir: str | Path, backbone: str) -> bool:
    """Whether the feature cache under ``cache_dir`` holds any file of ``backbone``."""
    folder = Path(cache_dir) / "cl" / "features"
    return folder.is_dir() and any(folder.glob(f"{_safe(backbone)}-*.npz"))


def save_feature_file(path: str | Path, x: np.ndarray, y: np.ndarray, meta: dict[str, Any]) -> Path:
    """Write features, labels and metadata to one ``.npz``, atomically."""
    buf = io.BytesIO()
    np.savez(
        buf,
        x=np.asarray(x, dtype=np.float32),
        y=np.asarray(y, dtype=np.int64),
        meta=np.array(json.dumps(meta, sort_keys=True, default=str)),
    )
    return atomic_write_bytes(path, buf.getvalue())


def load_feature_file(path: str | Path) -> FeatureSet:
    """``(x, y, meta)`` from a file written by :func:`save_feature_file`."""
    regular_file(path)  # never a pipe or a device handed to numpy
    with np.load(Path(path), allow_pickle=False) as z:
        return z["x"], z["y"], parse_json(str(z["meta"]))


def cached_features(
    cache_dir: str | Path,
    backbone: str,
    dataset: str,
    split: str,
    compute: Callable[[], tuple[np.ndarray, np.ndarray, dict[str, Any]]],
    expect: dict[str, Any] | None = None,
    data: Callable[[], str | None] | None = None,
) -> FeatureSet:
    """Features from the cache, or ``compute()`` them once and cache them.

    ``compute`` returns ``(x, y, meta)``; backbone, dataset and split are added to ``meta``.
    ``expect``: what the features were extracted with beyond the file's name (weights, backbone
    arguments, precision; a missing entry reads as ``defaults``'): a cached file recording
    another value is refused in one line. ``data``: the fingerprint of the files ``compute``
    reads; a file recording another (or none) is extracted again, with one warning line, and
    data edited during ``compute`` raises ``DataChangedError`` (nothing is cached).
    """
    path = feature_cache_path(cache_dir, backbone, dataset, split)
    fingerprint = data() if data is not None else None
    if path.is_file():
        x, y, meta = load_feature_file(path)
        if data is not None and meta.get("data") != fingerprint:
            log.warning(
                "feature cache %s was extracted from other data (fingerprint %s, now %s): "
                "extracting it again",
                path,
                str(meta.get("data", "not recorded"))[:24],
                str(fingerprint)[:24],
            )
            return _extract(path, backbone, dataset, split, compute, data, fingerprint)
        for key, want in (expect or {}).items():
            got = meta.get(key, _RECORD_DEFAULTS.get(key))
            if got != want:
                from privrepro.config import ConfigError

                raise ConfigError(
                    f"features.{key}",
                    want,
                    f"the feature cache {path} holds features extracted with {key} = {got!r}; "
                    "remove that file (or use another paths.cache_dir) to extract them again",
                )
        meta["cache_hit"] = True
        return x, y, meta
    return _extract(path, backbone, dataset, split, compute, data, fingerprint)


def _extract(
    path: Path,
    backbone: str,
    dataset: str,
    split: str,
    compute: Callable[[], tuple[np.ndarray, np.ndarray, dict[str, Any]]],
    data: Callable[[], str | None] | None,
    fingerprint: str | None,
) -> FeatureSet:
    """``compute()``'s features, cached at ``path`` once the data is known to be the data whose
    ``fingerprint`` was taken before (see :func:`cached_features`)."""
    x, y, meta = compute()
    meta = {
        **meta,
        "backbone": backbone,
        "dataset": dataset,
        "split": split,
        "shape": list(np.shape(x)),
    }
    if data is not None:
        now = data()
        if now != fingerprint:
            from privrepro.data.provenance import DataChangedError

            raise DataChangedError(
                f"{dataset} changed while its {split} features were extracted (fingerprint "
                f"{str(fingerprint)[:24]} before, {str(now)[:24]} after): {path} is not written; "
                "run again once the data stays put"
            )
        meta["data"] = fingerprint
    save_feature_file(path, x, y, meta)
    meta["cache_hit"] = False
    return np.asarray(x, np.float32), np.asarray(y, np.int64), meta
