"""One plot style for every figure: readable labels, colour-blind-safe colours, PNG and PDF."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from cycler import cycler
from matplotlib.figure import Figure

__all__ = [
    "PALETTE",
    "STAND_IN_COLOUR",
    "WholeFigure",
    "new_figure",
    "save_figure",
    "stand_in_title",
    "use_style",
]

#: The colour of the line that names stand-in data above a figure.
STAND_IN_COLOUR = "#B00020"

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


class WholeFigure(Figure):
    """A figure whose plain ``savefig`` keeps everything drawn: ``bbox_inches`` defaults to
    ``"tight"``, so a legend or a note placed outside the axes is not clipped at the figure's
    edge (``fig.savefig("sweep.png")`` in a notebook). An explicit ``bbox_inches`` wins."""

    def savefig(self, fname: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("bbox_inches", "tight")
        super().savefig(fname, *args, **kwargs)


def new_figure(
    nrows: int = 1, ncols: int = 1, width: float = 5.0, height: float = 3.6, **kwargs: Any
) -> tuple[Any, Any]:
    """A figure in the project style; ``width``/``height`` are per panel, in inches. It saves
    whole with a plain ``savefig`` (:class:`WholeFigure`)."""
    use_style()
    kwargs.setdefault("FigureClass", WholeFigure)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), **kwargs)
    return fig, axes


def short_stand_in(label: str) -> str:
    """A stand-in's ``data`` label in a few words for a banner: ``"digits 8×8 for CIFAR-10"``;
    a stand-in shaped to sit in the paper's regime says so (``shaped like the paper's``). The
    full label stays in the table, its meta and the report."""
    import re

    m = re.match(r"^(.*?) \(stand-in for (.*?)(;\s*shaped.*)?\)$", label.strip(), re.S)
    if not m:
        return label
    name, paper, shaped = (re.sub(r"\s*\([^()]*\)", "", g or "") for g in m.groups())
    return f"{name} for {paper}" + (", shaped like the paper's" if shaped else "")


def stand_in_title(fig: Any, labels: Sequence[str]) -> str | None:
    """Name the stand-in data above ``fig``'s own titles, in red, in at most three lines; return
    the text (or ``None``).

    ``labels`` are the values of the table's ``data`` column; those naming a stand-in
    (:func:`~privrepro.data.provenance.is_stand_in_label`) are listed, each in a few words
    (:func:`short_stand_in`). The line sits just above the figure area, so it never covers a
    title or the data (``save_figure`` keeps it in the tight bounding box).
    """
    from privrepro.data.provenance import is_stand_in_label

    stand_ins = sorted({str(label) for label in labels if is_stand_in_label(label)})
    if not stand_ins:
        return None
    text = "On stand-in data, not the paper's: " + "; ".join(short_stand_in(s) for s in stand_ins)
    width = max(60, int(fig.get_figwidth() * 13))  # characters of bold 8-point text per line
    fig.text(
        0.5,
        1.0,
        # whole words only: never "Split-CIFAR-" / "100" or "stand-" / "in" across two lines
        textwrap.fill(
            text,
            width=width,
            max_lines=3,
            placeholder=" …",
            break_on_hyphens=False,
            break_long_words=False,
        ),
        ha="center",
        va="bottom",
        fontsize=8,
        fontweight="bold",
        color=STAND_IN_COLOUR,
    )
    return text


def _no_layout_engine() -> Any:
    """rcParams under which a figure set to no layout engine keeps none."""
    return plt.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False})


def save_figure(fig: Any, stem: str | Path, caption: str | None = None) -> list[Path]:
    """Save ``fig`` as ``stem.png`` and ``stem.pdf`` (atomically) and close it.

    The figure is laid out once, without rasterising (``draw_without_rendering``), and the layout
    is then frozen: the caption goes under everything drawn, and one tight bounding box (the
    caption in it) is measured and handed to both saves. Each save then draws once; with
    ``bbox_inches="tight"`` or a live layout engine, ``savefig`` would lay the figure out and
    search its box again first (most of a plot's saving time).
    """
    import io

    from privrepro.store.atomic import atomic_write_bytes

    stem = Path(stem)
    fig.draw_without_rendering()  # the layout engine runs here, once
    renderer = fig.canvas.get_renderer()
    for legend in fig.legends:  # pin figure legends where the layout put them
        box = legend.get_window_extent(renderer).transformed(fig.transFigure.inverted())
        legend.set_bbox_to_anchor((box.x0, box.y0), transform=fig.transFigure)
        legend.set_loc("lower left")
    # frozen: no engine left to run again at each save (under these rcParams, as savefig puts
    # the engine back through them when it is done)
    with _no_layout_engine():
        fig.set_layout_engine(None)
    if caption:
        # below everything drawn (legends under the axes included); the layout is frozen, so
        # the tight bounding box cannot move a legend onto it
        bottom = fig.get_tightbbox(renderer).y0 / fig.get_figheight()
        fig.text(
            0.5,
            min(-0.02, bottom - 0.01),
            caption,
            ha="center",
            va="top",
            fontsize=7.5,
            color="0.35",
        )
    box = fig.get_tightbbox(renderer).padded(float(plt.rcParams["savefig.pad_inches"]))
    paths = []
    for fmt in ("png", "pdf"):
        buf = io.BytesIO()
        with _no_layout_engine():
            fig.savefig(buf, format=fmt, bbox_inches=box)
        paths.append(atomic_write_bytes(stem.with_suffix(f".{fmt}"), buf.getvalue()))
    plt.close(fig)
    return paths
