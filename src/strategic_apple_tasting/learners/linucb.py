"""LinUCB, unaware of gaming: an optimistic rule that is not a linear threshold."""

from __future__ import annotations

from typing import Any

from ..game.game import check_number
from .two_arm_ridge import LINUCB, RidgeBandit


class LinUCB(RidgeBandit):
    """LinUCB, unaware of gaming: accept iff UCB1(x') ≥ r0 (bandit: UCB1(x') ≥ UCB0(x')).

    UCB_a(x) = ⟨θ̂_a, x⟩ + α·sqrt(xᵀV_a⁻¹x) with the ridge fit of arm a (V_a = λI + Σ xxᵀ).
    The accepted set is not a half-space: the published rule is a
    :class:`~strategic_apple_tasting.game.policies.GeneralRule`, which agents answer by a
    numerical best response. It learns from every observed point, gamed or not. With α = 0 it
    is greedy ridge regression and publishes linear thresholds.

    Parameters
    ----------
    alpha : float
        α ≥ 0, the width of the confidence bonus.
    ridge : float
        λ > 0, the ridge prior (V_a starts at λI).
    r0 : float, optional
        Reward of rejecting (None: the game's).
    feedback : {"apple", "bandit"}, optional
        Feedback mode (None: the game's).

    Examples
    --------
    >>> import numpy as np
    >>> learner = LinUCB(alpha=1.0, r0=0.5, feedback="apple").reset(2, np.random.default_rng(0))
    >>> rule = learner.policy()   # no data yet: UCB1(x) = ‖x‖, accept iff ‖x‖ ≥ 0.5
    >>> rule.accepts([0.3, 0.3]), rule.accepts([0.3, 0.4])
    (False, True)
    >>> learner.update([0.3, 0.4], True, reward=0.8)
    True
    """

    name = "linucb"
    _kind = LINUCB

    def __init__(self, alpha: float = 1.0, ridge: float = 1.0, r0: float | None = None,
                 feedback: str | None = None) -> None:
        self.alpha = alpha
        self.ridge = ridge
        self.r0 = r0
        self.feedback = feedback

    def _check_params(self) -> None:
        super()._check_params()
        check_number("alpha", self.alpha, 0.0)

    def _init_state(self, d: int) -> Any:
        return self._new_state(d, alpha=float(self.alpha))
