"""Seeded synthetic pixels: smooth class patterns plus per-image variation and noise.

Every image is ``clip(a · template[y] + b · own + noise)``: ``template[y]`` is a smooth random
field per class (a coarse random grid bilinearly upsampled), ``own`` a smooth field of the image's
own, ``noise`` independent Gaussian pixel noise. Classes are therefore separable (a classifier
trained on a stand-in learns above chance, which shows that images and labels stay aligned through
a loader) while no image resembles real data. Upsampling is a pair of interpolation matrices
applied with one ``einsum`` per chunk, so a chunk of thousands of images is one vectorised call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "PatternSpec",
    "class_templates",
    "interpolation_matrix",
    "pattern_image",
    "pattern_images",
]


@dataclass(frozen=True)
class PatternSpec:
    """How the pixels of one stand-in dataset look.

    Attributes:
        channels: 1 (grey) or 3 (RGB).
        coarse: side of the random grids that are upsampled (the patterns' smoothness).
        class_weight: weight ``a`` of the class template.
        own_weight: weight ``b`` of the image's own smooth field.
        noise: standard deviation of the pixel noise (in [0, 1] units).
    """

    channels: int = 3
    coarse: int = 4
    class_weight: float = 0.6
    own_weight: float = 0.4
    noise: float = 0.08


def interpolation_matrix(out: int, size: int) -> np.ndarray:
    """``float32 [out, size]``: bilinear interpolation from ``size`` samples to ``out``
    (align-corners; rows sum to 1)."""
    if size == 1:
        return np.ones((out, 1), np.float32)
    pos = np.linspace(0.0, size - 1.0, out)
    lo = np.minimum(np.floor(pos).astype(int), size - 2)
    frac = (pos - lo).astype(np.float32)
    m = np.zeros((out, size), np.float32)
    rows = np.arange(out)
    m[rows, lo] = 1.0 - frac
    m[rows, lo + 1] += frac
    return m


def class_templates(rng: np.random.Generator, num_classes: int, spec: PatternSpec) -> np.ndarray:
    """``float32 [num_classes, channels, coarse, coarse]`` in [0, 1]: one coarse grid per class."""
    return rng.uniform(0.0, 1.0, (num_classes, spec.channels, spec.coarse, spec.coarse)).astype(
        np.float32
    )


def pattern_images(
    rng: np.random.Generator,
    labels: np.ndarray,
    templates: np.ndarray,
    height: int,
    width: int,
    spec: PatternSpec,
) -> np.ndarray:
    """``uint8 [N, height, width, channels]``: one image per label (see the module docstring)."""
    n = len(labels)
    k = spec.coarse
    grids = spec.class_weight * templates[labels] + spec.own_weight * rng.uniform(
        0.0, 1.0, (n, spec.channels, k, k)
    ).astype(np.float32)
    uh, uw = interpolation_matrix(height, k), interpolation_matrix(width, k)
    smooth = np.einsum("hk,nckl,wl->nhwc", uh, grids, uw, optimize=True)
    smooth += np.float32(spec.noise) * rng.standard_normal(smooth.shape, dtype=np.float32)
    return np.clip(smooth * 255.0 + 0.5, 0, 255).astype(np.uint8)


def pattern_image(
    rng: np.random.Generator,
    template: np.ndarray,
    height: int,
    width: int,
    spec: PatternSpec,
) -> np.ndarray:
    """``uint8 [height, width, channels]``: one image of any size from a class template grid
    (``[channels, coarse, coarse]``), for image folders whose images differ in size.

    Same recipe as :func:`pattern_images`, cheaper per image: the coarse grid is upsampled by
    PIL's bilinear resize and the noise is uniform integer noise of the same standard deviation.
    """
    from PIL import Image

    k = spec.coarse
    grid = spec.class_weight * template + spec.own_weight * rng.uniform(
        0.0, 1.0, (spec.channels, k, k)
    )
    small = np.clip(grid.transpose(1, 2, 0) * 255.0 + 0.5, 0, 255).astype(np.uint8)
    mode = "L" if spec.channels == 1 else "RGB"
    big = Image.fromarray(small[..., 0] if spec.channels == 1 else small, mode=mode).resize(
        (width, height), Image.Resampling.BILINEAR
    )
    pixels = np.asarray(big, dtype=np.int16).reshape(height, width, spec.channels)
    half = max(round(spec.noise * 255.0 * float(np.sqrt(3.0))), 0)  # uniform[-a, a]: sd a/√3
    if half:
        pixels = pixels + rng.integers(-half, half + 1, pixels.shape, dtype=np.int16)
    return np.clip(pixels, 0, 255).astype(np.uint8)
