"""A history of past decisions learned by a learner: the warm start of a lender's learner.

A lender that deploys a learner has a history: applicants its earlier rule decided, and the
outcomes of the loans it granted (a rejected applicant's outcome is never seen). The rule each
applicant met is not known to the learner, so the rows are replayed as decisions under two
rules adopted for the purpose, accept-all for the accepted and reject-all for the rejected:
the applicants are taken as not having gamed them (nobody games a rule that accepts everyone,
and nobody games to be rejected). The service's ``--start-log`` and the lender's backtest
(:mod:`strategic_apple_tasting.scenarios.backtest`) warm-start learners this one way.

**Reject inference by augmentation.** The accepted loans of such a history are a selected
sample: the earlier rule accepted high scores, so a model fitted on them alone learns the
accepted region and little of the rest. Credit scorers' *augmentation* reweights them:
:func:`augmentation_weights` bands the history by the earlier rule's score, estimates each
band's acceptance probability (accepted / all in the band) and weights each accepted loan by
its inverse, so that a band's accepted loans stand for its rejected applicants too. Learners
have no weighted update, so :func:`replay_history` takes a weight as copies of the row
(:func:`copies`: floor(w), and one more with probability frac(w)), with the total capped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..game.policies import LinearThreshold

#: Score bands of :func:`augmentation_weights` by default: deciles, the credit scorer's usual
#: banding. On a history of n rows each band holds n/10, so its acceptance share is estimated
#: to within sqrt(1/4 / (n/10)) (±0.06 on German credit's 700 history rows); more bands
#: follow the earlier rule's cutoff more closely but estimate each share from fewer rows.
BANDS = 10
#: The copies :func:`replay_history` replays at most by default, per row of the history:
#: augmentation's weights sum to at most twice the rows (a band's accepted rows weigh as many
#: as its rows, its rejected ones 1 each), so the cap binds only on weights from elsewhere.
COPIES_PER_ROW = 10


class HistoryError(ValueError):
    """A history a learner cannot learn: ``row`` is the 0-based row (None: the whole history)
    and ``reason`` what the learner said."""

    def __init__(self, row: int | None, reason: str) -> None:
        self.row, self.reason = row, reason
        where = "the history" if row is None else f"row {row + 1} of the history"
        super().__init__(f"{where} cannot be learned: {reason}")


def _numbers(name: str, values: Any, allowed: str, ok: Any) -> np.ndarray:
    """``values`` as a 1-D float array, or a one-line ``ValueError`` naming the first bad one."""
    out = np.asarray(values, dtype=float)
    if out.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of {allowed}, got shape {out.shape}")
    bad = np.flatnonzero(~ok(out))
    if len(bad):
        first = int(bad[0])
        raise ValueError(f"{name} must be {allowed}, got {float(out[first])!r} at row "
                         f"{first + 1}")
    return out


def augmentation_weights(scores: Sequence[float] | np.ndarray,
                         accepted: Sequence[bool] | np.ndarray, bands: int = BANDS
                         ) -> np.ndarray:
    """Reject inference by augmentation: each row's weight in a replay of the history.

    The rows are banded by ``scores`` at their quantiles (``bands`` bands of about equal
    size; tied scores share a band). A band's acceptance probability is its accepted rows
    over all its rows, and each accepted row weighs its inverse, so a band's weights sum to
    its rows: its accepted loans stand for its rejected applicants too. A band with no
    accepted row is merged with the next band up (the last with the one below) until the
    merged band has one: its rejected applicants must be stood for by someone, the nearest
    scores are the best stand-ins, and the earlier rule accepted high scores, so the nearest
    accepted loans are above. A rejected row weighs 1: its outcome was never seen, so it is
    replayed once as the rejection it was.

    Parameters
    ----------
    scores : array-like
        (n,): each row's score under the earlier rule (the incumbent's log-odds ⟨w, x⟩), over
        every row of the history, accepted or not.
    accepted : array-like of bool
        (n,): whether the row was accepted (its outcome known). At least one must be.
    bands : int
        How many score bands (default :data:`BANDS`, deciles); 1 weighs every accepted row
        n / accepted alike.

    Returns
    -------
    numpy.ndarray
        (n,) weights: 1 / the band's acceptance share for an accepted row (>= 1), 1 for a
        rejected one. Without selection (every row accepted) every weight is 1.

    Raises
    ------
    ValueError
        One line naming the argument: scores not finite, lengths that differ, no accepted
        row, bands not an integer >= 1.

    Examples
    --------
    Two bands: the low one accepted 1 in 4, the high one every row.

    >>> w = augmentation_weights([-2.0, -1.9, -1.8, -1.7, 1.0, 1.1, 1.2, 1.3],
    ...                          [True, False, False, False, True, True, True, True], bands=2)
    >>> w.tolist()
    [4.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    """
    scores = _numbers("scores", scores, "finite numbers", np.isfinite)
    yes = np.asarray(accepted)
    if yes.shape != scores.shape or yes.dtype != bool:
        raise ValueError(f"accepted must be {len(scores)} booleans (one per score), got "
                         f"shape {yes.shape} of {yes.dtype}")
    if not yes.any():
        raise ValueError("accepted must hold at least one accepted row: with no outcome "
                         "known there is nothing to weight")
    if not (isinstance(bands, int | np.integer) and not isinstance(bands, bool) and bands >= 1):
        raise ValueError(f"bands must be an integer >= 1, got {bands!r}")
    edges = np.quantile(scores, np.arange(1, bands) / bands)
    band = np.searchsorted(edges, scores, side="right")
    rows = np.bincount(band, minlength=bands)
    taken = np.bincount(band, weights=yes, minlength=bands)
    # Merge, in score order, each band without an accepted row into the next; empty bands
    # (ties at an edge) hold nobody and merge harmlessly.
    group, merged = np.empty(bands, dtype=np.int64), 0
    for b in range(bands):
        group[b] = merged
        if taken[b] > 0:
            merged += 1
    tail = group == merged  # the top bands, if they accepted nobody: join the one below
    group[tail] = merged - 1
    share = (np.bincount(group, weights=taken) / np.bincount(group, weights=rows))[group]
    return np.where(yes, 1.0 / share[band], 1.0)


def copies(weights: Sequence[float] | np.ndarray, rng: np.random.Generator,
           max_copies: int | None = None) -> np.ndarray:
    """How many times to replay each row for ``weights``: floor(w), and one more with
    probability frac(w), so a row is replayed w times in expectation.

    Parameters
    ----------
    weights : array-like
        (n,) finite weights >= 0.
    rng : numpy.random.Generator
        The draws' stream (n uniforms), the caller's, so a replay is reproducible.
    max_copies : int, optional
        The most copies in all (default :data:`COPIES_PER_ROW` per row): a learner keeps what
        it learns, so the replay's size bounds its memory. Where the weights could draw more
        (their ceilings sum past it) they are scaled down together, keeping their ratios, until
        they cannot. At least the rows with a positive weight (one copy each).

    Returns
    -------
    numpy.ndarray
        (n,) int64 counts, their sum at most ``max_copies``.

    Examples
    --------
    A weight of 2.5 is 2 copies or 3, each half the time; 0 is none.

    >>> copies([1.0, 2.5, 0.0], np.random.default_rng(0)).tolist()
    [1, 3, 0]
    """
    w = _numbers("weights", weights, "finite numbers >= 0", lambda v: np.isfinite(v) & (v >= 0))
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    least = int(np.count_nonzero(w))
    cap = COPIES_PER_ROW * len(w) if max_copies is None else max_copies
    if not (isinstance(cap, int | np.integer) and not isinstance(cap, bool) and cap >= least):
        raise ValueError(f"max_copies must be an integer >= {least} (one copy of each row "
                         f"with a weight), got {max_copies!r}")
    if np.ceil(w).sum() > cap:
        # The most a draw can give, sum(ceil(s·w)), grows with s: the largest s that keeps it
        # within the cap, by bisection (sum(ceil(s·w)) is the count of rows at s → 0+).
        low, high = 0.0, 1.0
        for _ in range(64):
            mid = 0.5 * (low + high)
            low, high = (mid, high) if np.ceil(mid * w).sum() <= cap else (low, mid)
        w = low * w
    whole = np.floor(w)
    return (whole + (rng.random(len(w)) < w - whole)).astype(np.int64)


def keeping_history(learner: Any, rows: int) -> Any:
    """``learner``, or a clone that keeps up to ``rows`` points for an exact refit: a learner
    with a ``batch_points`` parameter (the logistic learners') left at its default refits only
    its first 5·d points exactly, and a history replayed under accept-all is otherwise
    linearized at log-odds 0 and never again (measured on 10,000 FICO applicants:
    offset-logistic's profit per 1,000 new applicants rose from 275 to 367 with the history
    refit exactly; ``benchmarks/RESULTS.md``). A ``batch_points`` given is kept as given.

    Examples
    --------
    >>> from strategic_apple_tasting import SAOLS
    >>> from strategic_apple_tasting.learners.logistic import OffsetLogistic
    >>> keeping_history(OffsetLogistic(), 700).batch_points
    700
    >>> keeping_history(SAOLS(), 700).get_params().get("batch_points") is None
    True
    """
    from .logistic import MAX_BATCH_POINTS

    params = learner.get_params()
    if "batch_points" not in params or params["batch_points"] is not None:
        return learner
    return learner.clone(batch_points=min(int(rows), MAX_BATCH_POINTS))


def replay_history(learner: Any, features: Sequence[Any] | np.ndarray,
                   accepted: Sequence[bool] | np.ndarray,
                   outcomes: Sequence[float | None] | np.ndarray,
                   weights: Sequence[float] | np.ndarray | None = None,
                   rng: np.random.Generator | None = None,
                   max_copies: int | None = None) -> Any:
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
    weights : array-like, optional
        (n,): each row's weight (:func:`augmentation_weights`), replayed as :func:`copies`
        drawn from ``rng`` (required with weights) within ``max_copies``. A row's copies are
        replayed together at its place: the history keeps its order (an earlier era before
        the decisions that followed it, a book's time order), and a learner that fits as it
        goes, as the logistic learners' online Newton steps, takes k copies of a row as a row
        of weight k. Default: every row once.
    rng : numpy.random.Generator, optional
        The stream of the copies' draws (with ``weights`` only).
    max_copies : int, optional
        The most rows replayed, copies included (:func:`copies`).

    Raises
    ------
    HistoryError
        Naming the row a learner refuses (a ``ValueError``).
    ValueError
        Weights or ``max_copies`` refused (:func:`copies`), or weights without ``rng``.

    Examples
    --------
    >>> from strategic_apple_tasting import NaiveGreedyOLS
    >>> learner = NaiveGreedyOLS(delta=0.1, r0=0.0, feedback="apple").reset(d=2, rng=0)
    >>> learner = replay_history(learner, [[1.0, 0.5], [1.0, -0.5]], [True, False],
    ...                          [0.4, None])
    >>> learner.desk.pending(), learner.estimate() is not None
    ([], True)
    """
    n = len(features)
    if weights is None:
        counts = np.ones(n, dtype=np.int64)
    else:
        if rng is None:
            raise ValueError("rng must be a numpy.random.Generator when weights are given")
        if np.shape(weights) != (n,):
            raise ValueError(f"weights must be {n} numbers (one per row), got shape "
                             f"{np.shape(weights)}")
        counts = copies(weights, rng, max_copies)
    d = int(np.shape(features)[1]) if n else 0
    try:
        take = learner.desk.adopt(LinearThreshold(np.zeros(d), -1.0), time=0.0)
        learner.desk.hold(take.version)
        refuse = learner.desk.adopt(LinearThreshold(np.zeros(d), 1.0), time=0.0)
        learner.desk.hold(refuse.version)
    except ValueError as exc:
        raise HistoryError(None, str(exc)) from None
    for k, (z, yes, outcome, many) in enumerate(zip(features, accepted, outcomes, counts,
                                                     strict=True)):
        seen = outcome is not None and not (isinstance(outcome, float) and np.isnan(outcome))
        for copy in range(int(many)):
            id_ = f"history-{k + 1}" if copy == 0 else f"history-{k + 1}-copy-{copy}"
            try:
                learner.desk.record(np.asarray(z, dtype=float), id_, bool(yes),
                               take.version if yes else refuse.version, time=float(k))
                if seen:
                    learner.desk.report(id_, float(outcome))
            except ValueError as exc:
                raise HistoryError(k, str(exc)) from None
    learner.desk.release(take.version)
    learner.desk.release(refuse.version)
    return learner
