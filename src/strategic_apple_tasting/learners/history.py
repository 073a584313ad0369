"""A history of past decisions learned by a learner: the warm start of a lender's learner.

A lender that deploys a learner has a history: applicants its earlier rule decided, and the
outcomes of the loans it granted (a rejected applicant's outcome is never seen). The rule each
applicant met is not known to the learner, so the rows are replayed as decisions under two
rules adopted for the purpose, accept-all for the accepted and reject-all for the rejected:
the applicants are taken as not having gamed them (nobody games a rule that accepts everyone,
and nobody games to be rejected). The service's ``--start-log`` and the lender's backtest
(:mod:`strategic_apple_tasting.scenarios.backtest`) warm-start learners this one way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..game.policies import LinearThreshold


class HistoryError(ValueError):
    """A history a learner cannot learn: ``row`` is the 0-based row (None: the whole history)
    and ``reason`` what the learner said."""

    def __init__(self, row: int | None, reason: str) -> None:
        self.row, self.reason = row, reason
        where = "the history" if row is None else f"row {row + 1} of the history"
        super().__init__(f"{where} cannot be learned: {reason}")


def replay_history(learner: Any, features: Sequence[Any] | np.ndarray,
                   accepted: Sequence[bool] | np.ndarray,
                   outcomes: Sequence[float | None] | np.ndarray) -> Any:
    """Learn past decisions, in order (module docstring); returns the learner.

    Parameters
    ----------
    learner : Learner
        Bound and reset, with no decision awaiting an outcome.
    features : array-like
        (n, d): each past applicant's features as the learner sees them.
    accepted : array-like of bool
        (n,): whether the earlier rule accepted it.
    outcomes : array-like
        (n,): the reward of each accepted loan, in the learner's units (None or NaN where no
        outcome was seen: under apple tasting, every rejected applicant).

    Raises
    ------
    HistoryError
        Naming the row a learner refuses (a ``ValueError``).

    Examples
    --------
    >>> from strategic_apple_tasting import NaiveGreedyOLS
    >>> learner = NaiveGreedyOLS(delta=0.1, r0=0.0, feedback="apple").reset(d=2, rng=0)
    >>> learner = replay_history(learner, [[1.0, 0.5], [1.0, -0.5]], [True, False],
    ...                          [0.4, None])
    >>> learner.pending(), learner.estimate() is not None
    ([], True)
    """
    d = int(np.shape(features)[1]) if len(features) else 0
    try:
        take = learner.adopt(LinearThreshold(np.zeros(d), -1.0), time=0.0)
        learner.hold(take.version)
        refuse = learner.adopt(LinearThreshold(np.zeros(d), 1.0), time=0.0)
        learner.hold(refuse.version)
    except ValueError as exc:
        raise HistoryError(None, str(exc)) from None
    for k, (z, yes, outcome) in enumerate(zip(features, accepted, outcomes, strict=True)):
        id_ = f"history-{k + 1}"
        seen = outcome is not None and not (isinstance(outcome, float) and np.isnan(outcome))
        try:
            learner.record(np.asarray(z, dtype=float), id_, bool(yes),
                           take.version if yes else refuse.version, time=float(k))
            if seen:
                learner.report(id_, float(outcome))
        except ValueError as exc:
            raise HistoryError(k, str(exc)) from None
    learner.release(take.version)
    learner.release(refuse.version)
    return learner
