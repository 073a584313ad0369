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
        book = self.take(cells)
        return DataSet(contexts=book.contexts._replace(
                           repaid=repaid, title=title or f"{c.title}-applicants"),
                       gameable=book.gameable,
                       source=f"{self.source}; {n:,} applicants drawn (seed {seed})",
                       notes={**self.notes, "applicants": int(n), "sample_seed": int(seed)})

    def take(self, index: np.ndarray) -> DataSet:
        """The rows ``index`` (in that order; a row may repeat) as a data set of their own,
        drawn without weights, each array a writable copy.

        Examples
        --------
        >>> from strategic_apple_tasting.scenarios import load_dataset
        >>> part = load_dataset("fico").take(np.array([2, 0, 2]))
        >>> part.n, part.contexts.weights is None
        (3, True)
        """
        c = self.contexts
        pick = {k: (None if getattr(c, k) is None
                    else np.ascontiguousarray(getattr(c, k)[index]))
                for k in ("rows", "repaid", "if_repaid", "if_defaulted", "groups")}
        return DataSet(contexts=c._replace(**pick, weights=None, order=None),
                       gameable=self.gameable.copy(), source=self.source, notes=self.notes,
                       time=None if self.time is None else self.time[index])

    def gameable_names(self) -> tuple[str, ...]:
        """Names of the features agents can move."""
        names = self.contexts.feature_names
        return tuple(names[i] for i in np.flatnonzero(self.gameable))
