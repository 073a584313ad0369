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

    def applicants(self, n: int, seed: int = 0, title: str | None = None) -> DataSet:
        """``n`` applicants drawn from a population's cells (the FICO tables), each with an
        outcome drawn from its cell's probability of repaying: a book of rows, as German
        credit's, that the holdout and once protocols and the lender's backtest take. The
        same ``seed`` gives the same book.

        Examples
        --------
        >>> from strategic_apple_tasting.scenarios import load_dataset
        >>> book = load_dataset("fico").applicants(5000)
        >>> book.n, book.contexts.population, book.title
        (5000, False, 'fico-applicants')
        >>> round(float(book.contexts.repaid.mean()), 2)   # the tables' 0.70, drawn
        0.7
        """
        c = self.contexts
        if not c.population:
            raise ValueError(f"{self.title}'s rows are applicants already: draw applicants "
                             "from a population's cells (the FICO tables)")
        if not (isinstance(n, int | np.integer) and not isinstance(n, bool)
                and 1 <= n <= 10**7):
            raise ValueError(f"n must be an integer from 1 to 10,000,000 applicants, got {n!r}")
        rng = np.random.default_rng(np.random.SeedSequence(int(seed)))
        cells = rng.choice(c.n, size=int(n), p=c.probabilities())
        repaid = (rng.random(int(n)) < c.repaid[cells]).astype(float)
        contexts = c._replace(
            rows=np.ascontiguousarray(c.rows[cells]), repaid=repaid,
            if_repaid=c.if_repaid[cells].copy(), if_defaulted=c.if_defaulted[cells].copy(),
            weights=None, groups=None if c.groups is None else c.groups[cells].copy(),
            title=title or f"{c.title}-applicants", order=None)
        return DataSet(contexts=contexts, gameable=self.gameable.copy(),
                       source=f"{self.source}; {n:,} applicants drawn (seed {seed})",
                       notes={**self.notes, "applicants": int(n), "sample_seed": int(seed)})

    def gameable_names(self) -> tuple[str, ...]:
        """Names of the features agents can move."""
        names = self.contexts.feature_names
        return tuple(names[i] for i in np.flatnonzero(self.gameable))
