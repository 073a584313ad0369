"""An adaptive adversary: each round's agent chosen from the learner's past decisions.

The paper remarks (after ``thm:upd-one``) that `alg:UPD-ONE` handles agents chosen by an
*adaptive* adversary if EXP3.P replaces EXP3. The context models of :mod:`.contexts` are
oblivious (drawn by compiled code that never sees a decision), so this adversary lives beside
them: it is driven round by round from Python (:meth:`AdaptivePlay.next_context`, then
:meth:`AdaptivePlay.observe` with the learner's decision), as a user's loop through the
per-round API would.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._jit import njit
from .contexts import GreedyTrap
from .game import check_number


@njit
def choose_point(wrong, gaps, warmup, t, explore, rng):
    """Round t's point (its row): the warm-up's t-th, then with probability ``explore`` a
    uniform cycle point, else the cycle point of largest |gap|·wrong (ties to the first). Two
    uniforms a round after the warm-up, used or not: the stream does not depend on the branch.
    Compiled, so that a compiled loop and :class:`AdaptivePlay` share it."""
    if t <= warmup:
        return t - 1
    cycle = gaps.shape[0] - warmup
    u = rng.random()
    k = min(int(rng.random() * cycle), cycle - 1)
    if u < explore:
        return warmup + k
    best, worst = warmup, -1.0
    for j in range(warmup, gaps.shape[0]):
        loss = abs(gaps[j]) * wrong[j]
        if loss > worst:
            best, worst = j, loss
    return best


@njit
def observe_point(wrong, gaps, i, accepted, rate):
    """Move point i's weighted rate of wrong decisions toward this decision's (right: accept
    iff gap ≥ 0)."""
    miss = 1.0 if accepted != (gaps[i] >= 0.0) else 0.0
    wrong[i] += rate * (miss - wrong[i])


class AdaptiveTrap(NamedTuple):
    """The greedy trap's points, each round the one the learner has lately got most wrong.

    After the trap's d warm-up rounds (:class:`~.contexts.GreedyTrap`: ``warmup_scale``·e_i),
    each round plays one of the trap's cycle points p_i (a good point and a bad point), chosen
    from the learner's past decisions: it keeps, for each p_i, an exponentially weighted rate
    w_i of the learner's wrong decisions on p_i (weight 1/``memory`` on the newest, starting at
    1), and plays the point of largest |gap(p_i)|·w_i, the expected loss it lately inflicted
    (gap = E[r(1)] − E[r(0)] at p_i; ties to the first point). With probability ``explore`` it
    plays a cycle point drawn uniformly instead, so that a rate it no longer feeds is refreshed.
    It knows θ (as the trap does) and sees only the decisions, which are public; its draws
    come from its own Generator, so it is deterministic given that Generator and the decisions.

    Parameters
    ----------
    memory : float
        Rounds over which a point's rate of wrong decisions is averaged, >= 1.
    explore : float
        Probability of a uniform cycle point instead of the worst one, in [0, 1].
    warmup_scale, margin : float
        The trap's (:class:`~.contexts.GreedyTrap`).

    Examples
    --------
    >>> from strategic_apple_tasting.game import Game
    >>> inst = Game(dimension=2, delta=0.1).instance(seed=0)
    >>> play = AdaptiveTrap().for_instance(inst, np.random.default_rng(0))
    >>> [play.next_context()[0] for _ in range(2)]   # the warm-up points
    [0, 1]
    >>> i, x = play.next_context()
    >>> play.observe(i, accepted=not play.best[i])   # a wrong decision on p_i
    """

    memory: float = 100.0
    explore: float = 0.1
    warmup_scale: float = 0.01
    margin: float = 0.3

    name = "adaptive-trap"

    def check(self) -> None:
        """``ValueError`` in one line naming the first bad field."""
        check_number("memory", self.memory, low=1.0)
        check_number("explore", self.explore, low=0.0, high=1.0)
        GreedyTrap(self.warmup_scale, self.margin).check()

    def for_instance(self, instance: Any, rng: np.random.Generator) -> AdaptivePlay:
        """The adversary of one seed (``instance``, a :class:`~.game.GameInstance`), drawing
        from ``rng``. Refuses the games the trap refuses."""
        self.check()
        trap = GreedyTrap(self.warmup_scale, self.margin)
        trap.check_game(instance.game)
        sequence = trap.for_instance(instance)
        return AdaptivePlay(self, sequence.points, sequence.cycle_start,
                            np.array([instance.gap(p) for p in sequence.points]), rng)


class AdaptivePlay:
    """One seed's adaptive adversary (:meth:`AdaptiveTrap.for_instance`): call
    :meth:`next_context` for each round's agent, then :meth:`observe` with the decision."""

    def __init__(self, model: AdaptiveTrap, points: np.ndarray, warmup: int, gaps: np.ndarray,
                 rng: np.random.Generator) -> None:
        #: Every point it may play, (n, d): the warm-up points, then the cycle points.
        self.points = points
        #: Each point's E[r(1)] − E[r(0)], and the right decision on it (accept iff ≥ 0).
        self.gaps = gaps
        self.best = gaps >= 0
        self.warmup = int(warmup)
        self.rate = 1.0 / float(model.memory)
        self.explore = float(model.explore)
        self.wrong = np.ones(points.shape[0])  # the weighted rate of wrong decisions per point
        self.rng = rng
        self.round = 0

    def next_context(self) -> tuple[int, np.ndarray]:
        """The next round's point: its row in :attr:`points` and the point (a copy)."""
        self.round += 1
        i = int(choose_point(self.wrong, self.gaps, self.warmup, self.round, self.explore,
                             self.rng))
        return i, self.points[i].copy()

    def observe(self, i: int, accepted: bool) -> None:
        """The learner's decision on point ``i`` (the row :meth:`next_context` returned)."""
        observe_point(self.wrong, self.gaps, int(i), bool(accepted), self.rate)
