"""The figures' log axes: labelled as matplotlib labels them, in plain text (no mathtext); a
figure saved as savefig's own tight crop saves it."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.ticker import LogFormatterSciNotation

from strategic_apple_tasting.reports import figures as F


def _labels(ax, which: str) -> tuple[list[str], list[str]]:
    axis = getattr(ax, f"{which}axis")
    return ([t.get_text() for t in axis.get_ticklabels()],
            [t.get_text() for t in axis.get_ticklabels(minor=True)])


def test_log_scale_labels_the_same_ticks_in_plain_text():
    """The same ticks labelled as on matplotlib's own log axis (decades, and the minor ticks of
    an axis shorter than a decade), each label the plain form of matplotlib's. If a matplotlib
    release writes its labels another way, :func:`plain_power` no longer recognizes them and
    this test fails (the figures would still be right, only slower to draw)."""
    fig, (ours, theirs) = plt.subplots(1, 2)
    F.log_scale(ours, x=True, y=True)
    theirs.set_xscale("log")
    theirs.set_yscale("log")
    for ax in (ours, theirs):
        ax.set_ylim(3e-3, 2e5)  # many decades: decades labelled
        ax.set_xlim(0.3, 0.9)  # under one decade: minor ticks labelled too
    fig.canvas.draw()
    for which in "xy":
        (major, minor), (want_major, want_minor) = _labels(ours, which), _labels(theirs, which)
        assert [F.plain_power(s) for s in want_major] == major
        assert [F.plain_power(s) for s in want_minor] == minor
        assert all("$" not in s for s in major + minor)
    assert "10⁻³" in _labels(ours, "y")[0] and "10⁵" in _labels(ours, "y")[0]
    assert "3×10⁻¹" in _labels(ours, "x")[1]
    assert all(s.startswith("$") for s in _labels(theirs, "y")[0])  # the control: mathtext
    plt.close(fig)


def test_plain_power_leaves_other_labels_alone():
    formatter = LogFormatterSciNotation()
    assert F.plain_power(formatter(1e-2)) == "10⁻²"
    for label in ("", "0.5", "$x^2$", r"$\mathdefault{10^{x}}$"):
        assert F.plain_power(label) == label


def _legend_outside() -> plt.Figure:
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 10, 100], [3, 1, 2], label="a learner with a long name")
    F.log_scale(ax, x=True)
    fig.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2)  # below the figure
    ax.legend(loc="best")  # placed when the box is measured, not only when drawn
    fig.tight_layout()
    return fig


def _pixels(data: bytes) -> np.ndarray:
    return plt.imread(io.BytesIO(data))


def test_save_figure_crops_as_savefig_tight_does(tmp_path):
    """:func:`save_figure` finds the tight box once for both files instead of letting savefig
    draw the figure again for each: its PNG is savefig's ``bbox_inches="tight"`` PNG pixel for
    pixel, a legend outside the axes and one placed "best" included (the control: the
    uncropped PNG differs). It relies on what a one-off ``tight_layout()`` leaves
    (matplotlib's placeholder engine): if a release leaves something else, this test fails and
    the figures are only slower."""
    fig = _legend_outside()
    assert isinstance(fig.get_layout_engine(), PlaceHolderLayoutEngine)
    want, uncropped = io.BytesIO(), io.BytesIO()
    fig.savefig(want, format="png", dpi=110, bbox_inches="tight")
    fig.savefig(uncropped, format="png", dpi=110)
    ours = _pixels(F.save_figure(_legend_outside(), tmp_path, "legend", dpi=110))
    assert (tmp_path / "legend.pdf").stat().st_size > 0
    assert ours.shape == _pixels(want.getvalue()).shape
    assert np.array_equal(ours, _pixels(want.getvalue()))
    assert _pixels(uncropped.getvalue()).shape != ours.shape
    plt.close(fig)
