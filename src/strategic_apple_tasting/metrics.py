"""Summaries of results tables: final regret with confidence intervals, growth exponents.

Every interval is over seeds, the independent unit of a simulation: a mean's is Student's t, and
a statistic of the mean curve (a growth exponent, a ratio of two learners' means) is bootstrapped
by resampling whole seeds. Points along one run are dependent, so a regression's standard error
along a run is no interval at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy.special import stdtrit  # scipy.stats.t.ppf's own _ppf; scipy.stats costs `sat run` 0.8 s

#: Bootstrap resamples of the seeds behind every bootstrapped interval.
RESAMPLES = 2000


@dataclass(frozen=True)
class Estimate:
    """A statistic over seeds with its 95% interval [``low``, ``high``].

    The interval is NaN when there is none: one seed, or a statistic that is exact (the largest
    regret over seeds, a count). :meth:`shown` never prints "± 0": it says why there is no
    interval, or that every seed gave the same value.

    Examples
    --------
    >>> Estimate(0.5, 0.45, 0.57, seeds=8).shown()
    '0.5 [0.45, 0.57]'
    >>> Estimate(2.0, math.nan, math.nan, seeds=1).shown()
    '2 (1 seed: no interval)'
    >>> Estimate(0.0, 0.0, 0.0, seeds=4).shown()
    '0 (on each of 4 seeds)'
    """

    value: float
    low: float = math.nan
    high: float = math.nan
    seeds: int = 0

    @property
    def has_interval(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)

    def shown(self, digits: int = 3) -> str:
        v = f"{self.value:.{digits}g}"
        if self.has_interval:
            if self.low == self.high == self.value:
                return f"{v} (on each of {self.seeds} seeds)"
            return f"{v} [{self.low:.{digits}g}, {self.high:.{digits}g}]"
        if self.seeds == 1:
            return f"{v} (1 seed: no interval)"
        return v


def bootstrap(data: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], *,
              level: float = 0.95, resamples: int = RESAMPLES, seed: int = 0) -> Estimate:
    """A statistic of per-seed data with its percentile bootstrap interval over seeds.

    ``data`` has one row per seed; ``statistic`` maps a stack of resampled data sets,
    shape ``(B, seeds, ...)``, to ``B`` values (NaN where undefined, e.g. a log of 0), so that
    all resamples are computed at once. The value is the statistic of ``data`` itself. The
    resampling stream is fixed (``seed``): the same data give the same interval.

    Examples
    --------
    >>> est = bootstrap(np.array([1.0, 2.0, 3.0, 4.0]), lambda x: x.mean(axis=1))
    >>> est.value, est.low < 2.5 < est.high
    (2.5, True)
    """
    data = np.asarray(data, dtype=float)
    n = data.shape[0]
    value = float(statistic(data[None])[0])
    if n < 2:
        return Estimate(value, seeds=n)
    index = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    values = np.asarray(statistic(data[index]), dtype=float)
    values = values[np.isfinite(values)]
    if values.size < resamples / 2:  # the statistic is undefined on most resamples
        return Estimate(value, seeds=n)
    low, high = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return Estimate(value, float(low), float(high), seeds=n)


def log_slopes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares slopes of log(y) on log(x), one per row of ``y`` (shape (B, m)), over the
    points where y > 0; NaN for a row with fewer than 2 such points.

    Examples
    --------
    >>> log_slopes(np.array([1.0, 10.0, 100.0]), np.array([[2.0, 20.0, 200.0]]))
    array([1.])
    """
    lx = np.log(np.asarray(x, dtype=float))
    y = np.atleast_2d(np.asarray(y, dtype=float))
    w = (y > 0).astype(float)
    ly = np.log(np.where(y > 0, y, 1.0))
    n = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = (w * lx).sum(axis=1) / n
        my = (w * ly).sum(axis=1) / n
        dx = lx - mx[:, None]
        slope = (w * dx * (ly - my[:, None])).sum(axis=1) / (w * dx * dx).sum(axis=1)
    return np.where(n >= 2, slope, np.nan)


def seed_matrix(table: pa.Table, learner: str, column: str = "regret"
                ) -> tuple[np.ndarray, np.ndarray]:
    """Rounds and a (seeds × rounds) matrix of ``column`` for one learner's runs (NaN where a
    seed has no record). The table must hold one run per seed."""
    sub = table.filter(pc.equal(table.column("learner"), learner))
    t = sub.column("t").to_numpy()
    seeds = sub.column("seed").to_numpy()
    values = sub.column(column).to_numpy().astype(float)
    grid = np.unique(t)
    order = np.unique(seeds)
    matrix = np.full((order.size, grid.size), np.nan)
    matrix[np.searchsorted(order, seeds), np.searchsorted(grid, t)] = values
    return grid, matrix


