"""SA-OLS (`alg:sa-ols`) and the two ablations practitioners would otherwise run.

All three are the phased least-squares core (:mod:`.phased_ols`) with a warm-up and then a
greedy phase, with two switches:

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

from typing import Any

from .base import Learner
from .phased_ols import FOREVER, GREEDY, KEEP, KERNELS, new_state, warm_up


class _GreedyOLS(Learner):
    kernels = KERNELS
    _shift: bool
    _clean_only: bool

    def __init__(self, delta: float | None = None, r0: float | None = None,
                 feedback: str | None = None, agents: Any = None) -> None:
        self.delta = delta
        self.r0 = r0
        self.feedback = feedback
        self.agents = agents

    def _init_state(self, d: int) -> Any:
        phases = [*warm_up(d, self.feedback == "bandit"), (GREEDY, FOREVER, KEEP)]
        return new_state(d, self._belief(), self.r0, phases, shift=self._shift,
                         clean_only=self._clean_only)


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
