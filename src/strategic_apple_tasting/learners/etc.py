"""Strategy-aware explore-then-commit (`alg:etc-apple`, `thm:etc-reg`)."""

from __future__ import annotations

from typing import Any

from .. import theory
from .base import Learner
from .binding import compiled_belief_of
from .phased_ols import ACCEPT, COMMIT, FOREVER, KEEP, KERNELS, REJECT, new_state, phase_ends
from .tags import LearnerTags
from .theorem import Theorem


def exploration_rounds(d: int, horizon: int, sigma: float, gamma: float, bandit: bool) -> int:
    """T0 of `thm:etc-reg` (at least d, at most T; bandit: at most T/2, explored twice)."""
    t0 = theory.etc_exploration_rounds(d, horizon, sigma=sigma, gamma=gamma)
    return max(d, min(t0, horizon // 2)) if bandit else t0


class ExploreThenCommit(Learner):
    """Explore by accepting everyone for T0 rounds, fit θ̂ by OLS, then commit to the shifted rule.

    During exploration nobody games (everyone is accepted), so every point is clean. The rule
    committed to is accept iff ⟨θ̂, x'⟩ ≥ δ‖θ̂‖ + r0 on the *observed* context (the paper's
    `alg:etc-apple` prints ⟨θ̂, x_t⟩ ≥ δ‖θ̂‖, DESIGN §3). Bandit feedback: also T0 rounds
    rejecting everyone, to fit θ̂0.

    Parameters
    ----------
    horizon : int, optional
        T, from which T0 is set (None: the run's horizon).
    exploration_rounds : int, optional
        T0 itself, overriding the theorem's
        T0 = 4·63^{1/3}·σ^{2/3}·d·T^{2/3}·log^{1/3}(4d/γ) (capped at T).
    gamma : float
        Failure probability γ in T0.
    sigma : float, optional
        Reward noise σ in T0 (None: the game's).
    delta, r0, feedback, agents
        As for :class:`~strategic_apple_tasting.learners.SAOLS`.

    Examples
    --------
    >>> learner = ExploreThenCommit(exploration_rounds=3, delta=0.1, r0=0.0, feedback="apple")
    >>> learner = learner.reset(d=2)
    >>> learner.policy().threshold   # exploring: accept everyone
    -1.0
    """

    name = "etc"
    # Exploration ends after T0 outcomes and later ones are not learned: which outcomes fall
    # before the switch depends on the order they arrive in.
    tags = LearnerTags(outcomes_commute=False,
                       theorem=Theorem("2/3", "thm:etc-reg", lambda d: 2 / 3))
    kernels = KERNELS

    def __init__(self, horizon: int | None = None, exploration_rounds: int | None = None,
                 gamma: float = 0.05, sigma: float | None = None, delta: float | None = None,
                 r0: float | None = None, feedback: str | None = None,
                 agents: Any = None) -> None:
        self.horizon = horizon
        self.exploration_rounds = exploration_rounds
        self.gamma = gamma
        self.sigma = sigma
        self.delta = delta
        self.r0 = r0
        self.feedback = feedback
        self.agents = agents

    def t0(self, d: int) -> int:
        """The number of exploration rounds (each of accept-all and, bandit, reject-all)."""
        if self.exploration_rounds is not None:
            t0 = self.exploration_rounds
            if not (isinstance(t0, int) and not isinstance(t0, bool) and t0 >= 1):
                raise ValueError(f"exploration_rounds must be an integer >= 1, got {t0!r}")
            return t0
        if self.horizon is None or self.sigma is None:
            raise ValueError("etc needs exploration_rounds, or horizon and sigma to set it "
                             "from thm:etc-reg")
        return exploration_rounds(d, self.horizon, self.sigma, self.gamma,
                                  self.feedback == "bandit")

    def _phases(self, d: int) -> list[tuple[int, int, int]]:
        t0 = self.t0(d)
        phases = [(ACCEPT, t0, KEEP)]
        if self.feedback == "bandit":
            phases.append((REJECT, t0, KEEP))
        phases.append((COMMIT, FOREVER, KEEP))
        return phases

    def milestones(self, d: int) -> list[int]:
        """The end of exploration (T0; bandit: also 2·T0)."""
        return phase_ends(self._phases(d))

    def _init_state(self, d: int) -> Any:
        return new_state(d, compiled_belief_of(self), self.r0, self._phases(d))
