"""A PEFT Ensemble's members, trained once for everything that asks for them.

More in ``docs/modules.md``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from privrepro.bounded_read import CACHE_JSON_BYTES, read_bytes, read_json
from privrepro.continual.peft.members import Member, make_film, new_head
from privrepro.store.atomic import atomic_write_bytes, fsync_dir
from privrepro.store.build_folders import owner_record, sweep_build_folders
from privrepro.training.dpsgd import DPSGDHyper, PrivacyRecord, TrainLog
from privrepro.training.rows import Rows

__all__ = [
    "MAX_BYTES",
    "member_folder",
    "member_key",
    "member_stream",
    "rows_digest",
    "shared_members",
]

#: ensembles with more trainable parameters than this (float32 bytes) are not kept
MAX_BYTES = 256 * 2**20


def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _array_digest(a: Any) -> str:
    arr = np.ascontiguousarray(np.asarray(a))
    return hashlib.sha256(f"{arr.dtype}{arr.shape}".encode() + arr.tobytes()).hexdigest()


def rows_digest(x: Rows) -> str:
    """A digest of training rows: a tensor's bytes; for host images (FiLM on real images), the
    pixel-cache files they read (path and size) and the rows selected."""
    if isinstance(x, torch.Tensor):
        return _array_digest(x.detach().cpu().numpy())
    parts = [
        (str(getattr(p, "filename", "")), tuple(p.shape), os.path.getsize(p.filename))
        if getattr(p, "filename", None)
        else (_array_digest(p),)
        for p in getattr(x, "parts", [])
    ]
    rows = getattr(x, "rows", None)
    return _digest([type(x).__name__, parts, None if rows is None else _array_digest(rows)])


def member_key(
    *,
    kind: str,
    train_x: Rows,
    train_y: np.ndarray,
    tasks: Sequence[np.ndarray],
    label_ids: Sequence[np.ndarray],
    hypers: Sequence[DPSGDHyper],
    settings: Mapping[str, Any],
    seed: int,
    device: str,
) -> str:
    """The digest of everything a PEFT Ensemble's members are trained from.

    Args:
        kind: ``"film"`` or ``"head"``.
        train_x, train_y: the run's training rows and global labels (digested).
        tasks: each task's training indices (the scenario's split).
        label_ids: each member's released label space.
        hypers: each member's DP-SGD hyperparameters (after the transfer to its task's size).
        settings: the settings groups that shape the training (training, FiLM, data).
        seed: the root seed; device: ``"cpu"`` or ``"cuda"`` (their random streams differ).
    """
    return _digest(
        {
            "kind": kind,
            "x": rows_digest(train_x),
            "y": _array_digest(np.asarray(train_y, dtype=np.int64)),
            "tasks": [_array_digest(np.asarray(t, dtype=np.int64)) for t in tasks],
            "labels": [_array_digest(np.asarray(i, dtype=np.int64)) for i in label_ids],
            "hypers": [asdict(h) for h in hypers],
            "settings": dict(settings),
            "seed": int(seed),
            "device": torch.device(device).type,
        }
    )[:24]


def member_stream(seed: int, key: str, device: str = "cpu") -> torch.Generator:
    """The DP-SGD stream (Poisson sampling, noise) of the members with ``key``."""
    from privrepro.seeding import torch_stream

    return torch_stream(seed, "cl-peft-members", key, device=device)  # type: ignore[no-any-return]


def member_folder(cache_dir: str | Path, key: str) -> Path:
    """``<cache_dir>/cl/members/<key>``."""
    return Path(cache_dir) / "cl" / "members" / key


def _trainable(model: nn.Module) -> dict[str, np.ndarray]:
    return {
        name: p.detach().cpu().numpy() for name, p in model.named_parameters() if p.requires_grad
    }


def _record(member: Member) -> dict[str, Any]:
    log = member.log
    return {
        "kind": member.kind,
        "label_ids": [int(i) for i in member.label_ids],
        "n_train": member.n_train,
        "log": None
        if log is None
        else {
            "privacy": asdict(log.privacy),
            "steps": log.steps,
            "mean_batch": log.mean_batch,
            "last_loss": log.last_loss,
        },
    }


def _restore(
    record: Mapping[str, Any],
    arrays: Mapping[str, np.ndarray],
    backbone: nn.Module | None,
    dim: int,
    device: torch.device,
) -> Member:
    ids = np.asarray(record["label_ids"], dtype=np.int64)
    model: nn.Module
    if record["kind"] == "head":
        model = new_head(dim, ids.size, device=device)
    else:
        if backbone is None:
            raise ValueError("restoring a FiLM member needs the backbone")
        model = make_film(backbone, ids.size)
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, value in arrays.items():
            params[name].copy_(torch.as_tensor(value))
    log = record["log"]
    train_log = (
        None
        if log is None
        else TrainLog(
            PrivacyRecord(**log["privacy"]), log["steps"], log["mean_batch"], log["last_loss"]
        )
    )
    return Member(record["kind"], ids, model, train_log, int(record["n_train"]))


def _load(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, np.ndarray]]]:
    """The kept members, read bounded: ``members.json`` and each ``member<t>.npz`` a regular
    file in the folder (never a pipe or a device), the JSON depth-bounded, no pickle."""
    records = read_json(folder / "members.json", CACHE_JSON_BYTES, tree=folder)["members"]
    arrays = []
    for t in range(len(records)):
        data = read_bytes(folder / f"member{t}.npz", MAX_BYTES + (1 << 20), tree=folder)
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays.append({k: z[k] for k in z.files})
    return records, arrays


#: A member folder being written whose owner has left no trace for this long is abandoned
#: (a writer on another host records no heartbeat: one day leaves any training its time).
STALE_AFTER_S = 24 * 3600.0


def shared_members(
    key: str,
    cache_dir: str | Path | None,
    train: Callable[[], Iterator[Member]],
    *,
    nb_tasks: int,
    backbone: nn.Module | None,
    dim: int,
    device: str | torch.device,
    max_bytes: int = MAX_BYTES,
) -> Iterator[Member]:
    """The members of key ``key``: read from ``<cache_dir>/cl/members/<key>/`` when kept there,
    else from ``train()`` (which must draw from :func:`member_stream` of ``key``) and kept once
    all ``nb_tasks`` are trained. ``cache_dir=None`` keeps nothing.

    Args:
        backbone: the pre-trained ViT FiLM members are rebuilt on; dim: a head member's input
            size; device: where rebuilt members live.
    """
    dev = torch.device(device)
    folder = None if cache_dir is None else member_folder(cache_dir, key)
    if folder is not None and os.path.lexists(folder / "members.json"):
        try:
            records, stored = _load(folder)
        except (OSError, ValueError, KeyError, TypeError) as exc:  # damaged: trained again
            aside = folder.with_name(f".corrupt-{folder.name}-{time.time_ns()}")
            with contextlib.suppress(OSError):
                os.rename(folder, aside)
            logging.getLogger("privrepro.continual").warning(
                "kept members %s are damaged (%s): moved aside, trained again", folder, exc
            )
        else:
            for record, arr in zip(records, stored, strict=True):
                yield _restore(record, arr, backbone, dim, dev)
            return
    tmp: Path | None = None
    kept: list[dict[str, Any]] = []
    size = 0
    try:
        for member in train():
            arrays = _trainable(member.model)
            size += sum(a.nbytes for a in arrays.values())
            if folder is not None and size <= max_bytes:
                if tmp is None:
                    folder.parent.mkdir(parents=True, exist_ok=True)
                    sweep_build_folders(folder.parent, STALE_AFTER_S)  # killed writers' folders
                    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{key}-", dir=folder.parent))
                    atomic_write_bytes(tmp / ".owner.json", json.dumps(owner_record()).encode())
                buf = io.BytesIO()
                np.savez(buf, **arrays)  # type: ignore[arg-type]
                atomic_write_bytes(tmp / f"member{len(kept)}.npz", buf.getvalue())
            kept.append(_record(member))
            yield member
        if tmp is not None and folder is not None and len(kept) == nb_tasks and size <= max_bytes:
            body = json.dumps({"key": key, "members": kept}, sort_keys=True, indent=1)
            atomic_write_bytes(tmp / "members.json", body.encode())
            try:
                os.rename(tmp, folder)  # published whole; another worker's copy may have won
                fsync_dir(folder.parent)
                tmp = None
            except OSError:
                pass
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
