"""SA-OLS (`alg:sa-ols`) and the two ablations practitioners would otherwise run.

One compiled algorithm with two switches covers the three:

============================  =========================  ============================
learner                       threshold                  learns from
============================  =========================  ============================
:class:`SAOLS`                δ‖β‖ + r0 (shifted)        accepted *clean* points
:class:`ShiftedOLS`           δ‖β‖ + r0 (shifted)        every accepted point
:class:`NaiveGreedyOLS`       r0 (unaware of gaming)     every accepted point
============================  =========================  ============================

Warm-up (all three): accept everyone for d rounds (those points are clean: nobody games a rule
that accepts everyone); under bandit feedback then reject everyone for d rounds to start θ̂0.
Afterwards β = θ̂1 − θ̂0 and, under bandit feedback, every rejected point feeds θ̂0 (nobody games
to be rejected).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._jit import njit
from ..game.agents import clean_margin, reach
from ..game.policies import clean_above
from .base import Learner, LearnerKernels
from .least_squares import add_point, new_factor, solve

_ROUNDS, _N1, _N0 = 0, 1, 2


class GreedyOLSState(NamedTuple):
    agents: Any  # the agent model the learner believes in (compiled NamedTuple)
    r0: float
    bandit: bool
    shift: bool
    clean_only: bool
    counts: np.ndarray  # int64 [rounds seen, points in fit1, points in fit0]
    fit1: np.ndarray  # (d+1, d+1) QR factor of [X | r(1)] for θ̂1
    fit0: np.ndarray  # same for θ̂0 (bandit)
    theta1: np.ndarray
    theta0: np.ndarray
    work: np.ndarray  # scratch, length d + 1


@njit
def _policy(state, rng, beta):
    # Arrays are bound to locals once: each attribute access on the state costs a reference
    # count round trip, which dominated the loop when done per element.
    d = beta.shape[0]
    theta1, theta0 = state.theta1, state.theta0
    t = state.counts[_ROUNDS]
    if t < d or (state.bandit and t < 2 * d):
        for i in range(d):
            beta[i] = 0.0
        return -1.0 if t < d else 1.0  # accept-all, then (bandit) reject-all
    for i in range(d):
        beta[i] = theta1[i] - theta0[i]
    threshold = state.r0
    if state.shift:
        threshold += reach(state.agents, beta)
    return threshold


@njit
def _update(state, rng, beta, threshold, x, accepted, reward, observed):
    d = x.shape[0]
    counts = state.counts
    t = counts[_ROUNDS]
    warm = t < d or (state.bandit and t < 2 * d)
    counts[_ROUNDS] = t + 1
    if not observed:
        return False
    if accepted:
        if (not warm and state.clean_only
                and not clean_above(beta, threshold, x, clean_margin(state.agents, beta))):
            return False
        add_point(state.fit1, x, reward, state.work)
        counts[_N1] += 1
        solve(state.fit1, state.theta1)
        return True
    if state.bandit:
        add_point(state.fit0, x, reward, state.work)
        counts[_N0] += 1
        solve(state.fit0, state.theta0)
        return True
    return False


@njit
def _estimate(state, out):
    theta1, theta0 = state.theta1, state.theta0
    for i in range(out.shape[0]):
        out[i] = theta1[i] - theta0[i]
    return state.counts[_N1] > 0


_KERNELS = LearnerKernels(GreedyOLSState, _policy, _update, _estimate)


class _GreedyOLS(Learner):
    kernels = _KERNELS
    _shift: bool
    _clean_only: bool

    def __init__(self, delta: float | None = None, r0: float | None = None,
                 feedback: str | None = None, agents: Any = None) -> None:
        self.delta = delta
        self.r0 = r0
        self.feedback = feedback
        self.agents = agents

    def _init_state(self, d: int) -> Any:
        return GreedyOLSState(
            agents=self._belief(), r0=float(self.r0), bandit=self.feedback == "bandit",
            shift=self._shift, clean_only=self._clean_only,
            counts=np.zeros(3, dtype=np.int64), fit1=new_factor(d), fit0=new_factor(d),
            theta1=np.zeros(d), theta0=np.zeros(d), work=np.zeros(d + 1))


class SAOLS(_GreedyOLS):
    """Strategy-aware OLS (`alg:sa-ols`, `thm:stochastic-main-app`).

    Accepts iff ⟨θ̂, x'⟩ ≥ δ‖θ̂‖ + r0 and refits θ̂ only on accepted points strictly above that
    boundary (`cond:clean`), which lazy agents cannot have moved. Under other agent models the
    shift and the clean band follow the model (δ·sqrt(θ̂ᵀA⁻¹θ̂) for an ellipsoidal cost, a band
    of γ‖θ̂‖ above the threshold for a γ-trembling hand, `cond:clean-app`).

    Parameters
    ----------
    delta : float, optional
        The agents' budget as the learner believes it (None: the game's). Over-estimates are
        safe; under-estimates let gamed points into the data.
    r0 : float, optional
        Reward of rejecting (None: the game's).
    feedback : {"apple", "bandit"}, optional
        Feedback mode (None: the game's).
    agents : agent model, optional
        How the learner believes agents respond (None: the game's model; lazy agents when used
        without a game).

    Examples
    --------
    >>> import numpy as np
    >>> learner = SAOLS(delta=0.1, r0=0.0, feedback="apple")
    >>> learner = learner.reset(d=2, rng=np.random.default_rng(0))
    >>> rule = learner.policy()            # publish this
    >>> accepted = learner.act([0.5, 0.2])  # decide on the observed context
    >>> used = learner.update([0.5, 0.2], accepted, reward=0.3)  # outcome seen only if accepted
    """

    name = "sa-ols"
    _shift = True
    _clean_only = True


class ShiftedOLS(_GreedyOLS):
    """SA-OLS's shifted rule, but refit on every accepted point, gamed or not.

    Inconsistent when agents game (the paper's appendix on OLS inconsistency): movers land on the
    boundary, so their observed contexts are biased against their rewards.

    Examples
    --------
    >>> ShiftedOLS(delta=0.1).delta
    0.1
    """

    name = "shifted-ols"
    strategy_aware = False
    _shift = True
    _clean_only = False


class NaiveGreedyOLS(_GreedyOLS):
    """Greedy OLS unaware of gaming: accept iff ⟨θ̂, x'⟩ ≥ r0, refit on every accepted point.

    What a practitioner who ignores strategic agents would run; its strategic regret is linear.

    Examples
    --------
    >>> NaiveGreedyOLS(r0=0.0).get_params()
    {'delta': None, 'r0': 0.0, 'feedback': None, 'agents': None}
    """

    name = "naive-greedy"
    strategy_aware = False
    _shift = False
    _clean_only = False
