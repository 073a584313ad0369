"""The lock-out check: does a learner keep lending on a book where lending pays?

Under apple tasting a learner sees a loan's outcome only if it grants it. A rule that turns
everyone away learns nothing more, so a learner whose fit has once put every applicant below
its cutoff stays there for good: on the FICO tables a logistic scorecard fitted on its two
warm-up loans did, and earned nothing where naive greedy lent profitably. This check plays a
learner on a data set's game and fails it if, in the second half of the run, it grants fewer
than a share ``min_share`` of the applicants on some seed, while the least-squares rule on the
applicants' true features shows lending pays (a book where it does not is refused: there,
lending to nobody is right).

The bar is low on purpose: it asks that a learner keep lending, not that it lend well. A
learner that has locked itself out and explores at its declared share (the logistic
learners' ``explore``, 5% by default) passes; one that rejects everyone, as
``reject-all`` or a logistic learner with ``explore=0`` on FICO, fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine import simulate
from ..game.game import check_number
from .dataset import DataSet
from .datasets import data_game
from .run import resolve_learner

#: The check's defaults: rounds, seeds, the applicants' budget, and the least share of the
#: second half's applicants a learner must grant on every seed.
HORIZON, SEEDS, DELTA, MIN_SHARE = 20_000, 3, 0.5, 0.01


@dataclass(frozen=True)
class Lending:
    """What :func:`check_keeps_lending` measured.

    Attributes
    ----------
    learner : str
        The learner's label.
    shares : tuple of float
        Per seed, the share of the second half's applicants it granted a loan.
    pays : float
        Per applicant, what the least-squares rule on true features earns above r0: the
        evidence that lending pays on this book.
    """

    learner: str
    shares: tuple[float, ...]
    pays: float


def lending_pays(data: DataSet, r0: float = 0.0) -> float:
    """Per applicant drawn, what the least-squares rule θ* (:meth:`DataContexts.fitted`)
    earns above r0 on the applicants' true features, accepting iff ⟨θ*, x⟩ ≥ r0: positive
    iff lending to the applicants it picks pays.

    Examples
    --------
    >>> from strategic_apple_tasting.scenarios import load_dataset
    >>> round(lending_pays(load_dataset("fico")), 3)
    0.065
    """
    c = data.contexts
    theta, _ = c.fitted()
    mean = c.recorded().mean
    picked = c.rows @ theta >= r0
    return float(np.sum(c.probabilities()[picked] * (mean[picked] - r0)))


def check_keeps_lending(learner: Any, data: DataSet, *, delta: float = DELTA,
                        r0: float = 0.0, horizon: int = HORIZON, seeds: int = SEEDS,
                        min_share: float = MIN_SHARE) -> Lending:
    """Fail (``AssertionError``) a learner that stops lending on ``data`` (module docstring).

    Parameters
    ----------
    learner : Learner or str
        A learner or a registered name (as for :func:`~.run.run_lending`).
    data : DataSet
        The book: :func:`~.datasets.load_dataset`, or :func:`~.datasets.from_lending` of a CSV.
    delta, r0 : float
        The game's budget and reward of rejecting.
    horizon, seeds : int
        Rounds per run (at least 100) and seeds 0..seeds−1.
    min_share : float
        In (0, 1): the least share of the applicants of rounds horizon/2..horizon it must
        grant, on every seed.

    Returns
    -------
    Lending
        What it measured, when it passes.

    Examples
    --------
    >>> from strategic_apple_tasting.scenarios import load_dataset
    >>> fico = load_dataset("fico")
    >>> check_keeps_lending("sa-logistic", fico, horizon=2000, seeds=1).shares[0] > 0.01
    True
    >>> check_keeps_lending("reject-all", fico, horizon=2000, seeds=1)
    Traceback (most recent call last):
    ...
    AssertionError: reject-all stopped lending on fico: granted 0.00% of the applicants ...
    """
    for name, value, low, high in (("horizon", horizon, 100, 10**9), ("seeds", seeds, 1, 10**4)):
        if not (isinstance(value, int | np.integer) and not isinstance(value, bool)
                and low <= value <= high):
            raise ValueError(f"{name} must be an integer from {low:,} to {high:,}, "
                             f"got {value!r}")
    check_number("min_share", min_share, 0.0, 1.0, open_low=True)
    if not min_share < 1.0:
        raise ValueError(f"min_share must be in (0, 1), got {min_share!r}")
    label, model = resolve_learner(learner)
    pays = lending_pays(data, r0)
    if not pays > 0.0:
        raise ValueError(f"lending does not pay on {data.title} (the least-squares rule earns "
                         f"{pays:.3g} per applicant above r0): a learner that lends to nobody "
                         "is right there, so there is nothing to check")
    game = data_game(data, delta=delta, r0=r0)
    table = simulate(game, [model], int(horizon), int(seeds)).to_pandas()
    rounds = np.sort(table["t"].unique())
    middle = int(rounds[rounds <= horizon // 2].max())
    shares = []
    for seed, runs in table.groupby("seed", sort=True):
        at = runs.set_index("t")["accepted"]
        share = float(at[int(horizon)] - at[middle]) / (horizon - middle)
        if share < min_share:
            raise AssertionError(
                f"{label} stopped lending on {data.title}: granted {share:.2%} of the "
                f"applicants of rounds {middle:,}..{int(horizon):,} on seed {seed} (at least "
                f"{min_share:.0%} asked), where lending pays (the least-squares rule earns "
                f"{pays:.2g} per applicant above r0)")
        shares.append(share)
    return Lending(learner=label, shares=tuple(shares), pays=pays)
