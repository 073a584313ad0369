"""Figures of results tables (matplotlib, headless)."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import stats


def regret_curves(table: pa.Table, learner: str, column: str = "regret"
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rounds, mean over seeds and 95% half-width of ``column`` for one learner.

    NaN-aware: at each round the mean and interval are over the seeds with a value (NaN where
    none has one, half-width 0 where only one has). The table must hold one run per seed.

    Examples
    --------
    >>> from strategic_apple_tasting import Game, simulate
    >>> t, mean, half = regret_curves(simulate(Game(dimension=2), ["oracle"], horizon=20,
    ...                                        seeds=2), "oracle")
    >>> int(t[-1]), float(mean[-1])
    (20, 0.0)
    """
    sub = table.filter(pc.equal(table.column("learner"), learner))
    t = sub.column("t").to_numpy()
    seeds = sub.column("seed").to_numpy()
    values = sub.column(column).to_numpy().astype(float)
    grid = np.unique(t)
    n_seeds = np.unique(seeds).size
    matrix = np.full((n_seeds, grid.size), np.nan)
    seed_index = np.searchsorted(np.unique(seeds), seeds)
    matrix[seed_index, np.searchsorted(grid, t)] = values
    finite = np.isfinite(matrix)
    n = finite.sum(axis=0)
    total = np.where(finite, matrix, 0.0).sum(axis=0)
    mean = np.divide(total, n, out=np.full(grid.size, np.nan), where=n > 0)
    squares = np.where(finite, (matrix - mean) ** 2, 0.0).sum(axis=0)
    sd = np.sqrt(np.divide(squares, n - 1, out=np.zeros(grid.size), where=n > 1))
    quantile = stats.t.ppf(0.975, np.maximum(n - 1, 1))
    half = np.where(n > 1, quantile * sd / np.sqrt(np.maximum(n, 1)), 0.0)
    half[n == 0] = np.nan
    return grid, mean, half


def plot_regret(table: pa.Table, path: str | os.PathLike, *, title: str | None = None) -> Path:
    """Cumulative strategic regret against rounds: mean over seeds with a 95% band, per learner.

    Left panel linear regret on a log round axis; right panel log–log.
    """
    learners = list(dict.fromkeys(table.column("learner").to_pylist()))
    fig, (ax_lin, ax_log) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name in learners:
        t, mean, half = regret_curves(table, name)
        for ax in (ax_lin, ax_log):
            (line,) = ax.plot(t, mean, label=name, lw=1.6)
            ax.fill_between(t, np.maximum(mean - half, 0), mean + half, alpha=0.2,
                            color=line.get_color(), lw=0)
    for ax in (ax_lin, ax_log):
        ax.set_xscale("log")
        ax.set_xlabel("round t")
        ax.grid(alpha=0.3, which="both")
    ax_lin.set_ylabel("cumulative strategic regret")
    ax_log.set_yscale("log")
    ax_log.set_ylabel("cumulative strategic regret (log)")
    ax_lin.legend(loc="upper left", fontsize=9)
    n_seeds = len(set(table.column("seed").to_pylist()))
    fig.suptitle(title or f"Regret: mean over {n_seeds} seeds with 95% band")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
