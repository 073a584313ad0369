"""Summaries of results tables: final regret with confidence intervals, growth exponents."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import stats


def mean_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Mean and the half-width of its Student-t confidence interval (0 for a single value).

    Examples
    --------
    >>> mean_ci(np.array([1.0, 2.0, 3.0]))[0]
    2.0
    """
    values = np.asarray(values, dtype=float)
    n = values.size
    if n == 0:
        return math.nan, math.nan
    mean = float(values.mean())
    if n == 1:
        return mean, 0.0
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * values.std(ddof=1) / math.sqrt(n))
    return mean, half


@dataclass(frozen=True)
class FinalSummary:
    """Per-learner summary of the last recorded round: means over seeds (regret with the
    half-width of its 95% confidence interval)."""

    learner: str
    seeds: int
    horizon: int
    regret: float
    regret_ci: float
    stackelberg_regret: float
    stackelberg_exact: bool
    realized_regret: float
    accepted: float
    clean: float
    gamed_as_clean: float
    theta_error: float


def final_summary(table: pa.Table) -> list[FinalSummary]:
    """Summaries of each learner's final round, in order of first appearance.

    Examples
    --------
    >>> from strategic_apple_tasting import Game, simulate
    >>> rows = final_summary(simulate(Game(dimension=2), ["oracle"], horizon=50, seeds=3))
    >>> rows[0].learner, rows[0].regret
    ('oracle', 0.0)
    """
    out = []
    learners = list(dict.fromkeys(table.column("learner").to_pylist()))
    for name in learners:
        sub = table.filter(pc.equal(table.column("learner"), name))
        t = sub.column("t").to_numpy()
        last = sub.filter(pc.equal(sub.column("t"), int(t.max())))
        col = {c: last.column(c).to_numpy() for c in
               ("regret", "stackelberg_regret", "realized_regret", "accepted", "clean",
                "gamed_as_clean", "theta_error")}
        mean, half = mean_ci(col["regret"])
        err = col["theta_error"]
        out.append(FinalSummary(
            learner=name, seeds=last.num_rows, horizon=int(t.max()), regret=mean,
            regret_ci=half, stackelberg_regret=float(col["stackelberg_regret"].mean()),
            stackelberg_exact=bool(last.column("stackelberg_exact").to_numpy().all()),
            realized_regret=float(col["realized_regret"].mean()),
            accepted=float(col["accepted"].mean()), clean=float(col["clean"].mean()),
            gamed_as_clean=float(col["gamed_as_clean"].mean()),
            theta_error=float(np.nanmean(err)) if np.any(np.isfinite(err)) else math.nan))
    return out


def growth_exponent(t: np.ndarray, regret: np.ndarray, *, t_min: float | None = None
                    ) -> tuple[float, float]:
    """Least-squares slope of log(regret) on log(t) and its standard error.

    Points with t < ``t_min`` (default: a tenth of the last round) or non-positive regret are
    left out, so the burn-in does not dominate the fit.

    Examples
    --------
    >>> t = np.array([10.0, 100.0, 1000.0, 10000.0])
    >>> round(growth_exponent(t, 3 * np.sqrt(t), t_min=1)[0], 6)
    0.5
    """
    t = np.asarray(t, dtype=float)
    regret = np.asarray(regret, dtype=float)
    cut = t.max() / 10 if t_min is None else t_min
    keep = (t >= cut) & (regret > 0)
    if keep.sum() < 3:
        raise ValueError(f"growth_exponent needs >= 3 points with t >= {cut:g} and regret > 0, "
                         f"got {int(keep.sum())}")
    fit = stats.linregress(np.log(t[keep]), np.log(regret[keep]))
    return float(fit.slope), float(fit.stderr)


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
