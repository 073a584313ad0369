"""A data set's rows as the game's contexts, with each row's own outcome (DESIGN §2, "Data").

:class:`DataContexts` is what a user builds (``scenarios`` builds it from German credit, the
FICO tables or a CSV): the rows, each row's chance of repaying and what accepting it earns
either way, how often each row is drawn, an optional group per row (carried with the data,
never shown to learners) and the names of the features and groups. Each game instance binds
it to :class:`DataRows`, the compiled model drawn from: a row each round, uniformly or by
the weights, or the rows of ``order`` in turn (to replay a given sequence). Under the game's
``rewards = "recorded"`` the reward of accepting is the drawn row's outcome
(:class:`~.rewards.RecordedRewards`); under ``"linear"`` it is the paper's
⟨θ1, x⟩ + σ·ε, with θ1 the least-squares fit of the rows' mean rewards (:meth:`fitted`).

How a seed's applicants come from the rows is the data's evaluation **protocol**
(:data:`PROTOCOLS`):

* ``replay``: each round draws a row with replacement (by the weights), so a run of T > n
  rounds meets each row T/n times and every profit it earns is **in-sample**: on rows the
  learner has learned from;
* ``once``: each row at most once per run, in a fresh random order per seed (T ≤ n), or in
  the given ``order`` (each row at most once: a book's time order);
* ``holdout``: per seed, a share of the rows (stratified by outcome) is held out; the learner
  meets only the others (drawn as ``replay`` draws), and the engine scores the rule in force
  at each recorded round on every held-out applicant, answering it as the game's agents do
  (:mod:`strategic_apple_tasting.engine.holdout`): profit on applicants it has never seen. The
  least-squares rule θ1 of the seed's game is fitted on its learning rows only. A data set
  whose rows are a population's cells drawn by weight (the FICO tables: every draw is a new
  applicant with a fresh outcome) holds nothing out: its held-out applicants are the
  population itself, each cell at its weight, scored at its expected reward.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .._memo import ArrayMemo
from .contexts import CONTEXTS, DATA, ContextsCore, _core
from .rewards import RecordedRewards

#: Evaluation protocols of a data game (module docstring): rows drawn with replacement, each
#: row at most once, or a held-out share scored out of sample.
PROTOCOLS = ("replay", "once", "holdout")
#: The share of a data set's rows held out per seed under ``holdout`` by default.
HOLDOUT_SHARE = 0.3
#: Which child of a seed's ``SeedSequence`` draws its protocol's split or order: the one after
#: the game's streams (``game.STREAMS``, seven) and the service's shadow learner's (the
#: eighth), so that no stream a run already draws from changes.
PROTOCOL_STREAM = 8


def protocol_rng(seed: int) -> np.random.Generator:
    """The generator that draws seed ``seed``'s split (``holdout``) or order (``once``)."""
    sequence = np.random.SeedSequence(int(seed), spawn_key=(PROTOCOL_STREAM,))
    return np.random.Generator(np.random.PCG64(sequence))


