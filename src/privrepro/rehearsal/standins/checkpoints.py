"""Randomly initialised checkpoints in the formats the paper profile loads.

* **ViT-B/16** (cl) — ``weights/timm/vit_base_patch16_224.augreg_in21k/model.safetensors``: the
  state dict of timm's ``vit_base_patch16_224.augreg_in21k`` as its Hugging Face repository holds
  it (safetensors, timm's key names, the 21,843-class ImageNet-21k head included), plus the
  repository's ``config.json``. Point ``params.features.weights`` at the file; timm drops the
  head when the backbone is built with ``num_classes=0``
  (:func:`privrepro.continual.features.create_backbone`).
* **ip base models** — ``weights/ip/sll_small_<dataset>.pt`` (``{"state_dict": body}``, the form
  of a training checkpoint) and ``weights/ip/resnet18_<dataset>.pth`` (the bare state dict, as
  timm and the detectors package save ResNet-18 CIFAR models), for CIFAR-10 and CIFAR-100: the
  networks of :func:`privrepro.inference.networks.build_network` with the ip paper profile's
  architectures (SLL small: 20 conv layers, 7 dense, width 45; ResNet-18 with the CIFAR stem).
  Point ``params.sll.checkpoints`` / ``params.resnet.checkpoints`` (dataset → file) at them;
  :func:`privrepro.inference.basemodels.load_state` reads both forms.

Weights are drawn by each architecture's own initialisation under a seeded, forked torch
generator; the safetensors header and the ip checkpoints' dict say they are stand-ins.
"""

from __future__ import annotations

import io
import json
from typing import Any

from privrepro.rehearsal.standins.marker import STATEMENT, MarkedFolder, WriteRequest
from privrepro.seeding import torch_stream

__all__ = [
    "IP_DATASETS",
    "VIT_B16",
    "ip_checkpoint",
    "ip_checkpoint_name",
    "timm_checkpoint",
    "vit_b16_folder",
    "write_ip_resnet18",
    "write_ip_sll",
    "write_vit_b16",
]


#: the cl paper profile's backbone (``features.backbone``)
VIT_B16 = "vit_base_patch16_224.augreg_in21k"
#: the ip datasets and their class counts
IP_DATASETS = {"cifar10": 10, "cifar100": 100}


def vit_b16_folder(backbone: str = VIT_B16) -> str:
    """``weights/timm/<timm id>`` (the Hugging Face repository ``timm/<id>``), under the root."""
    return f"weights/timm/{backbone}"


def ip_checkpoint_name(arch: str, dataset: str) -> str:
    """The file name of an ip stand-in checkpoint under ``weights/ip``."""
    return f"sll_small_{dataset}.pt" if arch == "sll" else f"{arch}_{dataset}.pth"


def write_vit_b16(req: WriteRequest) -> dict[str, Any]:
    """``model.safetensors`` and ``config.json`` of a random ``vit_base_patch16_224.augreg_in21k``."""
    return timm_checkpoint(req.out, VIT_B16, req.seed)


def timm_checkpoint(out: MarkedFolder, name: str, seed: int) -> dict[str, Any]:
    """``model.safetensors`` and ``config.json`` of the timm model ``name`` (its default head),
    randomly initialised, as its Hugging Face repository ``timm/<name>`` holds them."""
    import timm
    from safetensors.torch import save
    from timm.models import get_pretrained_cfg

    from privrepro.training.classifier import seeded_build

    model = seeded_build(
        lambda: timm.create_model(name, pretrained=False),
        torch_stream(seed, "standin-weights", name),
    )
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    out.write_bytes(
        "model.safetensors", save(state, metadata={"format": "pt", "privrepro": STATEMENT})
    )
    cfg = get_pretrained_cfg(name)
    pretrained = cfg.to_dict() if cfg is not None else {}
    config = {
        "architecture": pretrained.get("architecture", "vit_base_patch16_224"),
        "num_classes": int(getattr(model, "num_classes", 0)),
        "num_features": int(getattr(model, "num_features", 0)),
        "global_pool": getattr(model, "global_pool", "token"),
        # the hub's config: no download source, no custom (.npz) loader for the safetensors file
        "pretrained_cfg": {
            k: v for k, v in pretrained.items() if k not in ("url", "hf_hub_id", "custom_load")
        },
        "privrepro": STATEMENT,
    }
    out.write_bytes("config.json", (json.dumps(config, indent=2, default=str) + "\n").encode())
    return {"parameters": int(sum(v.numel() for v in state.values())), "tensors": len(state)}


def _ip_body(arch: str, dataset: str, seed: int) -> Any:
    from privrepro.inference.data import CIFAR_STATS
    from privrepro.inference.networks import ArchSpec, build_network
    from privrepro.training.classifier import seeded_build

    mean, std = CIFAR_STATS[dataset]
    net = seeded_build(
        lambda: build_network(ArchSpec(arch), IP_DATASETS[dataset], 3, 32, mean, std),
        torch_stream(seed, "standin-weights", arch, dataset),
    )
    return net.body


def ip_checkpoint(out: MarkedFolder, arch: str, dataset: str, seed: int) -> int:
    """Write the random ``arch`` (``sll`` or ``resnet18``) base model of ``dataset`` (``cifar10``
    or ``cifar100``) into ``out``; returns its number of parameters."""
    import torch

    body = _ip_body(arch, dataset, seed)
    state = body.state_dict()
    obj: Any = {"state_dict": state, "privrepro": STATEMENT} if arch == "sll" else state
    buf = io.BytesIO()
    torch.save(obj, buf)
    out.write_bytes(ip_checkpoint_name(arch, dataset), buf.getvalue())
    return int(sum(p.numel() for p in body.parameters()))


def _write_ip(out: MarkedFolder, arch: str, seed: int) -> dict[str, Any]:
    return {"parameters": {d: ip_checkpoint(out, arch, d, seed) for d in IP_DATASETS}}


def write_ip_sll(req: WriteRequest) -> dict[str, Any]:
    """``sll_small_{cifar10,cifar100}.pt``: SLL small bodies in a ``{"state_dict": ...}`` dict."""
    return _write_ip(req.out, "sll", req.seed)


def write_ip_resnet18(req: WriteRequest) -> dict[str, Any]:
    """``resnet18_{cifar10,cifar100}.pth``: ResNet-18 (CIFAR stem) bare state dicts."""
    return _write_ip(req.out, "resnet18", req.seed)
