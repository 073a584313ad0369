"""Reward models: what accepting an agent earns (DESIGN §2, "Rewards").

The paper's model is linear plus noise: r(1) = ⟨θ1, x⟩ + σ·ε. A data game (:mod:`.data`)
may instead pay each drawn row's own outcome: the row repaid with probability ``repaid[i]``
(0 or 1 for a recorded outcome) and then earns ``if_repaid[i]``, else ``if_defaulted[i]``.
:class:`~.game.Game`'s ``rewards`` setting chooses between them (``"linear"`` or
``"recorded"``); each instance builds the model its compiled code receives.

Compiled code receives both as one type, :class:`RewardsCore` (a model's ``compiled()``, whose
``kind`` chooses the arithmetic at run time, so the engine's loop is compiled once for both),
and reaches it through two functions dispatched on that class: its mean (:func:`reward_mean`,
which regret is measured on) and a draw of the realized reward (:func:`reward_draw`, which the
learner sees). Both get the row the context came from.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._jit import dispatch_on_class, njit
from .policies import score

#: The values of :class:`~.game.Game`'s ``rewards`` setting.
REWARDS = ("linear", "recorded")


#: ``RewardsCore.kind`` of each model.
LINEAR, RECORDED = 0, 1


class RewardsCore(NamedTuple):
    """A reward model as compiled code receives it (``model.compiled()``): one type for both,
    ``kind`` choosing the arithmetic; the linear model's arrays are empty.

    Examples
    --------
    >>> LinearRewards().compiled().kind == LINEAR
    True
    """

    kind: int
    mean: np.ndarray
    repaid: np.ndarray
    if_repaid: np.ndarray
    if_defaulted: np.ndarray


class LinearRewards(NamedTuple):
    """r(1) = ⟨θ1, x⟩ + σ·ε with ε standard normal: the paper's model.

    Examples
    --------
    >>> LinearRewards().name
    'linear'
    """

    name = "linear"

    def compiled(self) -> RewardsCore:
        """This model as compiled code receives it."""
        empty = np.zeros(0)
        return RewardsCore(LINEAR, empty, empty, empty, empty)


class RecordedRewards(NamedTuple):
    """Each row's own outcome: with probability ``repaid[i]`` the row earns ``if_repaid[i]``,
    else ``if_defaulted[i]``; ``mean[i]`` is the expectation, computed once so that both of the
    engine's paths read the same number. One uniform a round decides the outcome (drawn every
    round, so every learner meets the same outcomes).

    Examples
    --------
    >>> import numpy as np
    >>> model = RecordedRewards.from_rows(np.array([1.0, 0.5]), np.array([0.2, 0.2]),
    ...                                   np.array([-1.0, -1.0]))
    >>> model.mean.tolist()
    [0.2, -0.4]
    """

    mean: np.ndarray
    repaid: np.ndarray
    if_repaid: np.ndarray
    if_defaulted: np.ndarray

    name = "recorded"

    def compiled(self) -> RewardsCore:
        """This model as compiled code receives it."""
        return RewardsCore(RECORDED, self.mean, self.repaid, self.if_repaid, self.if_defaulted)

    @classmethod
    def from_rows(cls, repaid: np.ndarray, if_repaid: np.ndarray, if_defaulted: np.ndarray
                  ) -> RecordedRewards:
        mean = repaid * if_repaid + (1.0 - repaid) * if_defaulted
        return cls(mean=np.ascontiguousarray(mean, dtype=np.float64),
                   repaid=np.ascontiguousarray(repaid, dtype=np.float64),
                   if_repaid=np.ascontiguousarray(if_repaid, dtype=np.float64),
                   if_defaulted=np.ascontiguousarray(if_defaulted, dtype=np.float64))


@njit(inline="always")
def _mean(model, theta1, x, row):
    if model.kind == RECORDED:
        return model.mean[row]
    return score(theta1, x)


@njit(inline="always")
def _draw(model, mean, sigma, rng, row):
    if model.kind == RECORDED:
        # One uniform whatever the row: a row with probability 1 (or 0) of repaying still
        # draws it.
        if rng.random() < model.repaid[row]:
            return model.if_repaid[row]
        return model.if_defaulted[row]
    return mean + sigma * rng.standard_normal()


#: Compiled reward-model class → compiled mean(model, theta1, x, row): E[r(1)] of the round's
#: agent.
MEAN = {RewardsCore: _mean}
#: Compiled reward-model class → compiled draw(model, mean, sigma, rng, row): the realized r(1).
DRAW = {RewardsCore: _draw}

reward_mean = dispatch_on_class(
    "reward_mean", ("model", "theta1", "x", "row"), MEAN,
    "E[r(1)] for true context x drawn from row ``row`` (compiled-only).")
reward_draw = dispatch_on_class(
    "reward_draw", ("model", "mean", "sigma", "rng", "row"), DRAW,
    "The realized r(1) of a round whose mean is ``mean`` (compiled-only; draws the noise).")