def exponent_along(table: pa.Table, learner: str, column: str = "regret", *,
                   t_min: float | None = None) -> Estimate:
    """Growth exponent of the mean over seeds of ``column`` along one run per seed: the log–log
    slope for t ≥ ``t_min`` (default a tenth of the last round), bootstrapped over seeds.

    Examples
    --------
    >>> from strategic_apple_tasting import Game, simulate
    >>> table = simulate(Game(dimension=2), ["naive-greedy"], horizon=20_000, seeds=4)
    >>> exponent_along(table, "naive-greedy").shown(2)  # linear regret: near 1
    '0.94 [0.91, 0.97]'
    """
    t, matrix = seed_matrix(table, learner, column)
    keep = t >= (t.max() / 10 if t_min is None else t_min)
    t, matrix = t[keep], matrix[:, keep]
    return bootstrap(matrix, lambda m: log_slopes(t, np.nanmean(m, axis=1)))


def finals_by_horizon(table: pa.Table, learner: str, column: str = "regret"
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Horizons and a (seeds × horizons) matrix of ``column`` at the end of each run."""
    sub = table.filter(pc.and_(pc.equal(table.column("learner"), learner),
                               pc.equal(table.column("t"), table.column("horizon"))))
    horizons = sub.column("horizon").to_numpy()
    seeds = sub.column("seed").to_numpy()
    grid, order = np.unique(horizons), np.unique(seeds)
    matrix = np.full((order.size, grid.size), np.nan)
    matrix[np.searchsorted(order, seeds), np.searchsorted(grid, horizons)] = \
        sub.column(column).to_numpy().astype(float)
    return grid, matrix


def exponent_across(table: pa.Table, learner: str, column: str = "regret") -> Estimate:
    """Growth exponent across horizons: the log–log slope of the mean final ``column`` over
    seeds against T, for learners tuned to the horizon, bootstrapped over seeds (a seed's runs
    at every horizon are resampled together: they share θ and the start of their streams)."""
    horizons, matrix = finals_by_horizon(table, learner, column)
    return bootstrap(matrix, lambda m: log_slopes(horizons, np.nanmean(m, axis=1)))


def mean_ci(values: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Mean and the half-width of its Student-t confidence interval (NaN for a single value:
    one seed has no interval).

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
        return mean, math.nan
    half = float(stdtrit(n - 1, 0.5 + level / 2) * values.std(ddof=1) / math.sqrt(n))
    return mean, half


@dataclass(frozen=True)
class FinalSummary:
    """Per-learner summary of the last recorded round: means over seeds (regret with the
    half-width of its 95% confidence interval, NaN for one seed)."""

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
    learned: float
    gamed_as_clean: float
    theta_error: float

    @property
    def regret_estimate(self) -> Estimate:
        """The mean final regret with its interval (none for one seed)."""
        return Estimate(self.regret, self.regret - self.regret_ci, self.regret + self.regret_ci,
                        seeds=self.seeds)


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
        # Tables written before the `learned` column: every clean point was learned from.
        col["learned"] = (last.column("learned").to_numpy() if "learned" in last.column_names
                          else col["clean"])
        mean, half = mean_ci(col["regret"])
        err = col["theta_error"]
        out.append(FinalSummary(
            learner=name, seeds=last.num_rows, horizon=int(t.max()), regret=mean,
            regret_ci=half, stackelberg_regret=float(col["stackelberg_regret"].mean()),
            stackelberg_exact=bool(last.column("stackelberg_exact").to_numpy().all()),
            realized_regret=float(col["realized_regret"].mean()),
            accepted=float(col["accepted"].mean()), clean=float(col["clean"].mean()),
            learned=float(col["learned"].mean()),
            gamed_as_clean=float(col["gamed_as_clean"].mean()),
            theta_error=float(np.nanmean(err)) if np.any(np.isfinite(err)) else math.nan))
    return out


def regret_curves(table: pa.Table, learner: str, column: str = "regret"
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rounds, mean over seeds and 95% half-width of ``column`` for one learner.

    NaN-aware: at each round the mean and interval are over the seeds with a value (NaN where
    none has one, and a NaN half-width where only one has). The table must hold one run per
    seed.

    Examples
    --------
    >>> from strategic_apple_tasting import Game, simulate
    >>> t, mean, half = regret_curves(simulate(Game(dimension=2), ["oracle"], horizon=20,
    ...                                        seeds=2), "oracle")
    >>> int(t[-1]), float(mean[-1])
    (20, 0.0)
    """
    grid, matrix = seed_matrix(table, learner, column)
    finite = np.isfinite(matrix)
    n = finite.sum(axis=0)
    total = np.where(finite, matrix, 0.0).sum(axis=0)
    mean = np.divide(total, n, out=np.full(grid.size, np.nan), where=n > 0)
    squares = np.where(finite, (matrix - mean) ** 2, 0.0).sum(axis=0)
    sd = np.sqrt(np.divide(squares, n - 1, out=np.zeros(grid.size), where=n > 1))
    quantile = stdtrit(np.maximum(n - 1, 1), 0.975)
    half = np.where(n > 1, quantile * sd / np.sqrt(np.maximum(n, 1)), np.nan)
    return grid, mean, half
