"""Full-size, format-real stand-ins of the paper profile's datasets and checkpoints.

``make rehearsal-data DATA=<root>`` (or ``python -m privrepro.rehearsal.standins --root <root>``)
writes, into a data root of the user's choosing, synthetic data in the exact on-disk formats and
at the exact sizes the loaders read — CIFAR-10/100 pickles, MNIST and FashionMNIST idx archives,
SVHN ``.mat`` files, the notMNIST and ImageNet-R image folders, the UCI Adult files — and randomly
initialised checkpoints in the formats the paper profile loads (timm's ViT-B/16 safetensors, the
ip SLL and ResNet-18 state dicts). Every folder written holds the rehearsal marker (a manifest of
its files' MD5s), so nothing read from it can pass for real data: the loaders accept the
stand-ins' checksums only under the marker and label what they read "rehearsal stand-in"
(:mod:`privrepro.data.standin_checks`).

Pixels are seeded smooth class patterns with noise (:mod:`.pixels`): deterministic from the
seed, cheap to make, separable by class. See ``docs/rehearsal.md`` for the layout, the measured
cost of writing everything at full size, and how the rehearsal uses these files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from privrepro.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from privrepro.rehearsal.standins.catalog import STANDINS as STANDINS
    from privrepro.rehearsal.standins.catalog import StandIn as StandIn
    from privrepro.rehearsal.standins.catalog import Written as Written
    from privrepro.rehearsal.standins.catalog import check_root as check_root
    from privrepro.rehearsal.standins.catalog import write_standin as write_standin
    from privrepro.rehearsal.standins.catalog import write_standins as write_standins

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
