"""EXP3 with strategy-aware experts (`alg:UPD-ONE`, `thm:upd-one-app`), lazily weighted."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .. import theory
from .._jit import njit
from ..game.agents import reach
from ._invariants import fixed, within
from .base import Learner, LearnerKernels
from .binding import compiled_belief_of
from .lazy_experts import (
    check_experts,
    expert_point,
    experts_bytes,
    new_experts,
    sample_expert,
    scale_log_weight,
)
from .tags import LearnerTags
from .theorem import Theorem

#: The largest change of a log weight in one round. A loss over a probability near γ/|E| (|E| up
#: to 2¹⁰⁰⁰) overflows a double for outcomes far beyond λ; capped here, a log weight stays finite
#: over the longest run (10¹² rounds: 10³⁰² at most), and a weight scaled by e^(±10²⁹⁰) is 0 or
#: all the mass either way, so the cap changes no draw.
_MAX_LOG_STEP = 1e290


class Exp3SAEState(NamedTuple):
    agents: Any  # the agent model the learner believes in
    r0: float
    bound: float  # B: experts are grid points of [−B, B]^d
    lam: float  # λ: losses are 1 + λ − r
    eta: float  # η: learning rate
    gamma: float  # γ: uniform exploration
    experts: Any  # lazy_experts.ExpertsState
    played: np.ndarray  # int64 (d,): the expert committed to this round
    q_played: np.ndarray  # float64 (1,): its probability under q


@njit
def _policy(state, rng, beta):
    played = state.played
    state.q_played[0] = sample_expert(state.experts, rng, state.gamma, played)
    expert_point(state.experts, played, state.bound, beta)
    return state.r0 + reach(state.agents, beta)


@njit
def _update(state, rng, beta, threshold, x, accepted, reward, observed):
    # Under apple tasting a rejection earns the known r0: the played expert's reward is known
    # in every round. Only the played expert's weight changes (`alg:UPD-ONE`).
    r = reward if observed else state.r0
    loss = (1.0 + state.lam - r) / state.q_played[0]
    step = -state.eta * loss
    if not -_MAX_LOG_STEP <= step <= _MAX_LOG_STEP:  # (NaN too: η = 0 times an infinite loss)
        step = 0.0 if math.isnan(step) else math.copysign(_MAX_LOG_STEP, step)
    scale_log_weight(state.experts, state.played, step)
    return False


@njit
def _estimate(state, out):
    return False


def check_state(state: Exp3SAEState, template: Exp3SAEState, where: str) -> None:
    """The invariants the kernels rely on, for a state read from a saved file: the belief as
    the parameters make it, the grid's weights (:func:`.lazy_experts.check_experts`), the
    played expert a grid point and its probability in [0, 1]."""
    fixed(state.agents, template.agents, f"{where}.agents")
    check_experts(state.experts, template.experts, f"{where}.experts")
    within(state.played, f"{where}.played", 0, state.experts.n - 1)
    within(state.q_played, f"{where}.q_played", 0.0, 1.0)


KERNELS = LearnerKernels(Exp3SAEState, _policy, _update, _estimate, check=check_state)


class Exp3SAE(Learner):
    """EXP3 over a grid of shifted linear rules, for oblivious adversarial contexts.

    Experts are the points e of a grid over [−B, B]^d (bandit feedback: over θ1 − θ0). Each
    round one expert is drawn from q = (1 − γ)p + γ/|E| and the learner commits to accept iff
    ⟨e, x'⟩ ≥ δ‖e‖ + r0; the loss estimate ℓ̂ = (1 + λ − r)/q(e) updates that expert alone,
    w(e) ← w(e)·exp(−ηℓ̂). Untouched experts keep weight 1, so weights are stored only for
    touched experts (:mod:`.lazy_experts`): O(d + log T) time a round and O(min(T, |E|))
    memory, where the paper's implementation is exponential in d a round.

    **Unbounded outcomes.** Weights are kept as log weights, so any loss is representable but
    an infinite one: an outcome far beyond λ over a probability near γ/|E| overflows ηℓ̂. The
    change of a log weight in one round is capped at ±10²⁹⁰ (a weight scaled by that much is 0
    or all the mass either way), so every outcome the API accepts is learned and no draw
    changes.

    Parameters
    ----------
    horizon : int, optional
        T, which sets ε, λ, η, γ (None: the run's horizon).
    sigma : float, optional
        Reward noise σ (None: the game's).
    bound : float
        B, the half-width of the grid.
    epsilon, points_per_axis : optional
        Grid spacing or points per axis, overriding ε = (dσ log T / T)^{1/(d+2)}.
    lam, eta, gamma : float, optional
        Override λ = σ·sqrt(2 log T), η = sqrt(log|E| / (Tλ²|E|)), γ = min(1, 2ηλ|E|).
    delta, r0, feedback, agents
        As for :class:`~strategic_apple_tasting.learners.SAOLS`.

    Examples
    --------
    >>> learner = Exp3SAE(horizon=1000, sigma=0.1, delta=0.1, r0=0.0, feedback="apple")
    >>> learner.parameters(d=2).grid_size   # 12 points an axis at T = 1000
    144
    """

    name = "exp3-sae"
    # update() learns the played expert's weight with its probability (set by policy()).
    tags = LearnerTags(published_fields=("played", "q_played"),
                       theorem=Theorem("(d+1)/(d+2)", "thm:upd-one-app",
                                       lambda d: (d + 1) / (d + 2)))
    kernels = KERNELS

    def __init__(self, horizon: int | None = None, sigma: float | None = None,
                 bound: float = 1.0, epsilon: float | None = None,
                 points_per_axis: int | None = None, lam: float | None = None,
                 eta: float | None = None, gamma: float | None = None,
                 delta: float | None = None, r0: float | None = None,
                 feedback: str | None = None, agents: Any = None) -> None:
        self.horizon = horizon
        self.sigma = sigma
        self.bound = bound
        self.epsilon = epsilon
        self.points_per_axis = points_per_axis
        self.lam = lam
        self.eta = eta
        self.gamma = gamma
        self.delta = delta
        self.r0 = r0
        self.feedback = feedback
        self.agents = agents

    def parameters(self, d: int) -> theory.Exp3SAEParameters:
        """The grid and learning parameters for dimension d (theory's, with overrides)."""
        if self.horizon is None or self.sigma is None:
            raise ValueError("exp3-sae needs horizon and sigma (both taken from a simulation)")
        p = theory.exp3_sae_parameters(d, self.horizon, sigma=self.sigma, bound=self.bound,
                                       epsilon=self.epsilon,
                                       points_per_axis=self.points_per_axis)
        overrides = {k: v for k, v in (("lam", self.lam), ("eta", self.eta),
                                       ("gamma", self.gamma)) if v is not None}
        for key, value in overrides.items():
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{key} must be a finite number >= 0, got {value!r}")
        if overrides.get("gamma", 0) > 1:
            raise ValueError(f"gamma must be in [0, 1], got {overrides['gamma']!r}")
        return p.__class__(**{**p.__dict__, **overrides})

    def state_bytes(self, d: int) -> int:
        """Bytes of the expert grid's state, from its parameters (it grows with the horizon and
        exponentially in d, not as a quadratic)."""
        p = self.parameters(d)
        capacity = max(1, int(min(self.horizon, p.grid_size)))
        return experts_bytes(d, p.points_per_axis, capacity) + 64 * d

    def _init_state(self, d: int) -> Any:
        p = self.parameters(d)
        capacity = int(min(self.horizon, p.grid_size))
        return Exp3SAEState(
            agents=compiled_belief_of(self), r0=float(self.r0), bound=float(self.bound),
            lam=float(p.lam), eta=float(p.eta), gamma=float(p.gamma),
            experts=new_experts(d, p.points_per_axis, max(capacity, 1)),
            played=np.zeros(d, dtype=np.int64), q_played=np.ones(1))
