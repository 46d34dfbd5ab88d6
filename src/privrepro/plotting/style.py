"""One plot style for every figure: readable labels, colour-blind-safe colours, PNG and PDF."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from cycler import cycler

__all__ = ["PALETTE", "new_figure", "save_figure", "use_style"]

# Okabe–Ito: distinguishable under the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]

_RC: dict[str, Any] = {
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": cycler(color=PALETTE),
    "lines.linewidth": 1.6,
    "figure.constrained_layout.use": True,
}


def use_style() -> None:
    """Apply the project's matplotlib style (idempotent)."""
    plt.rcParams.update(_RC)  # type: ignore[arg-type]


def new_figure(
    nrows: int = 1, ncols: int = 1, width: float = 5.0, height: float = 3.6, **kwargs: Any
) -> tuple[Any, Any]:
    """A figure in the project style; ``width``/``height`` are per panel, in inches."""
    use_style()
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), **kwargs)
    return fig, axes


def save_figure(fig: Any, stem: str | Path, caption: str | None = None) -> list[Path]:
    """Save ``fig`` as ``stem.png`` and ``stem.pdf`` (atomically) and close it.

    The layout and the tight bounding box are computed once, by the PNG's save; the PDF reuses
    them (its own save would run the layout and the tight-box search again: most of a plot's
    saving time).
    """
    import io

    from privrepro.store.atomic import atomic_write_bytes

    stem = Path(stem)
    if caption:
        fig.text(0.5, -0.02, caption, ha="center", va="top", fontsize=7.5, color="0.35", wrap=True)
    paths = []
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    paths.append(atomic_write_bytes(stem.with_suffix(".png"), buf.getvalue()))
    box = fig.get_tightbbox().padded(float(plt.rcParams["savefig.pad_inches"]))
    fig.set_layout_engine("none")  # laid out by the PNG's save: keep those positions
    buf = io.BytesIO()
    fig.savefig(buf, format="pdf", bbox_inches=box)
    paths.append(atomic_write_bytes(stem.with_suffix(".pdf"), buf.getvalue()))
    plt.close(fig)
    return paths
