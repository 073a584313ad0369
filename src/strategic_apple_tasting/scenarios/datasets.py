"""Lending data sets as games on the engine: the named data sets, and the game of a
data set (its rows, their real outcomes, agents that game the declared features).

:func:`data_game` turns a :class:`DataSet` (or the :class:`~.lending.LendingData` of German
credit or a CSV) into a :class:`~strategic_apple_tasting.game.Game`: contexts are the rows
(:class:`~strategic_apple_tasting.game.DataContexts`), the reward of accepting is the row's
recorded outcome (or, with ``rewards="linear"``, the least-squares fit of it plus noise),
agents game the gameable features within δ
(:class:`~strategic_apple_tasting.game.SubsetGaming`), θ1 is the least-squares rule and σ the
rewards' spread about it (what learners tuned to a noise level are told). The game runs on
the compiled engine like any other (``simulate``, ``sat run --data``, sweep specs).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..game import Game, SubsetGaming
from ..game.data import HOLDOUT_SHARE, DataContexts, break_even_logodds
from .dataset import DataSet

if TYPE_CHECKING:  # imported where it is used: it brings pandas, which `sat run` never needs
    from .lending import LendingData

#: How :func:`~.lending.load_german_credit` names its source.
GERMAN_SOURCE = "UCI Statlog German credit"


def from_lending(data: LendingData, title: str | None = None) -> DataSet:
    """A :class:`~.lending.LendingData` (German credit, a CSV) as a data set: each row repaid
    or defaulted, with its recorded reward either way. ``title`` names it in results tables
    (default ``german-credit`` for the shipped data, ``lending-csv`` for a CSV). Where the
    rewards depend on the loan (a CSV's amount, rate, loss given default), a last column,
    not gameable, holds each loan's break-even log-odds at r0 = 0
    (:func:`~strategic_apple_tasting.game.data.break_even_logodds`; :func:`data_game`
    recomputes it at its r0).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from strategic_apple_tasting.scenarios import load_csv
    >>> csv = pathlib.Path(tempfile.mkdtemp()) / "loans.csv"
    >>> _ = csv.write_text("bad,income,cash\\n0,3,1\\n1,1,0\\n0,2,2\\n1,0,1\\n")
    >>> data = from_lending(load_csv(csv, label="bad", default_value=1,
    ...                              features=["income", "cash"], gameable=["cash"]))
    >>> data.gameable_names(), data.contexts.recorded().mean.tolist()
    (('cash',), [1.0, -1.0, 1.0, -1.0])
    """
    from .lending import LendingData

    if not isinstance(data, LendingData):
        raise ValueError(f"data must be a LendingData (load_german_credit, load_csv), "
                         f"got {type(data).__name__}")
    if title is None:
        title = "german-credit" if data.source.startswith(GERMAN_SOURCE) else "lending-csv"
    return data.data_set(title)


def _german(gameable: tuple[str, ...] | None) -> DataSet:
    from .lending import load_german_credit

    kw = {} if gameable is None else {"gameable": list(gameable)}
    try:
        return from_lending(load_german_credit(**kw))
    except ImportError as exc:  # the extra is missing: its one line says which
        raise ValueError(str(exc)) from None


def _fico(gameable: tuple[str, ...] | None) -> DataSet:
    from .fico import load_fico

    return load_fico() if gameable is None else load_fico(gameable=list(gameable))


def _taiwan(gameable: tuple[str, ...] | None) -> DataSet:
    from .taiwan import load_taiwan_credit

    return load_taiwan_credit() if gameable is None else load_taiwan_credit(list(gameable))


#: How many applicants ``fico-applicants`` draws from the FICO tables (seed 0): enough that
#: a backtest's new applicants (30%) are 3,000, German credit's ten times.
FICO_APPLICANTS = 10_000


def _fico_applicants(gameable: tuple[str, ...] | None) -> DataSet:
    return _fico(gameable).applicants(FICO_APPLICANTS, seed=0)


#: Named data sets (``sat run --data``, the ``data`` setting of specs) → loader(gameable).
DATASETS: dict[str, Callable[[tuple[str, ...] | None], DataSet]] = {
    "german-credit": _german, "fico": _fico, "fico-applicants": _fico_applicants,
    "taiwan-credit": _taiwan}


@functools.lru_cache(maxsize=16)
def load_dataset(name: str, gameable: tuple[str, ...] | None = None) -> DataSet:
    """A named data set (:data:`DATASETS`), loaded once per process for each ``gameable``.

    ``gameable`` names the attributes agents can game (the data set's default if None).

    Examples
    --------
    >>> load_dataset("fico").gameable_names()
    ('score',)
    """
    if name not in DATASETS:
        raise ValueError(f"data must be one of {', '.join(DATASETS)}, got {name!r}")
    return DATASETS[name](gameable)


def at_r0(contexts: DataContexts, r0: Any) -> DataContexts:
    """``contexts`` with each loan's break-even column (if it has one) at ``r0`` (the column
    is made at r0 = 0; a bad r0 is left to the game to refuse)."""
    column = contexts.break_even_column
    if (column is None or not isinstance(r0, int | float) or isinstance(r0, bool)
            or not math.isfinite(r0) or r0 == 0.0):
        return contexts
    rows = contexts.rows.copy()
    rows[:, column] = break_even_logodds(contexts.if_repaid, contexts.if_defaulted, float(r0))
    return contexts._replace(rows=rows)


def data_game(data: DataSet | LendingData, *, delta: float | None = None, truthful: float = 0.0,
              r0: float = 0.0, rewards: str = "recorded", sigma: float | None = None,
              delay: int = 0, delay_law: str = "fixed", period: int = 1,
              protocol: str = "replay", holdout_share: float = HOLDOUT_SHARE) -> Game:
    """The game on a data set's rows (module docstring).

    Parameters
    ----------
    data : DataSet or LendingData
        The rows (:func:`load_dataset`, :func:`~.fico.load_fico`,
        :func:`~.taiwan.load_taiwan_credit`, :func:`from_lending`, or a
        :func:`~.lending.load_german_credit` / :func:`~.lending.load_csv` result).
    delta : float, optional
        Agents' budget in the features' (standardized) units; default the game's, 0.1.
    truthful : float
        Probability that an applicant does not game.
    r0 : float
        Reward of rejecting, in the scaled rewards' units.
    rewards : {"recorded", "linear"}
        Each row's own outcome, or the least-squares rule's prediction plus noise σ (where the
        linear model is exactly right).
    sigma : float, optional
        The rewards' spread about the least-squares rule by default (:meth:`DataContexts.fitted`);
        the noise under ``rewards="linear"``.
    delay, delay_law, period
        As for :class:`~strategic_apple_tasting.game.Game`.
    protocol : {"replay", "once", "holdout"}
        How each seed's applicants come from the rows (:mod:`strategic_apple_tasting.game.data`):
        drawn with replacement (every profit in-sample), each at most once, or with a share
        ``holdout_share`` held out and the learner's rules scored on it.
    holdout_share : float
        The share of rows held out per seed under ``holdout``.

    Examples
    --------
    >>> game = data_game(load_dataset("fico"), delta=0.5)
    >>> game.dimension, game.settings()["gameable"], game.settings()["rewards"]
    (2, 'score', 'recorded')
    """
    from .lending import LendingData

    if isinstance(data, LendingData):
        data = from_lending(data)
    if not isinstance(data, DataSet):
        raise ValueError(f"data must be a DataSet or a LendingData, got {type(data).__name__}")
    agents = SubsetGaming(gameable=data.gameable)
    contexts = at_r0(data.contexts._replace(protocol=protocol, holdout_share=holdout_share), r0)
    return Game(dimension=data.d, delta=delta, truthful=truthful, r0=r0, sigma=sigma,
                contexts=contexts, agents=agents, rewards=rewards, delay=delay,
                delay_law=delay_law, period=period)
