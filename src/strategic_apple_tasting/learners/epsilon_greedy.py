"""ε-greedy, unaware of gaming: a coin for exploring, else the unshifted ridge rule."""

from __future__ import annotations

from typing import Any

from ..game.game import check_number
from .two_arm_ridge import EPSILON, RidgeBandit


class EpsilonGreedy(RidgeBandit):
    """ε-greedy over the two actions, unaware of gaming.

    Each round, with probability ε_t = min(1, ε·t^(−decay)) (constant ε by default) it
    explores: it commits to one action for everyone this round, accept all or reject all with
    equal chance (β = 0; nobody games either). Otherwise it accepts iff ⟨θ̂1 − θ̂0, x'⟩ ≥ r0
    with the ridge estimates, unshifted. It learns from every observed point, gamed or not.

    Parameters
    ----------
    epsilon : float
        ε in [0, 1].
    decay : float
        ≥ 0: ε_t = min(1, ε·t^(−decay)) in round t; 0 (the default) keeps ε_t = ε.
    ridge : float
        λ > 0, the ridge prior.
    r0, feedback
        As for :class:`LinUCB`.

    Examples
    --------
    >>> EpsilonGreedy(epsilon=0.05).get_params()
    {'epsilon': 0.05, 'decay': 0.0, 'ridge': 1.0, 'r0': None, 'feedback': None}
    """

    name = "epsilon-greedy"
    _kind = EPSILON

    def __init__(self, epsilon: float = 0.1, decay: float = 0.0, ridge: float = 1.0,
                 r0: float | None = None, feedback: str | None = None) -> None:
        self.epsilon = epsilon
        self.decay = decay
        self.ridge = ridge
        self.r0 = r0
        self.feedback = feedback

    def _check_params(self) -> None:
        super()._check_params()
        check_number("epsilon", self.epsilon, 0.0, 1.0)
        check_number("decay", self.decay, 0.0)

    def _init_state(self, d: int) -> Any:
        return self._new_state(d, epsilon=float(self.epsilon), decay=float(self.decay))
