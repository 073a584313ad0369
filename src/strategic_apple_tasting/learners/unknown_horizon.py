"""Strategy-aware learning with an unknown horizon (`alg:unknown_T`, `thm:best-both`)."""

from __future__ import annotations

from typing import Any

from .. import theory
from .base import Learner
from .binding import belief_of, compiled_belief_of
from .etc import exploration_rounds
from .phased_ols import (
    ACCEPT,
    CLEAR,
    COMMIT,
    FOREVER,
    GREEDY,
    KEEP,
    KERNELS,
    LOAD,
    REJECT,
    new_state,
    phase_ends,
    warm_up,
)
from .tags import LearnerTags
from .theorem import Theorem


class UnknownHorizon(Learner):
    """Explore-then-commit in doubling epochs until the switching time τ*, then SA-OLS.

    Epoch i = 1, 2, … lasts τ_i = 2^i rounds and runs :class:`ExploreThenCommit` afresh with
    horizon τ_i and failure probability 1/τ_i², while τ_1 + … + τ_i < τ*; then SA-OLS runs for
    the rest (starting with its own warm-up, as the paper restarts).

    τ* is :func:`strategic_apple_tasting.theory.switching_time`: the horizon beyond which the
    explicit SA-OLS bound of `thm:stochastic-main-app` (exact c1, c2, c0 = 1) is below the ETC
    bound of `thm:etc-reg`, both at failure probability 1/T², solved numerically. The paper calls
    it g(d, δ) and never gives it; it also depends on σ (see that function for the derivation
    and for how little c0 matters).

    Parameters
    ----------
    keep_data : bool
        Keep the clean exploration data of every epoch and start SA-OLS from it, with no
        warm-up (the paper restarts from nothing).
    switching_time : float, optional
        τ* itself, overriding the derivation above (``math.inf``: explore-then-commit epochs
        for ever; 0: SA-OLS from the start).
    sigma : float, optional
        Reward noise σ in τ* and in each epoch's T0 (None: the game's).
    delta, r0, feedback, agents
        As for :class:`~strategic_apple_tasting.learners.SAOLS`.

    Examples
    --------
    >>> learner = UnknownHorizon(delta=0.1, r0=0.0, feedback="apple", sigma=0.1)
    >>> learner.epochs(d=5)[:3]
    [(2, 2), (4, 4), (8, 8)]
    """

    name = "unknown-horizon"
    # Each doubling epoch starts from no data: which outcomes are learned before a restart
    # depends on the order they arrive in.
    tags = LearnerTags(outcomes_commute=False,
                       theorem=Theorem("2/3 before τ*, 1/2 after", "thm:best-both", None,
                                       "2/3→1/2", after_switching_time=True))
    kernels = KERNELS

    def __init__(self, keep_data: bool = False, switching_time: float | None = None,
                 sigma: float | None = None, delta: float | None = None,
                 r0: float | None = None, feedback: str | None = None,
                 agents: Any = None) -> None:
        self.keep_data = keep_data
        self.switching_time = switching_time
        self.sigma = sigma
        self.delta = delta
        self.r0 = r0
        self.feedback = feedback
        self.agents = agents

    def tau_star(self, d: int) -> float:
        """The switching time τ*."""
        if self.switching_time is not None:
            tau = self.switching_time
            if not (isinstance(tau, int | float) and not isinstance(tau, bool) and tau >= 0):
                raise ValueError(f"switching_time must be a number >= 0, got {tau!r}")
            return float(tau)
        if self.sigma is None:
            raise ValueError("unknown-horizon needs sigma (or switching_time) to set τ*")
        return theory.switching_time(d, belief_of(self).delta, sigma=self.sigma)

    def epochs(self, d: int) -> list[tuple[int, int]]:
        """The explore-then-commit epochs before the switch, as (τ_i, T0_i) pairs."""
        tau_star = self.tau_star(d)
        bandit = self.feedback == "bandit"
        sigma = self.sigma
        out, total, tau = [], 0, 1
        while True:
            tau *= 2
            total += tau
            if not total < tau_star or total > FOREVER // 4:
                return out
            if sigma is None:
                raise ValueError("unknown-horizon needs sigma to set each epoch's T0 "
                                 "(only switching_time=0, SA-OLS from the start, does not)")
            # σ = 0 too: T0 is then d, and noise-free points fit θ exactly.
            t0 = exploration_rounds(d, tau, sigma, 1 / tau**2, bandit)
            out.append((tau, min(t0, tau // 2) if bandit else t0))

    def milestones(self, d: int) -> list[int]:
        """The end of every exploration and of every epoch, and the switch to SA-OLS."""
        return phase_ends(self._phases(d))

    def _init_state(self, d: int) -> Any:
        return new_state(d, compiled_belief_of(self), self.r0, self._phases(d),
                         keep=bool(self.keep_data))

    def _phases(self, d: int) -> list[tuple[int, int, int]]:
        bandit = self.feedback == "bandit"
        phases = []
        for tau, t0 in self.epochs(d):
            phases.append((ACCEPT, t0, CLEAR))
            if bandit:
                phases.append((REJECT, t0, KEEP))
            explored = 2 * t0 if bandit else t0
            if tau > explored:
                phases.append((COMMIT, tau - explored, KEEP))
        if self.keep_data and phases:
            phases.append((GREEDY, FOREVER, LOAD))
        else:
            first, *rest = warm_up(d, bandit)
            phases += [(first[0], first[1], CLEAR), *rest, (GREEDY, FOREVER, KEEP)]
        return phases


