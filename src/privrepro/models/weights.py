"""Pretrained weights a run needs: found, or one line naming them, where to put them and the key.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from privrepro.config.validation import ConfigError

__all__ = [
    "HUB_FILES",
    "MissingWeightsError",
    "WeightsNeed",
    "check_weights",
    "hub_cached_file",
    "hub_reachable",
    "hub_repo",
    "require_backbone_weights",
    "suggested_weights_path",
    "weights_needed",
]

log = logging.getLogger("privrepro.models")

#: the files timm's hub download looks for, in its order of preference
HUB_FILES = ("model.safetensors", "pytorch_model.bin")


class MissingWeightsError(ConfigError):
    """Weights a run needs that are neither at the configured path nor obtainable.

    A :class:`~privrepro.config.ConfigError` (one line, exit status 2 from the command line):
    ``key`` is the config key that points at the weights, ``value`` its value.
    """


@dataclass(frozen=True)
class WeightsNeed:
    """Weights a run needs.

    Attributes:
        key: the config key that points at the file (``params.features.weights``).
        value: its value (``None`` or ``""`` when unset).
        backbone: the timm model id when timm's hub can provide them, else ``None``.
    """

    key: str
    value: Any
    backbone: str | None = None


def hub_repo(backbone: str) -> str | None:
    """The Hugging Face repository timm downloads ``backbone``'s weights from, if any."""
    try:
        from timm.models import get_pretrained_cfg

        cfg = get_pretrained_cfg(backbone)
    except Exception:  # an unknown id: timm itself will say so
        return None
    repo = getattr(cfg, "hf_hub_id", None) if cfg is not None else None
    return str(repo) if repo else None


def hub_cached_file(repo: str) -> Path | None:
    """A weights file of ``repo`` in the local Hugging Face cache (what timm reads offline)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - timm requires huggingface_hub
        return None
    for name in HUB_FILES:
        found = try_to_load_from_cache(repo, name)
        if isinstance(found, str) and Path(found).is_file():
            return Path(found)
    return None


@lru_cache(maxsize=8)
def hub_reachable(repo: str, timeout: float = 5.0) -> bool:
    """Whether the hub answers for ``repo``'s weights file (``False`` when ``HF_HUB_OFFLINE`` is
    set). Asked once per process and repository."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return False
    try:
        from huggingface_hub import get_hf_file_metadata, hf_hub_url

        get_hf_file_metadata(hf_hub_url(repo, HUB_FILES[0]), timeout=timeout)
    except Exception:  # no network, no DNS, a proxy refusing, a hub error: unreachable
        return False
    return True


def suggested_weights_path(backbone: str, data_root: str | Path | None = None) -> Path:
    """Where the error suggests putting a timm model's weights file (the layout of the hub's
    repository, under the data root; the rehearsal's stand-in writers use it too)."""
    root = Path(data_root) if data_root is not None else Path("<data root>")
    return root / "weights" / "timm" / backbone / HUB_FILES[0]


def _file_problem(path: Any) -> str | None:
    p = Path(str(path)).expanduser()
    if not p.is_file():
        return f"no such file ({p.resolve() if p.is_absolute() else p})"
    return None


def require_backbone_weights(
    backbone: str,
    weights: str | Path | None,
    key: str = "weights",
    data_root: str | Path | None = None,
) -> None:
    """Raise :class:`MissingWeightsError` unless ``backbone``'s pretrained weights can be had:
    the file ``weights`` when it is set, else timm's hub (cached locally, or reachable)."""
    if weights:
        problem = _file_problem(weights)
        if problem:
            raise MissingWeightsError(
                key,
                str(weights),
                f"the weights file of the backbone '{backbone}' is missing: {problem}. Put the "
                f"file there (timm's {HUB_FILES[0]} for this id, or a .pth/.npz checkpoint) or "
                f"point {key} at it",
            )
        return
    repo = hub_repo(backbone)
    if repo is None:
        raise MissingWeightsError(
            key,
            weights,
            f"the backbone '{backbone}' needs pretrained weights and timm knows no hub "
            f"repository for it: set {key}=<a local weights file>",
        )
    if hub_cached_file(repo) is not None or hub_reachable(repo):
        return
    target = suggested_weights_path(backbone, data_root)
    raise MissingWeightsError(
        key,
        weights,
        f"the backbone '{backbone}' needs pretrained weights: no file is set, the Hugging Face "
        f"cache has none and the hub cannot be reached. Put timm's {HUB_FILES[0]} "
        f"(https://huggingface.co/{repo}) at {target} and set {key}=<that file>, or run once "
        "where huggingface.co is reachable",
    )


def weights_needed(params: Any, prefix: str = "params") -> list[WeightsNeed]:
    """Every weights file the parameters ask for, found by walking the parameter dataclasses:

    * a block with ``source``, ``backbone`` and ``weights`` fields and ``source == "backbone"``
      (the cl figures' ``features``) needs ``backbone``'s pretrained weights;
    * a ``checkpoints`` mapping (the ip figures' dataset → state-dict file) needs each file.
    """
    needs: list[WeightsNeed] = []
    if not (dataclasses.is_dataclass(params) and not isinstance(params, type)):
        return needs
    values = {f.name: getattr(params, f.name) for f in dataclasses.fields(params)}
    if {"source", "backbone", "weights"} <= values.keys() and values["source"] == "backbone":
        needs.append(WeightsNeed(f"{prefix}.weights", values["weights"], str(values["backbone"])))
    for name, value in values.items():
        key = f"{prefix}.{name}"
        if name == "checkpoints" and isinstance(value, dict):
            needs += [WeightsNeed(f"{key}.{k}", v) for k, v in sorted(value.items()) if v]
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                needs += weights_needed(item, f"{key}[{i}]")
        else:
            needs += weights_needed(value, key)
    return needs


def check_weights(
    params: Any,
    data_root: str | Path | None = None,
    features_cached: Callable[[str], bool] | None = None,
) -> list[WeightsNeed]:
    """Check, before any compute, that every weights file ``params`` needs can be had.

    Raises :class:`MissingWeightsError` for the first that cannot. A backbone for which
    ``features_cached(backbone)`` is true (its features are already cached, e.g.
    :func:`privrepro.continual.features.has_cached_features`) is only warned about: cached units
    run without weights, and a unit that does need the backbone stops with the same line.
    Returns what was checked.
    """
    needs = weights_needed(params)
    for need in needs:
        if need.backbone is None:
            problem = _file_problem(need.value)
            if problem:
                raise MissingWeightsError(
                    need.key,
                    str(need.value),
                    f"checkpoint file missing: {problem}. Put the state_dict file there, or "
                    "remove the key to train the model instead",
                )
            continue
        try:
            require_backbone_weights(need.backbone, need.value, need.key, data_root)
        except MissingWeightsError as exc:
            if features_cached is not None and not need.value and features_cached(need.backbone):
                log.warning("%s (features already cached: continuing)", exc)
                continue
            raise
    return needs
