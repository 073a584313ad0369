"""A data set ready for a game: its rows, which features agents can move, and its provenance
(one type that the named data sets' loaders, :mod:`.datasets`, :mod:`.fico` and
:mod:`.taiwan`, all make)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..game import DataContexts


@dataclass(frozen=True, eq=False)
class DataSet:
    """A data set ready for :func:`data_game`.

    Attributes
    ----------
    contexts : DataContexts
        The rows, their outcomes, names and groups.
    gameable : numpy.ndarray
        (d,) bool: the features agents can move.
    source : str
        Where the rows came from.
    notes : dict
        How they were prepared (rewards, mix, ...).
    time : numpy.ndarray, optional
        (n,) float: when each row's application came (any increasing scale), if the data has a
        time order: a lender's backtest then splits and meets the rows in that order.
    """

    contexts: DataContexts
    gameable: np.ndarray
    source: str
    notes: dict[str, Any] = field(default_factory=dict)
    time: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of rows."""
        return self.contexts.n

    @property
    def d(self) -> int:
        """Number of features, the intercept included."""
        return self.contexts.dimension

    @property
    def title(self) -> str:
        return self.contexts.title

    def gameable_names(self) -> tuple[str, ...]:
        """Names of the features agents can move."""
        names = self.contexts.feature_names
        return tuple(names[i] for i in np.flatnonzero(self.gameable))
