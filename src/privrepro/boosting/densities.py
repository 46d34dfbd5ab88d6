"""The output densities of PB-DP at two neighbouring true values, region by region (pb Fig. 1).

For each region the boosted density of eq. (2) and the kernel's own density are tabulated on one
grid of outputs around ``Q(X)`` and ``Q(X') = Q(X) + Δ``, with the region's ends at each input,
the boosting rate ``q`` (eq. 3) and the in-region mass (``≥ ρ``, eq. 1).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from privrepro.boosting._checks import check_range
from privrepro.boosting.kernels import Kernel
from privrepro.boosting.mechanism import BoostedMechanism
from privrepro.boosting.regions import Region

__all__ = ["output_densities"]


def output_densities(
    kernel: Kernel,
    regions: Mapping[str, Region],
    rho: float,
    query: float,
    sensitivity: float,
    *,
    margin: float = 0.0,
    points: int = 801,
) -> pd.DataFrame:
    """Densities of PB-DP with ``kernel`` at ``Q(X) = query`` and ``Q(X') = query + sensitivity``.

    The grid spans ``[Q(X) − 4σ − margin, Q(X') + 4σ + margin]`` (σ: the kernel's scale) in
    ``points`` points.

    Returns:
        Rows ``case, input, query, y, density, kernel_density, region_lower, region_upper, q,
        in_region_mass``: ``case`` is the key of ``regions``, ``input`` is ``"X"`` or ``"X'"``.
    """
    check_range("rho", rho, gt=0, le=1)
    check_range("sensitivity", sensitivity, gt=0)
    check_range("margin", margin, ge=0)
    check_range("points", points, ge=2)
    c, c2 = query, query + sensitivity
    s = kernel.scale
    y = np.linspace(c - 4 * s - margin, c2 + 4 * s + margin, int(points))
    frames = []
    for case, region in regions.items():
        mech = BoostedMechanism(kernel, region, rho)
        for who, centre in (("X", c), ("X'", c2)):
            lo, hi = (float(v) for v in region.bounds(centre))
            frames.append(
                pd.DataFrame(
                    {
                        "case": case,
                        "input": who,
                        "query": centre,
                        "y": y,
                        "density": mech.density(y, centre),
                        "kernel_density": kernel.pdf(y - centre),
                        "region_lower": lo,
                        "region_upper": hi,
                        "q": mech.q,
                        "in_region_mass": float(mech.in_region_mass(centre)),
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)
