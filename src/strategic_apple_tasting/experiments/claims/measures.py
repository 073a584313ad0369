"""What the claims measure in a results table, each with its interval over seeds."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from scipy import stats

from ...metrics import (
    Estimate,
    bootstrap,
    finals_by_horizon,
    log_slopes,
    mean_ci,
    seed_matrix,
)


def rows(table: pa.Table, **settings: object) -> pa.Table:
    """The rows whose settings (columns) equal the given values."""
    for key, value in settings.items():
        table = table.filter(pc.equal(table.column(key), value))
    return table


def values(table: pa.Table, name: str) -> list:
    """The distinct values of a setting (a column), sorted: a part's grid along it."""
    return sorted(set(table.column(name).to_pylist()))


def setting(table: pa.Table, name: str):
    """A setting shared by every row (the first row's)."""
    return table.column(name)[0].as_py()


def at(table: pa.Table, learner: str, t: int | None = None, column: str = "regret",
       horizon: int | None = None) -> np.ndarray:
    """``column`` for each seed (in seed order) at round ``t`` (default: the run's last), of
    the runs with this ``horizon`` (default: the largest)."""
    sub = rows(table, learner=learner)
    if horizon is None:
        horizon = int(pc.max(sub.column("horizon")).as_py())
    sub = rows(sub, horizon=horizon)
    sub = rows(sub, t=horizon if t is None else t)
    order = np.argsort(sub.column("seed").to_numpy(), kind="stable")
    return sub.column(column).to_numpy().astype(float)[order]


def mean(values: np.ndarray, level: float = 0.95) -> Estimate:
    """The mean over seeds with its Student-t interval (none for one seed).

    Examples
    --------
    >>> mean(np.array([1.0, 2.0, 3.0])).shown()
    '2 [-0.484, 4.48]'
    """
    values = np.asarray(values, dtype=float)
    m, half = mean_ci(values, level)
    return Estimate(m, m - half, m + half, seeds=values.size)


def exact(value: float, seeds: int) -> Estimate:
    """A statistic without an interval (a largest value over seeds, a count)."""
    return Estimate(float(value), seeds=seeds)


def proportion(successes: int, trials: int) -> Estimate:
    """A proportion with its exact (Clopper–Pearson) 95% interval."""
    ci = stats.binomtest(int(successes), int(trials)).proportion_ci(confidence_level=0.95)
    return Estimate(successes / trials, float(ci.low), float(ci.high), seeds=trials)


def half_round(table: pa.Table, learner: str) -> int:
    """The recorded round nearest below half the run (the split of :func:`late_rate`)."""
    t = np.unique(rows(table, learner=learner).column("t").to_numpy())
    return int(t[t <= t.max() / 2][-1])


def rates(table: pa.Table, learner: str, column: str = "regret") -> tuple[np.ndarray, ...]:
    """Per seed: ``column`` per round over the first half of the run and over the rest."""
    t, matrix = seed_matrix(table, learner, column)
    half = half_round(table, learner)
    i, last = int(np.searchsorted(t, half)), t.size - 1
    first = matrix[:, i] / t[i]
    second = (matrix[:, last] - matrix[:, i]) / (t[last] - t[i])
    return first, second


def late_over_early(table: pa.Table, learner: str) -> Estimate:
    """Regret per round over the second half of the run over the first half's (ratio of the
    means over seeds, bootstrapped). For regret ∝ T^a it is 2^a − 1: 1 for linear regret, 0.68
    for T^¾, 0.59 for T^⅔, 0.41 for √T, near 0 for log T."""
    first, second = rates(table, learner)
    data = np.column_stack([first, second])

    def ratio(x: np.ndarray) -> np.ndarray:
        m = x.mean(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return m[:, 1] / m[:, 0]
    return bootstrap(data, ratio)


def paired(stat: Callable[..., np.ndarray], *columns: np.ndarray) -> Estimate:
    """A statistic of the means over seeds of several per-seed columns (paired by seed: each
    column has one value per seed, in the same order), bootstrapped over seeds. ``stat`` takes
    the means, each of shape (B,), and returns B values.

    Examples
    --------
    >>> a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 6.5])
    >>> round(paired(lambda x, y: y / x, a, b).value, 3)
    2.083
    """
    data = np.column_stack(columns)

    def of(x: np.ndarray) -> np.ndarray:
        means = x.mean(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return stat(*means.T)
    return bootstrap(data, of)


def slope_of(x: np.ndarray, matrix: np.ndarray) -> Estimate:
    """Log–log slope of the mean over seeds (rows of ``matrix``) against ``x``, bootstrapped."""
    return bootstrap(matrix, lambda m: log_slopes(x, np.nanmean(m, axis=1)))


def bound_slope(bound: Callable[[float], float], t1: float, t2: float) -> float:
    """The local growth exponent of a bound between two horizons: log(B(t2)/B(t1))/log(t2/t1).

    A regret growing no faster than the theorem's bound over the same horizons has a slope at
    most this (the rate plus what its log factors add at these T).
    """
    return math.log(bound(t2) / bound(t1)) / math.log(t2 / t1)


def along(table: pa.Table, learner: str, column: str = "regret") -> tuple[np.ndarray, ...]:
    """Rounds t ≥ T/10 and the (seeds × rounds) matrix of ``column`` there: what a growth
    exponent along the run is fitted to."""
    t, matrix = seed_matrix(table, learner, column)
    keep = t >= t.max() / 10
    return t[keep], matrix[:, keep]


def across(table: pa.Table, learner: str, column: str = "regret",
           top: int | None = None) -> tuple[np.ndarray, ...]:
    """Horizons (the ``top`` largest, default all) and the (seeds × horizons) matrix of the
    final ``column``: what a growth exponent across horizons is fitted to."""
    horizons, matrix = finals_by_horizon(table, learner, column)
    if top is not None:
        horizons, matrix = horizons[-top:], matrix[:, -top:]
    return horizons, matrix


def slope_gap(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> Estimate:
    """Growth exponent of ``b``'s mean minus ``a``'s, each given as (x, seeds × points), with the
    seeds resampled together (the rows of both are the same seeds, in the same order)."""
    (xa, ma), (xb, mb) = a, b
    k = ma.shape[1]

    def gap(m: np.ndarray) -> np.ndarray:
        return (log_slopes(xb, np.nanmean(m[..., k:], axis=1))
                - log_slopes(xa, np.nanmean(m[..., :k], axis=1)))
    return bootstrap(np.hstack([ma, mb]), gap)


def shifted(est: Estimate, by: float) -> Estimate:
    """``est`` minus a constant (its interval too)."""
    return Estimate(est.value - by, est.low - by, est.high - by, seeds=est.seeds)
