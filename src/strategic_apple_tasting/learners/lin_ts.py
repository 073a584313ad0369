"""Linear Thompson sampling, unaware of gaming: commits to its sample for the round."""

from __future__ import annotations

from typing import Any

from ..game.game import check_number
from .two_arm_ridge import THOMPSON, RidgeBandit


class LinTS(RidgeBandit):
    """Linear Thompson sampling, unaware of gaming; it commits to its sample.

    Each round it draws θ̃_a ~ N(θ̂_a, v²V_a⁻¹) for each arm that has data to learn (arm 1;
    bandit: both) and publishes accept iff ⟨θ̃1 − θ̃0, x'⟩ ≥ r0, a linear threshold that agents
    answer in closed form. With v = σ (the reward noise) the sample is from the exact posterior
    under the prior θ_a ~ N(0, σ²/λ·I). It learns from every observed point, gamed or not.

    Parameters
    ----------
    scale : float
        v ≥ 0, the posterior scale (0: greedy ridge regression).
    ridge : float
        λ > 0, the ridge prior.
    r0, feedback
        As for :class:`LinUCB`.

    Examples
    --------
    >>> import numpy as np
    >>> learner = LinTS(scale=0.1, r0=0.0, feedback="apple").reset(2, np.random.default_rng(0))
    >>> rule = learner.policy()   # a sample from the prior N(0, v²/λ·I), committed to
    >>> rule.threshold, rule.beta.shape
    (0.0, (2,))
    """

    name = "lin-ts"
    _kind = THOMPSON

    def __init__(self, scale: float = 1.0, ridge: float = 1.0, r0: float | None = None,
                 feedback: str | None = None) -> None:
        self.scale = scale
        self.ridge = ridge
        self.r0 = r0
        self.feedback = feedback

    def _check_params(self) -> None:
        super()._check_params()
        check_number("scale", self.scale, 0.0)

    def _init_state(self, d: int) -> Any:
        return self._new_state(d, scale=float(self.scale))
