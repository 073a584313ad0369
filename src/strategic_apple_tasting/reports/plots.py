"""Figures of results tables (matplotlib, headless)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pyarrow as pa

from ..metrics import regret_curves
from .figures import has_positive, log_axes, log_scale


def regret_figure(table: pa.Table, *, title: str | None = None,
                  ylabel: str = "cumulative strategic regret", clip_band: bool = True
                  ) -> plt.Figure:
    """Cumulative regret against rounds: mean over seeds with a 95% band, per learner.

    Left panel linear regret on a log round axis; right panel log–log (where something is
    positive). ``clip_band``: the band stops at 0 (strategic regret cannot be negative; a
    regret against a fitted rule can).
    """
    learners = list(dict.fromkeys(table.column("learner").to_pylist()))
    fig, (ax_lin, ax_log) = plt.subplots(1, 2, figsize=(11, 4.2))
    positive = False
    for name in learners:
        t, mean, half = regret_curves(table, name)
        positive |= has_positive(mean)
        band = np.nan_to_num(half)
        low = np.maximum(mean - band, 0) if clip_band else mean - band
        for ax in (ax_lin, ax_log):
            (line,) = ax.plot(t, mean, label=name, lw=1.6, marker="o" if t.size == 1 else None)
            ax.fill_between(t, low, mean + band, alpha=0.2, color=line.get_color(), lw=0)
    log_scale(ax_lin, x=True)
    logged = log_axes(ax_log, positive, "regret")
    for ax in (ax_lin, ax_log):
        ax.set_xlabel("round t")
        ax.grid(alpha=0.3, which="both")
    ax_lin.set_ylabel(ylabel)
    ax_log.set_ylabel(f"{ylabel} (log)" if logged else ylabel)
    ax_lin.legend(loc="upper left", fontsize=9)
    n_seeds = len(set(table.column("seed").to_pylist()))
    fig.suptitle(title or f"Regret: mean over {n_seeds} seeds with 95% band")
    fig.tight_layout()
    return fig


def plot_regret(table: pa.Table, path: str | os.PathLike, *, title: str | None = None) -> Path:
    """:func:`regret_figure`, written to ``path``."""
    fig = regret_figure(table, title=title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def burden_figure(curves, *, title: str | None = None) -> plt.Figure:
    """Each group's social burden against the lender's profit, one curve per group, over the
    thresholds of :func:`~strategic_apple_tasting.scenarios.burden.burden_curves` (points in
    threshold order; the most profitable one marked)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    best = curves.loc[curves["profit"].idxmax(), "threshold"]
    for group, part in curves.groupby("group", sort=False):
        part = part.sort_values("threshold")
        line, = ax.plot(part["profit"], part["burden"], marker=".", label=str(group))
        at = part[part["threshold"] == best]
        ax.plot(at["profit"], at["burden"], marker="o", markersize=8, color=line.get_color())
    ax.set_xlabel("lender's profit per applicant (reward units)")
    ax.set_ylabel("social burden (mean move per repaying applicant)")
    ax.legend(title="group")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig
