"""Base classifiers of the ip experiments: trained once, cached, shared by every figure.

The ip paper uses "pre-existing" models (timm ResNet-18 for CIFAR, Araujo et al.'s SLL small);
their weights cannot be downloaded here, so a base model is either loaded from a user's
checkpoint (a ``state_dict`` file, read with ``weights_only=True``) or trained by the recipe in
:class:`BaseModelSpec`. The trained state, its clean test accuracy and its clean test logits are
cached under ``<cache_dir>/ip/<key>/`` (atomic writes, a file lock against concurrent builders),
where ``key`` hashes everything the model depends on.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from privrepro.bounded_read import CACHE_JSON_BYTES, read_bytes, read_json
from privrepro.inference.data import ImageData
from privrepro.inference.networks import ArchSpec, NormalizedNet, build_network
from privrepro.loops import PLAIN, Loops
from privrepro.seeding import torch_stream
from privrepro.store.atomic import atomic_write_bytes, atomic_write_text
from privrepro.training.classifier import (
    TrainConfig,
    predict_logits,
    seeded_build,
    train_classifier,
)

__all__ = [
    "STATE_BYTES",
    "BaseModel",
    "BaseModelSpec",
    "get_base_model",
    "load_cached_state",
    "load_state",
    "margin_xent",
    "save_state",
    "set_aside",
    "spec_key",
]


@dataclass(frozen=True)
class BaseModelSpec:
    """What a base model depends on: architecture, data, training recipe, optional checkpoint.

    ``loss`` is ``"xent"`` or ``"margin_xent"`` (Araujo et al.'s SLL loss: cross-entropy of
    ``(logits − offset·onehot)/temperature``, scaled by the temperature).
    """

    arch: ArchSpec
    dataset: str
    train: TrainConfig
    loss: str = "xent"
    margin_offset: float = 1.5 * math.sqrt(2.0)
    temperature: float = 0.25
    checkpoint: str | None = None
    data: dict[str, Any] = field(default_factory=dict)


def spec_key(spec: BaseModelSpec, seed: int, extra: dict[str, Any] | None = None) -> str:
    """A short stable hash of the spec, the root seed and ``extra``."""
    text = json.dumps(
        {"spec": asdict(spec), "seed": seed, "extra": extra or {}}, sort_keys=True, default=str
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def margin_xent(offset: float, temperature: float):  # type: ignore[no-untyped-def]
    """Araujo et al. (2023)'s training loss for SLL networks (``main.py`` defaults)."""

    def loss(logits: Tensor, labels: Tensor) -> Tensor:
        onehot = F.one_hot(labels, logits.shape[-1]).to(logits.dtype)
        return F.cross_entropy((logits - offset * onehot) / temperature, labels) * temperature

    return loss


def save_state(model: torch.nn.Module, path: Path) -> None:
    """Write the model's ``state_dict`` atomically."""
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    atomic_write_bytes(path, buf.getvalue())


#: The largest checkpoint or cached tensor file read (a ResNet-18 state is about 45 MB).
STATE_BYTES = 4 << 30


def _load_tensors(path: Path, tree: str | Path | None = None) -> Any:
    """``torch.load`` (``weights_only=True``) of a regular file of at most :data:`STATE_BYTES`,
    read bounded (:func:`~privrepro.bounded_read.read_bytes`: never a pipe or a device)."""
    data = read_bytes(path, STATE_BYTES, tree=tree)
    return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)


def load_state(model: torch.nn.Module, path: str | Path) -> None:
    """Load a ``state_dict`` (``weights_only=True``: no code is unpickled). A checkpoint holding
    ``{"state_dict": ...}`` or a body without the normaliser is accepted too. The file must be a
    regular file (reached through any link) of at most :data:`STATE_BYTES`."""
    try:
        state = _load_tensors(Path(path), tree="/")
    except Exception as exc:  # truncated, not a checkpoint, or naming more than tensors
        from privrepro.data.registry import DamagedDataError

        raise DamagedDataError(
            "checkpoint",
            Path(path),
            f"it does not load as a weights-only state dict ({type(exc).__name__})",
            "Replace it with the checkpoint as written, or delete it to train it again",
        ) from exc
    if isinstance(state, dict) and "state_dict" in state:
        state = state["state_dict"]
    if isinstance(model, NormalizedNet) and not any(k.startswith("body.") for k in state):
        missing = model.body.load_state_dict(state, strict=True)
    else:
        missing = model.load_state_dict(state, strict=True)
    del missing


@dataclass
class BaseModel:
    """A ready classifier with its clean test logits and accuracy, the spec it was built from,
    and its cache key and folder."""

    model: NormalizedNet
    test_logits: Tensor
    clean_accuracy: float
    key: str
    path: Path
    spec: BaseModelSpec


def _build(spec: BaseModelSpec, data: ImageData, generator: torch.Generator) -> NormalizedNet:
    c, h, _ = data.shape
    model = seeded_build(
        lambda: build_network(spec.arch, data.num_classes, c, h, data.mean, data.std), generator
    )
    assert isinstance(model, NormalizedNet)
    return model


