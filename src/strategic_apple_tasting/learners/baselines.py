"""Fixed-policy baselines: the oracle (true θ, shifted), accept-all and reject-all."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._jit import njit
from ..game.agents import REACH, compiled_agents
from ._invariants import fixed
from .base import Learner, LearnerKernels
from .binding import belief_of
from .budget import parse_estimate
from .inputs import check_vector
from .tags import LearnerTags
from .theorem import ORACLE_ASSUMPTIONS, Theorem


class FixedPolicyState(NamedTuple):
    beta: np.ndarray
    threshold: float
    has_estimate: bool


@njit
def _policy(state, rng, beta):
    for i in range(beta.shape[0]):
        beta[i] = state.beta[i]
    return state.threshold


@njit
def _update(state, rng, beta, threshold, x, accepted, reward, observed):
    return False


@njit
def _estimate(state, out):
    for i in range(out.shape[0]):
        out[i] = state.beta[i]
    return state.has_estimate


def _check_state(state: FixedPolicyState, template: FixedPolicyState, where: str) -> None:
    """A fixed policy is what its parameters make it (the kernels never change it)."""
    fixed(state.beta, template.beta, f"{where}.beta")


_KERNELS = LearnerKernels(FixedPolicyState, _policy, _update, _estimate, check=_check_state)


class Oracle(Learner):
    """Knows θ1 − θ0 and shifts by the agents' budget: accept iff ⟨β, x'⟩ ≥ δ‖β‖ + r0.

    Every agent with ⟨β, x⟩ ≥ r0 is accepted (movers land on the boundary) and no other can be,
    so its strategic regret is exactly 0 when every agent games lazily (``truthful = 0``; a
    truthful agent in the band below the shifted threshold is rejected). In a simulation θ
    comes from the game (:meth:`bind`).

    Examples
    --------
    >>> import numpy as np
    >>> oracle = Oracle(theta1=[1.0, 0.0], delta=0.1, r0=0.0, feedback="apple").reset(2)
    >>> oracle.policy().threshold
    0.1
    """

    name = "oracle"
    tags = LearnerTags(theorem=Theorem("0", "knows θ; when every agent games", lambda d: 0.0,
                                       assumptions=ORACLE_ASSUMPTIONS))
    kernels = _KERNELS

    def __init__(self, theta1: Any = None, theta0: Any = None, delta: float | None = None,
                 r0: float | None = None, feedback: str | None = None,
                 agents: Any = None) -> None:
        self.theta1 = theta1
        self.theta0 = theta0
        self.delta = delta
        self.r0 = r0
        self.feedback = feedback
        self.agents = agents

    def _check_params(self) -> None:
        # The oracle is the benchmark that knows the game, θ and δ alike. An oracle that
        # estimated δ would be another learner (θ known, δ not), and its fixed rule has no
        # state to learn into: with "estimate" it would shift by the cap forever, quietly.
        if parse_estimate(self.delta) is not None:
            raise ValueError(f"delta must be a number >= 0 for the oracle (it knows the "
                             f"game's budget: it is the benchmark, and it has no estimator), "
                             f"got {self.delta!r}")
        super()._check_params()

    def bind(self, instance: Any, horizon: int | None = None) -> Learner:
        bound = super().bind(instance, horizon)
        if bound.theta1 is None:
            bound.theta1 = instance.theta1.copy()
        if bound.theta0 is None:
            bound.theta0 = instance.theta0.copy()
        return bound

    def _init_state(self, d: int) -> Any:
        if self.theta1 is None:
            raise ValueError("theta1 must be given to Oracle (or bind it to a game instance)")
        beta = check_vector("theta1", self.theta1, d)
        if self.theta0 is not None:
            beta = beta - check_vector("theta0", self.theta0, d)
        belief = compiled_agents(belief_of(self))
        threshold = float(REACH[type(belief)](belief, np.ascontiguousarray(beta)) + self.r0)
        return FixedPolicyState(beta=beta.copy(), threshold=threshold, has_estimate=True)


class AcceptAll(Learner):
    """Accepts everyone (β = 0, threshold −1); learns nothing.

    Examples
    --------
    >>> AcceptAll().reset(2).act([0.0, 0.0])
    True
    """

    name = "accept-all"
    kernels = _KERNELS
    _threshold = -1.0

    def __init__(self, feedback: str | None = None) -> None:
        self.feedback = feedback

    def _init_state(self, d: int) -> Any:
        return FixedPolicyState(beta=np.zeros(d), threshold=self._threshold, has_estimate=False)

    def _check_params(self) -> None:
        if self.feedback is not None:
            super()._check_params()


class RejectAll(AcceptAll):
    """Rejects everyone (β = 0, threshold +1); learns nothing.

    Examples
    --------
    >>> RejectAll().reset(2).act([0.0, 0.0])
    False
    """

    name = "reject-all"
    _threshold = 1.0