def holdout_split(repaid: np.ndarray, share: float, rng: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Rows to learn from and rows held out, stratified by outcome: within the repaid rows
    (``repaid >= 0.5``) and within the others, a random ``share`` (rounded, at least one row of
    a stratum of two or more) is held out. Both index arrays are sorted.

    Examples
    --------
    >>> learn, held = holdout_split(np.array([1.0, 1.0, 1.0, 0.0, 0.0]), 0.5,
    ...                             np.random.default_rng(0))
    >>> len(learn), len(held), sorted(np.r_[learn, held].tolist()) == list(range(5))
    (2, 3, True)
    """
    held = []
    for stratum in (np.flatnonzero(repaid >= 0.5), np.flatnonzero(repaid < 0.5)):
        k = round(share * len(stratum))
        if len(stratum) >= 2:
            k = min(max(k, 1), len(stratum) - 1)  # each side keeps both outcomes
        else:
            k = 0
        held.append(rng.permutation(stratum)[:k])
    out = np.sort(np.concatenate(held)).astype(np.int64)
    learn = np.setdiff1d(np.arange(len(repaid), dtype=np.int64), out)
    return learn, out


class DataRows(NamedTuple):
    """:class:`DataContexts` bound to a game instance: what the engine draws rows from (compiled
    code receives it as a :class:`~.contexts.ContextsCore`, :meth:`compiled`).

    ``cumulative`` holds the cumulative draw probabilities (empty: uniform); ``order`` the
    rows to play in turn (empty: draw). Under ``holdout``, ``held_out`` holds the rows the
    seed never draws and ``held_weights`` each one's weight in the held-out score (summing to
    1), and ``fit`` the least-squares rule fitted on the rows it draws (empty otherwise: the
    game's θ1).
    """

    rows: np.ndarray
    cumulative: np.ndarray
    order: np.ndarray
    held_out: np.ndarray = np.empty(0, dtype=np.int64)
    held_weights: np.ndarray = np.empty(0)
    fit: np.ndarray = np.empty(0)

    name = "data-rows"

    def compiled(self) -> ContextsCore:
        """These rows as compiled code receives them (drawn by the contexts' switch)."""
        return _core(DATA, points=self.rows, cumulative=self.cumulative, order=self.order)


#: A loan's break-even log-odds are clipped to ±BREAK_EVEN_CLIP: beyond, the loan is worth
#: granting to anyone (a default costs no more than rejecting) or to nobody (a repaid loan
#: earns no more than rejecting), and a finite column keeps every rule finite.
BREAK_EVEN_CLIP = 30.0
#: The name of the break-even column in a data game's features.
BREAK_EVEN_NAME = "break-even log-odds"


def break_even_logodds(if_repaid: np.ndarray, if_defaulted: np.ndarray,
                       r0: float = 0.0) -> np.ndarray:
    """Each loan's break-even log-odds of repaying: logit(p*), p* = (r0 − if_defaulted) /
    (if_repaid − if_defaulted), the probability of repaying at which granting it earns r0 in
    expectation, clipped to ±:data:`BREAK_EVEN_CLIP` (−: granting pays whatever the outcome,
    +: it never does).

    Examples
    --------
    >>> break_even_logodds(np.array([0.2, 1.0, 0.0]), np.array([-1.0, -1.0, -0.5])).round(3)
    array([ 1.609,  0.   , 30.   ])
    """
    gain = np.asarray(if_repaid, dtype=float)
    loss = np.asarray(if_defaulted, dtype=float)
    spread = gain - loss
    # A loan that earns the same either way (spread 0) pays iff that reward clears r0.
    p = np.where(spread > 0, (r0 - loss) / np.where(spread > 0, spread, 1.0),
                 np.where(gain >= r0, 0.0, 1.0))
    inside = (p > 0.0) & (p < 1.0)
    q = np.where(inside, p, 0.5)
    return np.where(inside, np.clip(np.log(q) - np.log1p(-q), -BREAK_EVEN_CLIP,
                                    BREAK_EVEN_CLIP),
                    np.where(p <= 0.0, -BREAK_EVEN_CLIP, BREAK_EVEN_CLIP))


def _fail(name: str, allowed: str, value: Any) -> ValueError:
    return ValueError(f"{name} must be {allowed}, got {value}")


def _shape(a: Any) -> str:
    return f"{type(a).__name__} of shape {getattr(a, 'shape', None)}"


class DataContexts(NamedTuple):
    """A data set's rows as contexts, each with its own outcome.

    Parameters
    ----------
    rows : numpy.ndarray
        Shape (n, d), float64: the contexts, used as given (standardize them first).
    repaid : numpy.ndarray
        Shape (n,): the probability that row i repays, in [0, 1] (0 or 1 for a recorded
        outcome).
    if_repaid, if_defaulted : numpy.ndarray
        Shape (n,): the reward of accepting row i if it repays, and if it defaults (rejecting
        earns the game's r0).
    weights : numpy.ndarray, optional
        Shape (n,): how likely each row is to be drawn (non-negative, normalized here; default
        uniform).
    groups : numpy.ndarray, optional
        Shape (n,), integers indexing ``group_names``: each row's group. Carried with the data
        for reports by group; no learner sees it.
    feature_names, group_names : tuple of str
        Names of the d columns (results tables name gameable features by them) and of the
        groups.
    title : str
        The data set's name in results tables (``"german-credit"``).
    reward_scale : float
        The data's own units per reward unit (profit in the data's units is
        ``profit * reward_scale``).
    order : numpy.ndarray, optional
        Row indices played in turn instead of drawing: under ``replay`` cycling (to replay a
        given sequence), under ``once`` each at most once (in place of a random order).
    protocol : {"replay", "once", "holdout"}
        How each seed's applicants come from the rows (module docstring); ``order`` is played
        under ``replay`` and ``once``.
    holdout_share : float
        Under ``holdout``, the share of rows held out per seed (in (0, 1)).
    break_even_column : int, optional
        The column of ``rows`` holding each loan's own break-even log-odds of repaying,
        :func:`break_even_logodds` of its ``if_repaid`` and ``if_defaulted`` (a book whose
        rewards depend on the loan: its amount, rate, loss given default). Not gameable; the
        logistic learners accept iff their log-odds clear it (:attr:`Game.break_even_column`).
        None: every loan earns the same two rewards.

    Examples
    --------
    >>> import numpy as np
    >>> data = DataContexts(rows=np.array([[1.0, -1.0], [1.0, 1.0]]),
    ...                     repaid=np.array([0.0, 1.0]), if_repaid=np.array([0.2, 0.2]),
    ...                     if_defaulted=np.array([-1.0, -1.0]), feature_names=("one", "z"))
    >>> data.dimension, data.settings()
    (2, {'data': 'data', 'rows': 2, 'reward_scale': 1.0, 'protocol': 'replay'})
    """

    rows: np.ndarray
    repaid: np.ndarray
    if_repaid: np.ndarray
    if_defaulted: np.ndarray
    weights: np.ndarray | None = None
    groups: np.ndarray | None = None
    feature_names: tuple[str, ...] = ()
    group_names: tuple[str, ...] = ()
    title: str = "data"
    reward_scale: float = 1.0
    order: np.ndarray | None = None
    protocol: str = "replay"
    holdout_share: float = HOLDOUT_SHARE
    break_even_column: int | None = None

    name = "data"

    @property
    def dimension(self) -> int:
        return int(self.rows.shape[1])

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.rows.shape[0])

    def settings(self) -> dict[str, Any]:
        out = {"data": self.title, "rows": self.n, "reward_scale": float(self.reward_scale),
               "protocol": self.protocol}
        if self.protocol == "holdout":
            out["holdout_share"] = float(self.holdout_share) if self.weights is None else 0.0
        return out

    @property
    def population(self) -> bool:
        """Whether the rows are a population's cells drawn by weight (each draw a new
        applicant), not applicants: nothing is held out of them, nor played once."""
        return self.weights is not None

    def check_horizon(self, horizon: int) -> None:
        """Refuse a run longer than the protocol allows (``once``: T ≤ n)."""
        rows = self.n if self.order is None else len(self.order)
        if self.protocol == "once" and horizon > rows:
            raise ValueError(f"horizon must be at most the {rows:,} rows under protocol "
                             f"'once' (each row at most once), got {horizon:,}: use protocol "
                             "'holdout' or 'replay' for longer runs")

    def check(self) -> None:
        rows = self.rows
        if not (isinstance(rows, np.ndarray) and rows.ndim == 2 and rows.shape[0] >= 1
                and rows.shape[1] >= 1 and rows.dtype == np.float64):
            raise _fail("rows", "a 2-D float64 array with at least one row and column",
                        _shape(rows))
        if not np.all(np.isfinite(rows)):
            raise ValueError("rows must be finite (no NaN or infinity)")
        n = rows.shape[0]
        for name in ("repaid", "if_repaid", "if_defaulted"):
            a = getattr(self, name)
            if not (isinstance(a, np.ndarray) and a.shape == (n,)
                    and np.issubdtype(a.dtype, np.floating)):
                raise _fail(name, f"a float array of shape ({n},), one value a row", _shape(a))
            if not np.all(np.isfinite(a)):
                raise ValueError(f"{name} must be finite (no NaN or infinity)")
        bad = (self.repaid < 0) | (self.repaid > 1)
        if bad.any():
            i = int(np.argmax(bad))
            raise _fail("repaid", "probabilities in [0, 1]",
                        f"{float(self.repaid[i])!r} at row {i}")
        if self.weights is not None:
            w = self.weights
            if not (isinstance(w, np.ndarray) and w.shape == (n,)
                    and np.issubdtype(w.dtype, np.floating)):
                raise _fail("weights", f"a float array of shape ({n},) or None", _shape(w))
            if not (np.all(np.isfinite(w)) and np.all(w >= 0) and w.sum() > 0):
                raise ValueError("weights must be finite, >= 0 and not all 0")
        if self.groups is not None:
            g = self.groups
            k = len(self.group_names)
            if not (isinstance(g, np.ndarray) and g.shape == (n,)
                    and np.issubdtype(g.dtype, np.integer)):
                raise _fail("groups", f"an integer array of shape ({n},) or None", _shape(g))
            if len(g) and (g.min() < 0 or g.max() >= k):
                raise _fail("groups", f"indices of group_names (0 to {k - 1})",
                            f"values from {int(g.min())} to {int(g.max())}")
        if self.feature_names and len(self.feature_names) != rows.shape[1]:
            raise _fail("feature_names", f"{rows.shape[1]} names, one a column",
                        f"{len(self.feature_names)}")
        if not (isinstance(self.reward_scale, int | float) and math.isfinite(self.reward_scale)
                and self.reward_scale > 0):
            raise _fail("reward_scale", "a finite number > 0", repr(self.reward_scale))
        if self.protocol not in PROTOCOLS:
            raise _fail("protocol", f"one of {', '.join(PROTOCOLS)}", repr(self.protocol))
        share = self.holdout_share
        if not (isinstance(share, int | float) and not isinstance(share, bool)
                and 0.0 < share < 1.0):
            raise _fail("holdout_share", "a number in (0, 1), the share of rows held out",
                        repr(share))
        if self.protocol == "once" and self.population:
            raise ValueError("protocol 'once' needs rows that are applicants; these rows are "
                             "a population's cells drawn by weight (each draw is a new "
                             "applicant): use protocol 'holdout' or 'replay'")
        if self.protocol == "holdout" and self.order is not None:
            raise ValueError("order is played under protocols 'replay' and 'once' only, got "
                             "protocol 'holdout'")
        if self.order is not None:
            o = self.order
            if not (isinstance(o, np.ndarray) and o.ndim == 1 and len(o) >= 1
                    and np.issubdtype(o.dtype, np.integer)
                    and o.min() >= 0 and o.max() < n):
                raise _fail("order", f"a non-empty 1-D integer array of rows (0 to {n - 1}) "
                            "or None", _shape(o))
            if self.protocol == "once" and len(np.unique(o)) != len(o):
                raise ValueError("order must name each row at most once under protocol "
                                 "'once'")
        k = self.break_even_column
        if k is not None and not (isinstance(k, int | np.integer) and not isinstance(k, bool)
                                  and 0 <= k < rows.shape[1]):
            raise _fail("break_even_column", f"a column of rows (0 to {rows.shape[1] - 1}) or "
                        "None", repr(k))

    def check_game(self, game: Any) -> None:
        """Refuse what a data game cannot be (called by the game)."""
        if game.feedback != "apple":
            raise ValueError(f"feedback must be apple with data contexts (a loan's outcome is "
                             f"seen only if it was granted), got {game.feedback!r}")
        if game.agents.name == "heterogeneous":
            raise ValueError("agents must share one budget in a data game (its benchmarks "
                             "search the rules the agents answer), got 'heterogeneous'")

    def probabilities(self) -> np.ndarray:
        """How likely each row is to be drawn (``order`` aside)."""
        if self.weights is None:
            return np.full(self.n, 1.0 / self.n)
        return self.weights / self.weights.sum()

    def recorded(self) -> RecordedRewards:
        """The rows' outcomes as the compiled reward model."""
        return RecordedRewards.from_rows(self.repaid, self.if_repaid, self.if_defaulted)

    def outcome_rewards(self) -> tuple[float, float] | None:
        """The largest and the smallest reward accepting a row can earn (a repaid loan's and a
        defaulted one's, for outcomes that are loans), or None if every outcome earns the same:
        what the logistic learners take as their two labels' rewards.

        Examples
        --------
        >>> import numpy as np
        >>> data = DataContexts(rows=np.ones((2, 1)), repaid=np.array([1.0, 0.0]),
        ...                     if_repaid=np.array([0.2, -1.0]), if_defaulted=np.array([0.2, -1.0]))
        >>> data.outcome_rewards()
        (0.2, -1.0)
        """
        earned = np.concatenate([self.if_repaid[self.repaid > 0],
                                 self.if_defaulted[self.repaid < 1]])
        top, bottom = float(earned.max()), float(earned.min())
        return (top, bottom) if top > bottom else None

    def fitted(self) -> tuple[np.ndarray, float]:
        """θ*, the least-squares fit of the rows' mean rewards on their features (weighted by
        how often each row is drawn), and the spread of the rewards about it (the root mean
        square of reward − ⟨θ*, x⟩ over draws and outcomes: what learners tuned to a noise
        level σ are told).

        Examples
        --------
        >>> import numpy as np
        >>> data = DataContexts(rows=np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]),
        ...                     repaid=np.ones(3), if_repaid=np.array([0.0, 1.0, 2.0]),
        ...                     if_defaulted=np.zeros(3))
        >>> theta, sigma = data.fitted()
        >>> (theta.round(12) + 0.0).tolist(), round(sigma, 12)
        ([0.0, 1.0], 0.0)
        """
        mean = self.recorded().mean
        spread = self.repaid * (1.0 - self.repaid) * (self.if_repaid - self.if_defaulted) ** 2
        if self.weights is None:
            # Unweighted: the arithmetic of the lending scenario's fit, so its θ* and σ carry
            # over to the bit.
            theta, *_ = np.linalg.lstsq(self.rows, mean, rcond=None)
            resid = mean - self.rows @ theta
            return theta, float(np.sqrt(np.mean(resid * resid + spread)))
        p = self.probabilities()
        root = np.sqrt(p)
        theta, *_ = np.linalg.lstsq(self.rows * root[:, None], mean * root, rcond=None)
        resid = mean - self.rows @ theta
        return theta, float(np.sqrt(np.sum(p * (resid * resid + spread))))

    def for_instance(self, instance: Any) -> DataRows:
        """The compiled model of one game instance (its seed's order or split)."""
        rows = np.ascontiguousarray(self.rows)
        order = (np.empty(0, dtype=np.int64) if self.order is None
                 else np.ascontiguousarray(self.order, dtype=np.int64))
        if self.protocol == "once" and self.order is None:  # a given order is played as is
            order = protocol_rng(instance.seed).permutation(self.n).astype(np.int64)
        if self.protocol == "holdout" and not self.population:
            learn, held = holdout_split(self.repaid, float(self.holdout_share),
                                        protocol_rng(instance.seed))
            weights = np.zeros(self.n)
            weights[learn] = 1.0
            cumulative = np.cumsum(weights / weights.sum())
            cumulative[-1] = 1.0  # rounding must not leave a u with no row
            return DataRows(rows=rows, cumulative=cumulative, order=order, held_out=held,
                            held_weights=np.full(len(held), 1.0 / len(held)),
                            fit=_learning_fit(self._replace(weights=weights)))
        if self.weights is None:
            cumulative = np.empty(0)
        else:
            cumulative = np.cumsum(self.probabilities())
            cumulative[-1] = 1.0  # rounding must not leave a u with no row
        if self.protocol == "holdout":  # a population: its held-out applicants are all of it
            return DataRows(rows=rows, cumulative=cumulative, order=order,
                            held_out=np.arange(self.n, dtype=np.int64),
                            held_weights=self.probabilities())
        return DataRows(rows=rows, cumulative=cumulative, order=order)


CONTEXTS[DataContexts.name] = DataContexts


#: θ* fitted on a seed's learning rows, by the rows, outcomes and weights: a game builds its
#: instance several times a run (the learner's run, the benchmarks), and a sweep's cells at
#: several budgets share a seed's split; the fit was half of a held-out cell's time.
_FITS: ArrayMemo[np.ndarray] = ArrayMemo(keep=256)


def _learning_fit(data: DataContexts) -> np.ndarray:
    """``data.fitted()[0]``, computed once a process for the same arrays."""
    hit = _FITS.get((data.rows, data.repaid, data.if_repaid, data.if_defaulted, data.weights),
                    lambda: data.fitted()[0])
    return hit.copy()  # a writeable array of its own: compiled code's types stay the same