def get_base_model(
    spec: BaseModelSpec,
    data: ImageData,
    cache_dir: Path,
    seed: int,
    device: str = "cpu",
    log: Any = None,
    loops: Loops = PLAIN,
) -> BaseModel:
    """Load the cached base model of ``spec``, or build it (checkpoint or training) and cache it.

    The training stream is ``(seed, "ip-base", key)``: figures share the model whatever unit asks.
    ``loops`` runs the training's and the test predictions' loops (:mod:`privrepro.loops`; the
    training's labelled ``base model <desc>``).
    """
    from filelock import FileLock

    key = spec_key(spec, seed)
    folder = Path(cache_dir) / "ip" / f"base-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    gen = torch_stream(seed, "ip-base", key, device="cpu")
    model = _build(spec, data, gen)
    with FileLock(str(folder / ".lock")):
        cached = _cached_base(folder, model, len(data.y_test))
        if cached is not None:
            logits, accuracy = cached
            model.to(device).eval()
            return BaseModel(model, logits, accuracy, key, folder, spec)
        if spec.checkpoint:
            load_state(model, spec.checkpoint)
            history: dict[str, Any] = {"checkpoint": spec.checkpoint}
        else:
            loss = (
                margin_xent(spec.margin_offset, spec.temperature)
                if spec.loss == "margin_xent"
                else None
            )
            res = train_classifier(
                model,
                data.x_train,
                data.y_train,
                spec.train,
                gen,
                device,
                loss_fn=loss,
                loops=loops.labelled("base model"),
            )
            history = {"train_loss": res.train_loss}
        model.to(device).eval()
        logits = predict_logits(model, data.x_test, device=device, loops=loops)
        acc = float((logits.argmax(1) == data.y_test).float().mean())
        if log is not None:
            log.info(
                "base model %s (%s on %s): clean test accuracy %.4f",
                key,
                spec.arch.name,
                spec.dataset,
                acc,
            )
        save_state(model, folder / "model.pt")
        buf = io.BytesIO()
        torch.save(logits, buf)
        atomic_write_bytes(folder / "logits.pt", buf.getvalue())
        atomic_write_text(
            folder / "meta.json",
            json.dumps(
                {"spec": asdict(spec), "seed": seed, "clean_accuracy": acc, **history},
                indent=1,
                default=str,
            ),
        )
    return BaseModel(model, logits, acc, key, folder, spec)


_CACHED = ("model.pt", "logits.pt", "meta.json")


def set_aside(folder: Path, names: tuple[str, ...], why: str) -> None:
    """Move a damaged cache entry's files aside (``.corrupt-<name>-<time>`` in its folder), in
    one warning line; the caller holds the entry's lock and builds it again."""
    stamp = time.time_ns()
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.rename(folder / name, folder / f".corrupt-{name}-{stamp}")
    logging.getLogger("privrepro.inference").warning(
        "cache %s is damaged (%s): moved aside, built again", folder, why
    )


def load_cached_state(model: torch.nn.Module, path: Path) -> bool:
    """Load a cached ``state_dict`` into ``model``; ``False`` (and the file set aside, one line)
    when it is not one: a pipe, a device, a link out of the cache, a pickle naming more than
    tensors, cut short, or of another shape. ``False`` when absent."""
    if not os.path.lexists(path):
        return False
    try:
        state = _load_tensors(path, tree=path.parent)
        ref = model.state_dict()
        same = isinstance(state, dict) and set(state) == set(ref)
        if not same or any(
            not isinstance(state[k], Tensor) or state[k].shape != ref[k].shape for k in ref
        ):  # checked before loading: a failed load leaves ``model`` as it was
            raise ValueError("not a state of this model")
        model.load_state_dict(state, strict=True)
    except Exception as exc:  # UnsafeFile, UnpicklingError, a missing or misshapen tensor
        set_aside(path.parent, (path.name,), f"{path.name}: {type(exc).__name__}")
        return False
    return True


def _cached_base(folder: Path, model: torch.nn.Module, n_test: int) -> tuple[Tensor, float] | None:
    """The cached base model (loaded into ``model``), its clean test logits and accuracy, or
    ``None`` when the cache holds none; a damaged entry is set aside (one line) and ``None``."""
    if not any(os.path.lexists(folder / n) for n in _CACHED):
        return None
    try:
        logits = _load_tensors(folder / "logits.pt", tree=folder)
        meta = read_json(folder / "meta.json", CACHE_JSON_BYTES)
        accuracy = float(meta["clean_accuracy"])
        if not isinstance(logits, Tensor) or logits.ndim != 2 or logits.shape[0] != n_test:
            raise ValueError("logits.pt does not hold the test set's logits")
        if not 0.0 <= accuracy <= 1.0:
            raise ValueError(f"clean_accuracy = {accuracy} is not in [0, 1]")
    except Exception as exc:  # UnsafeFile, UnpicklingError, not JSON, a missing key
        set_aside(folder, _CACHED, f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}")
        return None
    if not load_cached_state(model, folder / "model.pt"):
        set_aside(folder, _CACHED, "model.pt does not load")
        return None
    return logits, accuracy
