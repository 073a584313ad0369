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
from .binding import compiled_belief_of
from .phased_ols import FOREVER, GREEDY, KEEP, KERNELS, new_state, phase_ends, warm_up
from .tags import LearnerTags
from .theorem import Theorem


class _GreedyOLS(Learner, abstract=True):
    kernels = KERNELS
    _shift: bool
    _clean_only: bool
    accept_when_locked: bool = False  # SA-OLS's options, see there
    warmup: int | None = None

    def __init__(self, delta: float | None = None, r0: float | None = None,
                 feedback: str | None = None, agents: Any = None) -> None:
        self.delta = delta
        self.r0 = r0
        self.feedback = feedback
        self.agents = agents

    def _phases(self, d: int) -> list[tuple[int, int, int]]:
        rounds = d if self.warmup is None else self.warmup
        return [*warm_up(rounds, self.feedback == "bandit"), (GREEDY, FOREVER, KEEP)]

    def milestones(self, d: int) -> list[int]:
        return phase_ends(self._phases(d))

    def _init_state(self, d: int) -> Any:
        return new_state(d, compiled_belief_of(self), self.r0, self._phases(d), shift=self._shift,
                         clean_only=self._clean_only,
                         unlock=self.accept_when_locked)


class SAOLS(_GreedyOLS):
    """Strategy-aware OLS (`alg:sa-ols`, `thm:stochastic-main-app`).

    Accepts iff ⟨θ̂, x'⟩ ≥ δ‖θ̂‖ + r0 and refits θ̂ only on accepted points strictly above that
    boundary (`cond:clean`), which lazy agents cannot have moved. Under other agent models the
    shift and the clean band follow the model (δ·sqrt(θ̂ᵀA⁻¹θ̂) for an ellipsoidal cost, a band
    of γ‖θ̂‖ above the threshold for a γ-trembling hand, `cond:clean-app`).

    **Lock-in when r0 > 0.** With contexts in the unit ball, no context can be clean once
    ‖θ̂‖(1 − δ) ≤ r0: the largest score is ‖θ̂‖, below the threshold δ‖θ̂‖ + r0. θ̂ then never
    changes again, and the learner accepts only agents who game onto its boundary: linear
    regret. After the warm-up this happens with a probability the paper's analysis (through
    c1, which ignores r0) does not see: 1.7% of seeds at d = 2, δ = 0.3, σ = 0.3, r0 = 0.2
    (:func:`strategic_apple_tasting.theory.saols_no_clean_probability` predicts it; the claims
    table measures it). ``accept_when_locked=True`` removes it: in a round whose rule could
    accept no clean point (judged with R̂, the largest norm of a point fitted so far, for the
    unknown radius), the learner publishes accept-all instead, whose point is clean. Until a
    lock, it runs exactly as SA-OLS.

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
    accept_when_locked : bool
        Publish accept-all in a round whose shifted rule could accept no clean point (default
        False: the paper's algorithm).
    warmup : int, optional
        Rounds of accept-all before the first fit (None: d, the paper's warm-up; under bandit
        feedback as many of reject-all follow). A longer warm-up is what outcomes learned D
        rounds late impose (no outcome arrives before round D + 1, so the warm-up ends at
        d + D): SA-OLS with ``warmup=d + D`` and no delay is the same learner with the same
        warm-up, the comparison that leaves only the delay's staleness (the claims table's
        delay rows).

    Examples
    --------
    >>> import numpy as np
    >>> learner = SAOLS(delta=0.1, r0=0.0, feedback="apple")
    >>> learner = learner.reset(d=2, rng=np.random.default_rng(0))
    >>> rule = learner.policy()            # publish this
    >>> accepted = learner.act([0.5, 0.2])  # decide on the observed context
    >>> used = learner.update([0.5, 0.2], accepted, 0.3 if accepted else None)  # seen if accepted
    """

    name = "sa-ols"
    tags = LearnerTags(theorem=Theorem("1/2", "thm:stochastic-main-app", lambda d: 0.5),
                       check_with=({}, {"accept_when_locked": True}))
    _shift = True
    _clean_only = True

    def __init__(self, delta: float | None = None, r0: float | None = None,
                 feedback: str | None = None, agents: Any = None,
                 accept_when_locked: bool = False, warmup: int | None = None) -> None:
        super().__init__(delta=delta, r0=r0, feedback=feedback, agents=agents)
        self.accept_when_locked = accept_when_locked
        self.warmup = warmup

    def _check_params(self) -> None:
        super()._check_params()
        if not isinstance(self.accept_when_locked, bool):
            raise ValueError(f"accept_when_locked must be true or false, "
                             f"got {self.accept_when_locked!r}")
        w = self.warmup
        if w is not None and not (isinstance(w, int) and not isinstance(w, bool) and w >= 1):
            raise ValueError(f"warmup must be an integer >= 1 or None (d rounds), got {w!r}")


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
    tags = LearnerTags(strategy_aware=False)
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
    tags = LearnerTags(strategy_aware=False)
    _shift = False
    _clean_only = False
