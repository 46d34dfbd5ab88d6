"""Plots a reader can read: whole under a plain savefig, short stand-in banners, the papers'
symbols as math, and the paper's printed values marked where they may be compared."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import pytest

from privrepro.plotting.style import new_figure, short_stand_in, stand_in_title

CL_STAND_IN = (
    "synthetic clustered features (stand-in for Split-CIFAR-100 ViT-B/16 features; shaped so "
    "that its non-private accuracy sits near the paper's ≈79 %: numbers close to the paper's "
    "are there by construction, not reproduced)"
)


def _png_width(fig: object, **kwargs: object) -> int:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, **kwargs)  # type: ignore[attr-defined]
    buf.seek(0)
    return int(mpimg.imread(buf).shape[1])


def test_a_library_figure_saves_its_outside_legend_whole() -> None:
    """The docs' pattern: a figure legend below the axes, wider than the figure; a plain
    ``fig.savefig`` keeps it (a matplotlib figure of the same size clips it to 400 px)."""
    labels = [f"a rather long series name number {i}" for i in range(3)]
    fig, ax = new_figure(width=4.0, height=3.0)
    for i, label in enumerate(labels):
        ax.plot([0, 1], [i, i + 1], label=label)
    fig.legend(loc="outside lower center", ncol=3)
    whole = _png_width(fig)
    plain = plt.figure(figsize=(4.0, 3.0), layout="constrained")
    plain.add_subplot().plot([0, 1], [0, 1])
    plain.legend(labels, loc="outside lower center", ncol=3)
    assert _png_width(plain) == 400  # what a plain figure gives: cut at its edge
    assert whole > 500  # the three columns of ~30 characters need more than 4 inches
    assert _png_width(fig, bbox_inches=None) == 400  # an explicit choice still wins
    plt.close("all")


def test_stand_in_banner_is_short() -> None:
    assert short_stand_in(CL_STAND_IN) == (
        "synthetic clustered features for Split-CIFAR-100 ViT-B/16 features, shaped like the "
        "paper's"
    )
    assert short_stand_in("scikit-learn digits 8×8 (stand-in for CIFAR-10)") == (
        "scikit-learn digits 8×8 for CIFAR-10"
    )
    assert short_stand_in(  # the parentheses of a name are left to the table
        "seeded synthetic images (images) (stand-in for Split-CIFAR-100 through ViT-B/16 "
        "(ImageNet-21k))"
    ) == ("seeded synthetic images for Split-CIFAR-100 through ViT-B/16")
    fig, _ = new_figure(width=4.6, height=3.4)
    labels = [CL_STAND_IN, "scikit-learn digits 8×8 (stand-in for CIFAR-10)", "CIFAR-10"]
    full = stand_in_title(fig, labels)
    (text,) = [t.get_text() for t in fig.texts]
    assert full is not None and text.startswith("On stand-in data, not the paper's: ")
    assert text.count("\n") <= 2  # three lines at most, however many stand-ins
    # lines break between words, never inside one ("Split-CIFAR-" / "100", "stand-" / "in")
    words = set(full.split())
    assert all(w in words or w == "…" for w in text.split()), text
    plt.close(fig)


def test_paper_symbols_are_math() -> None:
    from privrepro.plotting.names import display, math_text

    assert display("label_config", "prior_const") == r"$S_{\mathrm{prior}}^{\mathrm{const}}$"
    assert math_text("Cosine, S_prior^const and S_prior") == (
        r"Cosine, $S_{\mathrm{prior}}^{\mathrm{const}}$ and $S_{\mathrm{prior}}$"
    )
    assert math_text("|S(Q(X̃))|") == r"$|S(Q(\tilde{X}))|$"
    fig, ax = new_figure()
    ax.set_xlabel(math_text("|S(Q(X̃))|"))
    ax.set_title(display("label_config", "prior_const"))
    fig.canvas.draw()  # mathtext parses (a malformed expression raises here)
    plt.close(fig)


def test_paper_values_are_given_only_where_they_may_be_compared() -> None:
    from privrepro.runner.paper_values import paper_values

    (k12,) = paper_values("cl", "fig2", "smoke")
    assert (k12.metric, k12.value, dict(k12.where)) == (
        "largest_k_dropped_99",
        12.0,
        {"epsilon": 1.0, "delta": 1e-7},
    )
    assert paper_values("cl", "fig2", "smoke", [CL_STAND_IN]) == []  # never beside a stand-in
    assert paper_values("cl", "fig3_peft", "smoke") == []  # its references: paper profile only
    assert len(paper_values("cl", "fig3_peft", "paper")) == 20
    assert all(v.id.startswith("cl-") for v in paper_values("cl", "fig5_peft", "paper"))


@pytest.mark.parametrize("profile", ["tiny"])
def test_cl_fig2_marks_the_captions_k_on_its_curve(tmp_path: Path, profile: str) -> None:
    """The caption's k = 12 at ε = 1, δ = 1e-7 as a cross on that curve, at the curve's value."""
    from privrepro.figures.cl.fig2 import DropProbability
    from privrepro.runner.paper_values import paper_values
    from privrepro.runner.run import run_experiment

    paths = [f"paths.{k}_dir={tmp_path / k}" for k in ("experiments", "results", "plots")]
    run = run_experiment("cl/fig2", [f"profile={profile}", "plot=false", *paths])
    recipe, params = DropProbability(), DropProbability.params_type(k_max=20)
    fig = recipe.plot(run.table, params)
    recipe.mark_paper_values(fig, paper_values("cl", "fig2", profile), run.table, params)
    crosses = [line for line in fig.axes[0].lines if line.get_marker() == "X"]
    assert len(crosses) == 1
    x, y = crosses[0].get_xdata()[0], crosses[0].get_ydata()[0]
    row = run.table[(run.table["k"] == 12) & (run.table["epsilon"] == 1.0)]
    assert x == 12 and y == pytest.approx(float(row["drop_probability_lb"].iloc[0]), abs=0)
    assert y >= 0.99  # the caption: dropped with probability at least 0.99
    notes = [t.get_text() for t in fig.axes[0].texts]
    assert any("paper: k = 12" in t and "Fig. 2 caption" in t for t in notes)
    plt.close(fig)
