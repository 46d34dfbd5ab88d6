"""Host-side pixel store of the FiLM path: exactness against the backbone's transform, the
on-disk cache, row selection across parts, and DP-SGD that never holds more than one physical
chunk of images on the device."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from privrepro.continual.features import _to_pil, backbone_transform, create_backbone
from privrepro.continual.peft import member_logits, small_vit, train_member
from privrepro.continual.pixels import (
    HostImages,
    cached_pixels,
    pixel_cache_path,
    pixels_of,
    split_transform,
)
from privrepro.training.dpsgd import DPSGDHyper
from privrepro.training.rows import gather_rows, num_rows, select_rows

TINY = {"img_size": 32, "patch_size": 8, "depth": 1, "embed_dim": 48, "num_heads": 2}


def _images(rng: np.random.Generator) -> list[np.ndarray]:
    """Colour and grey uint8 images of several sizes (the benchmarks' mix)."""
    return [
        rng.integers(0, 256, (24, 24, 3), dtype=np.uint8),
        rng.integers(0, 256, (28, 28), dtype=np.uint8),
        rng.integers(0, 256, (40, 17, 3), dtype=np.uint8),
        rng.integers(0, 256, (32, 32, 3), dtype=np.uint8),
    ]


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [("vit_tiny_patch16_224", TINY), ("resnet18", {})],  # mean/std 0.5 and ImageNet's
)
def test_gathered_batch_is_the_transform_bit_for_bit(name: str, kwargs: dict[str, Any]) -> None:
    """``gather`` = torchvision's ``ToTensor`` + ``Normalize`` after the cached geometric steps:
    the same float32 operations, so equal to the last bit (reference: the timm transform
    applied image by image, as the feature cache does)."""
    model = create_backbone(name, pretrained=False, **kwargs)
    tf = backbone_transform(model)
    pt = split_transform(tf)
    ims = _images(np.random.default_rng(0))
    want = torch.stack([tf(_to_pil(im)) for im in ims])
    got = HostImages([pixels_of(ims, pt)], pt.mean, pt.std).gather()
    assert got.dtype == torch.float32
    assert torch.equal(got, want)


def test_split_transform_refuses_other_forms() -> None:
    from torchvision import transforms as tv

    with pytest.raises(ValueError, match=r"\['Resize', 'ToTensor'\]"):
        split_transform(tv.Compose([tv.Resize(8), tv.ToTensor()]))


def test_cache_key_follows_the_geometry() -> None:
    small = create_backbone("vit_tiny_patch16_224", pretrained=False, **TINY)
    other = create_backbone("vit_tiny_patch16_224", pretrained=False, **{**TINY, "img_size": 48})
    assert split_transform(backbone_transform(small)).key != (
        split_transform(backbone_transform(other)).key
    )


def test_cached_pixels_written_once_then_memory_mapped(tmp_path: Path) -> None:
    pt = split_transform(
        backbone_transform(create_backbone("vit_tiny_patch16_224", pretrained=False, **TINY))
    )
    ims = _images(np.random.default_rng(1)) * 3
    path = pixel_cache_path(tmp_path, "vit/tiny", pt.key, "cifar100", "train")
    assert path.parent == tmp_path / "cl" / "images"
    calls: list[int] = []

    def load() -> list[np.ndarray]:
        calls.append(1)
        return ims

    first = cached_pixels(path, load, pt, chunk=5)  # chunks of 5 over 12 images
    assert isinstance(first, np.memmap) and first.shape == (12, 3, 32, 32)
    np.testing.assert_array_equal(first, pixels_of(ims, pt))
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left

    def fail() -> list[np.ndarray]:
        raise AssertionError("the cache must be read, not rebuilt")

    again = cached_pixels(path, fail, pt)
    np.testing.assert_array_equal(again, first)
    assert calls == [1]


def test_failed_write_leaves_no_cache(tmp_path: Path) -> None:
    pt = split_transform(
        backbone_transform(create_backbone("vit_tiny_patch16_224", pretrained=False, **TINY))
    )
    path = tmp_path / "p.npy"
    bad = [np.zeros((8, 8, 3), np.uint8), "missing.png"]
    with pytest.raises(FileNotFoundError):
        cached_pixels(path, lambda: bad, pt, chunk=1)
    assert list(tmp_path.iterdir()) == []


def test_rows_select_and_gather_across_parts() -> None:
    rng = np.random.default_rng(2)
    parts = [rng.integers(0, 256, (n, 3, 4, 4), dtype=np.uint8) for n in (5, 1, 7)]
    full = np.concatenate(parts)
    store = HostImages(parts, (0.0, 0.0, 0.0), (1 / 255, 1 / 255, 1 / 255))
    ref = torch.as_tensor(full, dtype=torch.float32)  # mean 0, std 1/255: the pixel values
    mask = rng.random(13) < 0.6
    index = np.array([12, 0, 5, 6, 5])
    a = select_rows(store, mask)
    b = select_rows(a, torch.as_tensor(index[index < num_rows(a)]))
    ref_b = ref[torch.as_tensor(mask)][torch.as_tensor(index[index < num_rows(a)])]
    torch.testing.assert_close(gather_rows(b), ref_b, atol=1e-4, rtol=0)
    torch.testing.assert_close(gather_rows(store, slice(3, 9)), ref[3:9], atol=1e-4, rtol=0)
    np.testing.assert_array_equal(store.subset(index).pixels(), full[index])
    assert store.subset(index).shape == (5, 3, 4, 4)
    with pytest.raises(IndexError):
        HostImages(parts, (0, 0, 0), (1, 1, 1), rows=np.array([13]))


class _CountingImages(HostImages):
    largest = 0

    def gather(self, index: Any = slice(None)) -> torch.Tensor:
        out = super().gather(index)
        _CountingImages.largest = max(_CountingImages.largest, int(out.shape[0]))
        return out


def test_film_dpsgd_on_host_images_equals_device_tensor() -> None:
    """A FiLM member trained from host pixels equals the one trained from the same images as
    one tensor, step for step (same generator: same Poisson batches and noise), and no gather
    returns more than one physical chunk."""
    rng = np.random.default_rng(3)
    pixels = rng.integers(0, 256, (60, 3, 16, 16), dtype=np.uint8)
    y = rng.integers(0, 4, 60)
    mean, std = (0.5, 0.4, 0.3), (0.2, 0.25, 0.3)
    store = _CountingImages([pixels], mean, std)
    dense = store.gather()
    vit = small_vit(torch.Generator().manual_seed(0), img_size=16, patch_size=4, embed_dim=16)
    hp = DPSGDHyper(epochs=2.0, batch_size=20.0, lr=1e-2, clip=0.5, epsilon=4.0)
    _CountingImages.largest = 0
    members = [
        train_member(
            "film",
            x,
            y,
            [0, 1, 2, 3],
            hp,
            generator=torch.Generator().manual_seed(7),
            backbone=vit,
            physical_batch=8,
        )
        for x in (store, dense)
    ]
    assert 0 < _CountingImages.largest <= 8
    for p, q in zip(members[0].model.parameters(), members[1].model.parameters(), strict=True):
        assert torch.equal(p, q)
    assert members[0].n_train == members[1].n_train == 60
    # the same weights over batches of 7 and of all 60 rows: equal within float32 rounding (the
    # BLAS may round a 7-row product differently from a 60-row one; 1e-5 is many roundings of a
    # ViT-tiny forward, far below the O(1) of a wrong row or a skipped batch)
    z_store = member_logits(members[0], store, batch=7)
    torch.testing.assert_close(z_store, member_logits(members[1], dense), rtol=1e-5, atol=1e-5)
    assert members[0].model.head.weight.abs().sum() > 0  # it trained
